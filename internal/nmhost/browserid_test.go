package nmhost

import "testing"

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
