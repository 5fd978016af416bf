package manifest

import (
	"strings"
	"testing"
)

func TestParseCaller(t *testing.T) {
	cases := []struct {
		args   []string
		family Family
		err    string
	}{
		{[]string{ExtensionOrigin}, Chromium, ""},
		{[]string{ExtensionOrigin, "--parent-window=0"}, Chromium, ""},
		{[]string{"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"}, "", "not fillgate's extension"},
		{[]string{"chrome-extension://" + ExtensionID}, "", "not fillgate's extension"}, // no trailing slash
		{[]string{ExtensionOrigin, "extra"}, "", "unexpected argument"},
		{[]string{"/home/u/.mozilla/native-messaging-hosts/dev.fillgate.host.json", FirefoxID}, Firefox, ""},
		{[]string{"/x/dev.fillgate.host.json", "other@example.org"}, "", "not fillgate's add-on"},
		{[]string{"fill", "--service", "x"}, "", "not started by a browser"},
		{nil, "", "not started by a browser"},
	}
	for _, c := range cases {
		got, err := ParseCaller(c.args, Listed())
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || got.Family != c.family {
			t.Errorf("%q: %+v %v", c.args, got, err)
		}
	}
	if LooksLikeHost([]string{"fill"}) || LooksLikeHost([]string{"policy", "check"}) {
		t.Error("a CLI command looks like host mode")
	}
}
