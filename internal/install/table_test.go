package install

import (
	"os"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

// TestREADMETableMatchesTheCode keeps the browser table in docs/browsers.md
// (between its browser-table markers) equal to the code's table;
// `go test ./internal/install -update` rewrites it.
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
		t.Fatalf("the browser table in %s differs from the code; run go test ./internal/install -update: it has\n%s\nthe code makes\n%s", path, doc, got)
	}
}

func TestTableIsSound(t *testing.T) {
	s := &sys{Options: Options{Env: envOf(map[string]string{
		"HOME": "/home/u", "USERPROFILE": `C:\Users\u`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`, "APPDATA": `C:\Users\u\AppData\Roaming`,
	})}}
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
				s.os, s.p = os, osPath(os)
				if len(append(append(pl.Profile, pl.Programs...), pl.Commands...)) == 0 {
					t.Errorf("%s: no profile, program or command to find it by, want a way to find it", os)
				}
				for _, tm := range append(append(append(append([]string{}, pl.User...), pl.System...), pl.Profile...), pl.Programs...) {
					p, err := s.expand(tm)
					if err != nil {
						t.Fatalf("%v: %v", tm, err)
					}
					if !s.p.isAbs(p) {
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
	s := &sys{Options: Options{Env: envOf(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"})}, os: "linux", p: "linux"}
	p, err := s.expand("$XDG_CONFIG_HOME/chromium/NativeMessagingHosts")
	if err != nil {
		t.Fatal(err)
	}
	if p != "/cfg/chromium/NativeMessagingHosts" {
		t.Errorf("p = %q, want %q", p, "/cfg/chromium/NativeMessagingHosts")
	}
	s.Env = envOf(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "relative"})
	p, err = s.expand("$XDG_CONFIG_HOME/chromium")
	if err != nil {
		t.Fatal(err)
	}
	if p != "/home/u/.config/chromium" {
		t.Errorf("a relative XDG_CONFIG_HOME is ignored, as the spec says: got %q, want %q", p, "/home/u/.config/chromium")
	}
	p, err = s.expand("/etc/opt/chrome/native-messaging-hosts")
	if err != nil {
		t.Fatal(err)
	}
	if p != "/etc/opt/chrome/native-messaging-hosts" {
		t.Errorf("p = %q, want %q", p, "/etc/opt/chrome/native-messaging-hosts")
	}
	s.Env = envOf(map[string]string{})
	_, err = s.expand("~/.mozilla")
	if err == nil || !strings.Contains(err.Error(), "set HOME") {
		t.Errorf("s.expand(\"~/.mozilla\"): error %v; want one containing %q", err, "set HOME")
	}

	w := &sys{Options: Options{Env: envOf(map[string]string{"LOCALAPPDATA": `C:\L`})}, os: "windows", p: "windows"}
	p, err = w.expand(`%LOCALAPPDATA%\Google\Chrome\User Data`)
	if err != nil {
		t.Fatal(err)
	}
	if p != `C:\L\Google\Chrome\User Data` {
		t.Errorf("p = %q, want %q", p, `C:\L\Google\Chrome\User Data`)
	}
	p, err = w.expand(`%ProgramFiles(x86)%\Microsoft\Edge\Application\msedge.exe`)
	if err != nil {
		t.Fatal(err)
	}
	if p != `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe` {
		t.Errorf("p = %q, want %q", p, `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`)
	}
	_, err = w.expand(`%APPDATA%\Mozilla`)
	if err == nil || !strings.Contains(err.Error(), "set APPDATA") {
		t.Errorf("w.expand(`%%APPDATA%%\\Mozilla`): error %v; want one containing %q", err, "set APPDATA")
	}
}
