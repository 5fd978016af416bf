package browsertable

import (
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

func TestProfile(t *testing.T) {
	for _, c := range []struct {
		family manifest.Family
		args   []string
		want   string
	}{
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium", "--no-first-run", "--user-data-dir=/home/a/work", "about:blank"}, "/home/a/work"},
		{manifest.Chromium, []string{"/opt/google/chrome/chrome"}, ""},
		{manifest.Chromium, []string{"chrome", "--user-data-dir"}, ""},
		{manifest.Chromium, nil, ""},
		// The last switch wins, as in Chromium; after "--" come URLs.
		{manifest.Chromium, []string{"chrome", "--user-data-dir=/a", "--user-data-dir=/b"}, "/b"},
		{manifest.Chromium, []string{"chrome", "--user-data-dir=/a", "--", "--user-data-dir=/b"}, "/a"},
		// Chromium's rewritten process title.
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium --no-first-run --user-data-dir=/tmp/my profile --headless=new about:blank"}, "/tmp/my profile"},
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium --user-data-dir=/tmp/p"}, "/tmp/p"},
		{manifest.Chromium, []string{"/usr/lib/chromium/chromium --no-first-run"}, ""},
		{manifest.Firefox, []string{"/usr/lib/firefox-esr/firefox-esr", "-profile", "/tmp/p", "-no-remote"}, "/tmp/p"},
		{manifest.Firefox, []string{"firefox", "--profile=/tmp/q"}, "/tmp/q"},
		{manifest.Firefox, []string{"firefox", "-P", "work"}, "work"},
		{manifest.Firefox, []string{"firefox", "-P", "work", "-profile", "/tmp/p"}, "/tmp/p"},
		{manifest.Firefox, []string{"firefox", "-P"}, ""},
		{manifest.Firefox, []string{"firefox", "--user-data-dir=/x"}, ""},
	} {
		if got := ReadCommandLine(c.family, c.args).ProfileID(); got != c.want {
			t.Errorf("ReadCommandLine(%s, %q).ProfileID() = %q, want %q", c.family, c.args, got, c.want)
		}
	}
}
