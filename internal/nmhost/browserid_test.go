package nmhost

import (
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

func TestProfileArg(t *testing.T) {
	for _, c := range []struct {
		family manifest.Family
		args   []string
		want   string
	}{
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium", "--no-first-run", "--user-data-dir=/home/a/work", "about:blank"}, "/home/a/work"},
		{manifest.Chromium, []string{"/opt/google/chrome/chrome"}, ""},
		{manifest.Chromium, []string{"chrome", "--user-data-dir"}, ""},
		{manifest.Firefox, []string{"/usr/lib/firefox-esr/firefox-esr", "-profile", "/tmp/p", "-no-remote"}, "/tmp/p"},
		{manifest.Firefox, []string{"firefox", "-P", "work"}, "work"},
		{manifest.Firefox, []string{"firefox", "-P"}, ""},
		{manifest.Firefox, []string{"firefox", "--user-data-dir=/x"}, ""},
		{manifest.Chromium, nil, ""},
		// Chromium's rewritten process title.
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium --no-first-run --user-data-dir=/tmp/my profile --headless=new about:blank"}, "/tmp/my profile"},
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium --user-data-dir=/tmp/p"}, "/tmp/p"},
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium --no-first-run"}, ""},
	} {
		if got := profileArg(c.family, c.args); got != c.want {
			t.Errorf("profileArg(%s, %q) = %q, want %q", c.family, c.args, got, c.want)
		}
	}
}

func TestBrowserName(t *testing.T) {
	for exe, want := range map[string]string{
		"/usr/lib/chromium/chromium": "chromium", "/opt/brave.com/brave/brave": "brave",
		`C:\Program Files\Microsoft\Edge\Application\msedge.exe`: "edge", "/usr/lib/firefox-esr/firefox-esr": "firefox",
		"/opt/vivaldi/vivaldi-bin": "vivaldi", "/usr/bin/something": "something",
	} {
		if got := browserName(exe); got != want {
			t.Errorf("browserName(%q) = %q, want %q", exe, got, want)
		}
	}
}
