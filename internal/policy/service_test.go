package policy

import (
	"strings"
	"testing"
)

func TestNormalizeService(t *testing.T) {
	long63 := strings.Repeat("a", 63)
	valid := []struct{ in, want string }{
		{"github.com", "github.com"},
		{"GitHub.COM", "github.com"},
		{"gist.github.com", "gist.github.com"},
		{"user.github.io", "user.github.io"},
		{"example.co.uk", "example.co.uk"},
		{"www.ck", "www.ck"}, // an exception to the *.ck wildcard rule
		{"amazonaws.com", "amazonaws.com"},
		{"foo.test", "foo.test"},
		{"bank.example", "bank.example"},
		{"a-b.example.com", "a-b.example.com"},
		{"xn--bcher-kva.de", "xn--bcher-kva.de"},
		{"123.example.com", "123.example.com"},
		{long63 + ".com", long63 + ".com"},
		{"localhost", "localhost"},
		{"LocalHost", "localhost"},
		{"app.localhost", "app.localhost"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.2", "127.0.0.2"},
		{"::1", "::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		{"192.168.1.1", "192.168.1.1"},
		{"2001:DB8::1", "2001:db8::1"},
		// Ports.
		{"nas.lan:8443", "nas.lan:8443"},
		{"NAS.lan:8443", "nas.lan:8443"},
		{"192.168.1.1:8443", "192.168.1.1:8443"},
		{"[2001:DB8::1]:8443", "[2001:db8::1]:8443"},
		{"[0:0:0:0:0:0:0:1]:80", "[::1]:80"},
		{"localhost:3000", "localhost:3000"},
		{"localhost:443", "localhost:443"},
		{"127.0.0.1:65535", "127.0.0.1:65535"},
		{"github.com:80", "github.com:80"},
		{"a.example.com:1", "a.example.com:1"},
	}
	for _, c := range valid {
		got, err := NormalizeService(c.in)
		if err != nil || got != c.want {
			t.Errorf("NormalizeService(%q) = %q, %v; want %q, nil", c.in, got, err, c.want)
		}
		if err := ValidService(c.in); err != nil {
			t.Errorf("ValidService(%q) = %v; want nil", c.in, err)
		}
	}

	invalid := []struct{ in, hint string }{
		{"", "empty"},
		// Bare public suffixes, listed and by the default rule.
		{"com", "public suffix"},
		{"COM", "public suffix"},
		{"co.uk", "public suffix"},
		{"github.io", "public suffix"},
		{"blogspot.com", "public suffix"},
		{"s3.amazonaws.com", "public suffix"},
		{"foo.ck", "public suffix"}, // *.ck
		{"test", "public suffix"},
		{"intranet", "public suffix"},
		// URL parts.
		{"https://github.com", "without a scheme"},
		{"github.com/login", "without a path"},
		{"github.com?x=1", "without a path"},
		{"github.com#x", "without a path"},
		{`github.com\x`, "without a path"},
		{"github.com:443", "443 is the default https port; write the host alone, github.com"},
		{"192.168.1.1:443", "default https port"},
		{"github.com:", "bad port"},
		{"github.com:0", "bad port"},
		{"github.com:65536", "bad port"},
		{"github.com:08443", "bad port"},
		{"github.com:+1", "bad port"},
		{"github.com:http", "bad port"},
		{":8443", "empty"},
		{"com:8443", "public suffix"},
		{"[::1]:", "bad port"},
		{"[::1]x", "in brackets with a port"},
		{"[127.0.0.1]:80", "in brackets with a port"},
		{"github.com:8443:1", "not a valid IP"},
		{"https://nas.lan:8443", "without a scheme"},
		{"nas.lan:8443/login", "without a path"},
		{"user@nas.lan:8443", "user info"},
		{"user@github.com", "user info"},
		{"github.com@evil.test", "user info"},
		{"*.github.com", "wildcard"},
		{"*", "wildcard"},
		// Name syntax.
		{"github.com.", "trailing dot"},
		{"localhost.", "trailing dot"},
		{".github.com", "empty label"},
		{"github..com", "empty label"},
		{"-github.com", "hyphen"},
		{"github-.com", "hyphen"},
		{"git_hub.com", "letters, digits and hyphens"},
		{"github .com", "space"},
		{"github.com\n", "control"},
		{long63 + "a.com", "63"},
		{strings.Repeat("a.", 127) + "com", "longer than 253"},
		{"bücher.de", "punycode"},
		{"gіthub.com", "punycode"}, // Cyrillic і
		{"ｇｉｔｈｕｂ.com", "punycode"},
		// Names browsers read as IPv4, and bad IP literals.
		{"127.1", "not a valid IP"},
		{"127.000.0.1", "not a valid IP"},
		{"1.2.3.4.5", "not a valid IP"},
		{"0x7f.0.0.1", "IPv4"},
		{"example.0x10", "IPv4"},
		{"example.123", "IPv4"},
		{"[::1]", "without brackets"},
		{"::ffff:127.0.0.1", "plain IPv4: 127.0.0.1"},
		{"fe80::1%eth0", "zone"},
		{"0.0.0.0", "one host"},
		{"::", "one host"},
		{"224.0.0.1", "one host"},
		{"255.255.255.255", "one host"},
		{"1:2:3", "not a valid IP"},
	}
	for _, c := range invalid {
		got, err := NormalizeService(c.in)
		if err == nil {
			t.Errorf("NormalizeService(%q) = %q, nil; want an error", c.in, got)
			continue
		}
		if !strings.Contains(err.Error(), c.hint) {
			t.Errorf("NormalizeService(%q) error %q does not say %q", c.in, err, c.hint)
		}
		if ValidService(c.in) == nil {
			t.Errorf("ValidService(%q) = nil; want an error", c.in)
		}
	}
}

func TestQuoteCutsLongInput(t *testing.T) {
	_, err := NormalizeService("https://" + strings.Repeat("x", 500))
	if err == nil || len(err.Error()) > 300 {
		t.Fatalf("error for a long service is missing or too long: %d bytes", len(err.Error()))
	}
}
