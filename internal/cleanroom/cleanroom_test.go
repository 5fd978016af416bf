package cleanroom

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/websession"
)

// TestProfiles: a room's profile is a 0700 directory of its own, held by
// its lock while the room lives; the next room sweeps only the profiles
// whose lock nobody holds, and done removes the profile and its lock.
func TestProfiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rooms")
	live, doneLive, err := newProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(live); err != nil || !st.IsDir() || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o700) {
		t.Fatalf("profile %v, %v; want a 0700 directory", st, err)
	}
	if st, err := os.Stat(dir); err != nil || (runtime.GOOS != "windows" && st.Mode().Perm() != 0o700) {
		t.Fatalf("rooms directory %v, %v; want 0700", st, err)
	}
	// A profile whose owner died: its lock file is there, and free.
	dead := filepath.Join(dir, "room-dead")
	if err := os.MkdirAll(filepath.Join(dead, "Default"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dead+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// Something else in the directory is left alone.
	other := filepath.Join(dir, "not-a-room")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	second, doneSecond, err := newProfile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead room's profile was not swept: %v", err)
	}
	if _, err := os.Stat(dead + ".lock"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead room's lock was not swept: %v", err)
	}
	for _, keep := range []string{live, live + ".lock", second, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was swept: %v", filepath.Base(keep), err)
		}
	}
	doneLive()
	doneSecond()
	for _, gone := range []string{live, live + ".lock", second, second + ".lock"} {
		if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left after done: %v", filepath.Base(gone), err)
		}
	}
}

func TestBoundSites(t *testing.T) {
	for origin, want := range map[string]bool{
		"https://accounts.google.com": true,
		"https://google.com":          true,
		"https://www.youtube.com":     true,
		"https://github.com":          false,
		"https://notgoogle.com":       false,
		"https://google.com.evil.dev": false,
		"http://127.0.0.1:8080":       false,
	} {
		if _, got := boundSite(origin); got != want {
			t.Errorf("boundSite(%q) = %v, want %v", origin, got, want)
		}
	}
	if !bindsSession(map[string]any{"Secure-Session-Registration": `(ES256);path="/r"`}) ||
		!bindsSession(map[string]any{"secure-session-registration": "x"}) || bindsSession(map[string]any{"Set-Cookie": "a=b"}) {
		t.Error("bindsSession does not tell the registration header")
	}
}

func TestIsChromium(t *testing.T) {
	for exe, want := range map[string]bool{
		"/usr/lib/chromium/chromium":       true,
		"/opt/google/chrome/chrome":        true,
		"/usr/bin/brave-browser":           true,
		`C:\Program Files\msedge.exe`:      true,
		"/opt/vivaldi/vivaldi-bin":         true,
		"/usr/lib/firefox-esr/firefox-esr": false,
		"/usr/bin/curl":                    false,
	} {
		if got := isChromium(exe); got != want {
			t.Errorf("isChromium(%q) = %v, want %v", exe, got, want)
		}
	}
}

// TestEnviron: the room's browser gets HOME, the locale and the temporary
// directory, never what could load code into it or change its flags.
func TestEnviron(t *testing.T) {
	t.Setenv("LD_PRELOAD", "/tmp/evil.so")
	t.Setenv("CHROME_DEVEL_SANDBOX", "/tmp/x")
	t.Setenv("HOME", "/home/ada")
	t.Setenv("LC_ALL", "C.UTF-8")
	env := strings.Join(environ(), "\n")
	for _, bad := range []string{"LD_PRELOAD=", "CHROME_DEVEL_SANDBOX=", "DISPLAY="} {
		if strings.Contains(env, bad) {
			t.Errorf("the room's environment has %s", bad)
		}
	}
	for _, good := range []string{"HOME=/home/ada", "LC_ALL=C.UTF-8", "PATH="} {
		if !strings.Contains(env, good) {
			t.Errorf("the room's environment lacks %s", good)
		}
	}
}

// fakeDriven is a driven browser whose tab says what the test wants.
type fakeDriven struct{ tab websession.Tab }

func (f fakeDriven) Tab(context.Context, fill.Inspection) (websession.Tab, error) { return f.tab, nil }
func (fakeDriven) SiteCookies(context.Context, fill.Inspection, string) ([]websession.Cookie, error) {
	return nil, nil
}
func (fakeDriven) HandOver(context.Context, fill.Inspection, websession.Session) (websession.Shown, error) {
	return websession.Shown{}, nil
}

// TestRefusedBeforeAnyRoom: what a clean room cannot do is refused, with
// the fix, before a browser starts.
func TestRefusedBeforeAnyRoom(t *testing.T) {
	in := func(origins ...string) fill.Inspection {
		return fill.Inspection{Origins: origins, Field: fill.FieldInfo{Kind: fill.FieldPassword}}
	}
	for _, c := range []struct {
		name   string
		in     fill.Inspection
		tab    websession.Tab
		exe    string
		detail string
	}{
		{"a frame", in("https://login.example.com", "https://portal.example.net"), websession.Tab{URL: "https://portal.example.net/"}, "",
			"the login field is in a frame"},
		{"a bound site", in("https://accounts.google.com"), websession.Tab{URL: "https://accounts.google.com/"}, "",
			"binds its sessions to the browser"},
		{"Firefox", in("https://example.com"), websession.Tab{URL: "https://example.com/login", Family: "firefox"}, "",
			"the agent's browser is Firefox"},
		{"the tab moved on", in("https://example.com"), websession.Tab{URL: "https://other.example/"}, "",
			"shows another page than the one inspected"},
		{"the policy's browser is missing", in("https://example.com"), websession.Tab{URL: "https://example.com/login"}, filepath.Join(t.TempDir(), "none", "chrome"),
			"clean_room_browser, "},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := New(Config{Driven: fakeDriven{tab: c.tab}, Dir: filepath.Join(t.TempDir(), "rooms"), Browser: c.exe})
			room, _, err := rs.Open(context.Background(), fill.Request{Service: "example.com", Field: fill.FieldPassword}, c.in)
			if room != nil {
				room.Close()
			}
			var st interface{ Status() fill.Status }
			if err == nil || !errors.As(err, &st) || st.Status() != fill.StatusRefused || !strings.Contains(err.Error(), c.detail) {
				t.Fatalf("Open = %v; want refused saying %q", err, c.detail)
			}
			if c.name != "the tab moved on" && !strings.Contains(err.Error(), `driven = "in-page"`) {
				t.Errorf("the refusal does not name the fix: %v", err)
			}
			if entries, _ := os.ReadDir(rs.cfg.Dir); len(entries) != 0 {
				t.Errorf("a refusal left %d entries in the rooms' directory", len(entries))
			}
		})
	}
}
