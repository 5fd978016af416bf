package browsertable

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

var update = flag.Bool("update", false, "rewrite the browser table in docs/browsers.md")

// TestREADMETableMatchesTheCode keeps the browser table in docs/browsers.md
// (between its browser-table markers) equal to the code's table;
// `go test ./internal/browsertable -update` rewrites it.
func TestREADMETableMatchesTheCode(t *testing.T) {
	const path = "../../docs/browsers.md"
	const begin, end = "<!-- browser-table:begin -->\n", "<!-- browser-table:end -->"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j <= i {
		t.Fatalf("%s lacks the browser-table markers", path)
	}
	got := MarkdownTable()
	if *update {
		s = s[:i+len(begin)] + got + s[j:]
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if doc := s[i+len(begin) : j]; doc != got {
		t.Fatalf("the browser table in %s differs from the code; run go test ./internal/browsertable -update: it has\n%s\nthe code makes\n%s", path, doc, got)
	}
}

func TestTableIsSound(t *testing.T) {
	env := envOf(map[string]string{
		"HOME": "/home/u", "USERPROFILE": `C:\Users\u`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`, "APPDATA": `C:\Users\u\AppData\Roaming`,
	})
	seen := map[string]bool{}
	for _, b := range Table() {
		t.Run(b.Name, func(t *testing.T) {
			if seen[b.Name] {
				t.Errorf("the name %s is not unique", b.Name)
			}
			seen[b.Name] = true
			if len(b.Title) == 0 {
				t.Errorf("no title, want one")
			}
			if b.Family != manifest.Chromium && b.Family != manifest.Firefox {
				t.Errorf("family %q, want %q or %q", b.Family, manifest.Chromium, manifest.Firefox)
			}
			wantOS := []string{"linux", "darwin", "windows"}
			if b.Name == "arc" {
				wantOS = []string{"darwin"}
			}
			if len(b.OS) != len(wantOS) {
				t.Errorf("it is on %d OSes (%v), want %d (%v)", len(b.OS), b.OS, len(wantOS), wantOS)
			}
			for _, os := range wantOS {
				pl, ok := b.OS[os]
				if !ok {
					t.Fatalf("%s: not in the table, want it there", os)
				}
				v := Vars{OS: os, Env: env, Family: b.Family}
				if len(append(append(pl.Profile, pl.Programs...), pl.Commands...)) == 0 {
					t.Errorf("%s: no profile, program or command to find it by, want a way to find it", os)
				}
				for _, tm := range append(append(append(append([]string{}, pl.User...), pl.System...), pl.Profile...), pl.Programs...) {
					p, err := Expand(tm, v)
					if err != nil {
						t.Fatalf("%v: %v", tm, err)
					}
					if !Path(os).IsAbs(p) {
						t.Errorf("%s expands to an absolute path, not %s", tm, p)
					}
				}
				if os == "windows" {
					if len(pl.Keys) == 0 {
						t.Errorf("windows: no registry keys, want some")
					}
					for _, k := range pl.Keys {
						if !strings.HasPrefix(k, `Software\`) || !strings.HasSuffix(k, `\NativeMessagingHosts`) {
							t.Errorf("registry key %s, want Software\\…\\NativeMessagingHosts", k)
						}
						if b.Family == manifest.Firefox {
							if k != mozillaKey {
								t.Errorf("Firefox and its forks read Mozilla's key: got %v, want %v", k, mozillaKey)
							}
						}
					}
					continue
				}
				if len(pl.User) == 0 {
					t.Fatalf("%s: no user folders, want some", os)
				}
				slug := "NativeMessagingHosts"
				if os == "linux" && b.Family == manifest.Firefox {
					slug = "native-messaging-hosts"
				}
				for _, u := range pl.User {
					if !strings.HasSuffix(u, "/"+slug) {
						t.Errorf("user folder %s, want it to end in /%s", u, slug)
					}
				}
				for _, sd := range append(append([]string{}, pl.System...), pl.SystemIfParent...) {
					if !strings.HasPrefix(sd, "/") {
						t.Errorf("system folder %s, want an absolute path", sd)
					}
					if os == "linux" {
						if !strings.HasSuffix(sd, "/native-messaging-hosts") {
							t.Errorf("system folder %s, want it to end in /native-messaging-hosts", sd)
						}
					} else {
						if !strings.HasSuffix(sd, "/NativeMessagingHosts") {
							t.Errorf("system folder %s, want it to end in /NativeMessagingHosts", sd)
						}
					}
				}
			}
		})
	}
	if got := Lookup("chrome-unstable").Name; got != "chrome-dev" {
		t.Errorf("Lookup(\"chrome-unstable\").Name = %q, want %q", got, "chrome-dev")
	}
	if got := Lookup("firefox-esr").Name; got != "firefox" {
		t.Errorf("Lookup(\"firefox-esr\").Name = %q, want %q", got, "firefox")
	}
	if b := Lookup("safari"); b != nil {
		t.Errorf("Lookup(\"safari\") = %+v, want nil", b)
	}
	b := Lookup("chrome")
	b.Title = "changed"
	if got := Lookup("chrome").Title; got != "Google Chrome" {
		t.Errorf("Lookup returns a copy: got %q, want %q", got, "Google Chrome")
	}
}

func TestExpand(t *testing.T) {
	linux := func(env map[string]string, f manifest.Family) Vars {
		return Vars{OS: "linux", Env: envOf(env), Family: f}
	}
	windows := Vars{OS: "windows", Env: envOf(map[string]string{"LOCALAPPDATA": `C:\L`})}
	for _, c := range []struct {
		tmpl string
		v    Vars
		want string
	}{
		{"$XDG_CONFIG_HOME/chromium/NativeMessagingHosts", linux(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"}, manifest.Chromium), "/cfg/chromium/NativeMessagingHosts"},
		// A relative XDG_CONFIG_HOME is ignored, as the spec says.
		{"$XDG_CONFIG_HOME/chromium", linux(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "relative"}, manifest.Chromium), "/home/u/.config/chromium"},
		// Chromium reads CHROME_CONFIG_HOME first; Firefox and fillgate do not.
		{"$XDG_CONFIG_HOME/chromium/NativeMessagingHosts", linux(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg", "CHROME_CONFIG_HOME": "/cc"}, manifest.Chromium), "/cc/chromium/NativeMessagingHosts"},
		{"$XDG_CONFIG_HOME/chromium", linux(map[string]string{"HOME": "/home/u", "CHROME_CONFIG_HOME": "rel"}, manifest.Chromium), "/home/u/.config/chromium"},
		{"$XDG_CONFIG_HOME/x", linux(map[string]string{"HOME": "/home/u", "CHROME_CONFIG_HOME": "/cc"}, manifest.Firefox), "/home/u/.config/x"},
		{"$XDG_CONFIG_HOME/x", linux(map[string]string{"HOME": "/home/u", "CHROME_CONFIG_HOME": "/cc"}, ""), "/home/u/.config/x"},
		{"/etc/opt/chrome/native-messaging-hosts", linux(nil, manifest.Chromium), "/etc/opt/chrome/native-messaging-hosts"},
		{`%LOCALAPPDATA%\Google\Chrome\User Data`, windows, `C:\L\Google\Chrome\User Data`},
		{`%ProgramFiles(x86)%\Microsoft\Edge\Application\msedge.exe`, windows, `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`},
		// Native: a path of the machine this runs on, whatever column
		// the template is from (drivable reads the files here).
		{`%LOCALAPPDATA%\Microsoft\Edge\User Data`, Vars{OS: "windows", Env: envOf(map[string]string{"LOCALAPPDATA": native("/l")}), Native: true},
			filepath.Join(native("/l"), "Microsoft", "Edge", "User Data")},
	} {
		got, err := Expand(c.tmpl, c.v)
		if err != nil || got != c.want {
			t.Errorf("Expand(%q) in %v = %q, %v; want %q", c.tmpl, c.v.OS, got, err, c.want)
		}
	}
	for _, c := range []struct {
		tmpl string
		v    Vars
		want string
	}{
		{"~/.mozilla", linux(nil, manifest.Firefox), "set HOME"},
		{`%APPDATA%\Mozilla`, windows, "set APPDATA"},
		{"mozilla", linux(map[string]string{"HOME": "/home/u"}, ""), "bad path template"},
	} {
		if _, err := Expand(c.tmpl, c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Expand(%q): error %v; want one containing %q", c.tmpl, err, c.want)
		}
	}
}

// native is an absolute path of this machine's.
func native(p string) string {
	if runtime.GOOS == "windows" {
		return `C:` + filepath.FromSlash(p)
	}
	return p
}

// envOf reads the environment from m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}
