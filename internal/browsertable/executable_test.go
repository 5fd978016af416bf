package browsertable

import (
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

// TestEveryProgramNamesItsBrowser holds that the executable of every
// program and command in the table is taken for a browser of its family,
// and for that browser itself unless an earlier row has an executable of
// the same name (Google Chrome's "chrome" before its Beta's).
func TestEveryProgramNamesItsBrowser(t *testing.T) {
	for _, b := range Table() {
		for col, pl := range b.OS {
			for _, p := range append(append([]string{}, pl.Programs...), pl.Commands...) {
				exe := p
				if col == "darwin" {
					// A bundle's executable is named as the bundle.
					exe = p + "/Contents/MacOS/" + executableName(p)
				}
				if !OfFamily(b.Family, exe) {
					t.Errorf("%s (%s, %s): OfFamily(%s, %q) = false, want true", b.Name, col, p, b.Family, exe)
				}
				other := manifest.Firefox
				if b.Family == manifest.Firefox {
					other = manifest.Chromium
				}
				if OfFamily(other, exe) {
					t.Errorf("%s (%s, %s): OfFamily(%s, %q) = true, want false", b.Name, col, p, other, exe)
				}
				got := ByExecutable(exe)
				if got == nil {
					t.Errorf("%s (%s): ByExecutable(%q) = nil, want a browser", b.Name, col, exe)
					continue
				}
				if got.Name != b.Name && (index(got.Name) > index(b.Name) || got.Family != b.Family) {
					t.Errorf("%s (%s): ByExecutable(%q) = %s, want %s or an earlier row of its family", b.Name, col, exe, got.Name, b.Name)
				}
			}
		}
	}
}

func TestName(t *testing.T) {
	for exe, want := range map[string]string{
		"/usr/lib/chromium/chromium":                                             "chromium",
		"/opt/brave.com/brave/brave":                                             "brave",
		`C:\Program Files\Microsoft\Edge\Application\msedge.exe`:                 "edge",
		"/usr/lib/firefox-esr/firefox-esr":                                       "firefox",
		"/opt/vivaldi/vivaldi-bin":                                               "vivaldi",
		"/opt/google/chrome/chrome":                                              "chrome",
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome":           "chrome",
		"/Applications/Google Chrome Beta.app/Contents/MacOS/Google Chrome Beta": "chrome-beta",
		"/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge":         "edge",
		"/Applications/Brave Browser.app/Contents/MacOS/Brave Browser":           "brave",
		"/Applications/Arc.app/Contents/MacOS/Arc":                               "arc",
		"/Applications/Firefox.app/Contents/MacOS/firefox":                       "firefox",
		"/usr/bin/something":                                                     "something",
	} {
		if got := Name(exe); got != want {
			t.Errorf("Name(%q) = %q, want %q", exe, got, want)
		}
	}
}

func TestOfFamily(t *testing.T) {
	for _, c := range []struct {
		family manifest.Family
		exe    string
		want   bool
	}{
		{manifest.Chromium, "/usr/lib/chromium/chromium", true},
		{manifest.Chromium, "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", true},
		{manifest.Chromium, "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge", true},
		{manifest.Chromium, "/usr/bin/thorium-browser", true},
		{manifest.Chromium, "/usr/bin/google-chrome-stable", true},
		{manifest.Chromium, "/usr/bin/brave-browser-nightly", true},
		{manifest.Chromium, "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary", true},
		{manifest.Chromium, "/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing", true},
		{manifest.Chromium, "/opt/yandex/browser/yandex_browser", true},
		// Not a browser: a name that only begins like one, a helper.
		{manifest.Chromium, "/home/u/bin/arcade", false},
		{manifest.Chromium, "/usr/bin/arch", false},
		{manifest.Chromium, "/opt/google/chrome/chrome_crashpad_handler", false},
		{manifest.Chromium, "/Applications/Google Chrome.app/Contents/Frameworks/Google Chrome Framework.framework/Helpers/Google Chrome Helper", false},
		{manifest.Chromium, "/usr/bin/chromedriver", false},
		{manifest.Firefox, "/usr/bin/zenity", false},
		{manifest.Chromium, `C:\Windows\System32\cmd.exe`, false},
		{manifest.Chromium, "/usr/libexec/xdg-desktop-portal", false},
		{manifest.Chromium, "/usr/lib/firefox/firefox", false},
		{manifest.Chromium, "", false},
		{manifest.Firefox, "/usr/lib/firefox-esr/firefox-esr", true},
		{manifest.Firefox, "/usr/bin/floorp", true},
		{manifest.Firefox, "/usr/lib/chromium/chromium", false},
	} {
		if got := OfFamily(c.family, c.exe); got != c.want {
			t.Errorf("OfFamily(%s, %q) = %v, want %v", c.family, c.exe, got, c.want)
		}
	}
}

// index is the row of the table named name.
func index(name string) int {
	for i, b := range Table() {
		if b.Name == name {
			return i
		}
	}
	return -1
}
