package dnsname

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct{ in, why string }{
		{"example.com", ""},
		{"a-b.c0.example", ""},
		{"xn--bcher-kva.example", ""},
		{"localhost", ""},
		{strings.Repeat("a", 63) + ".com", ""},
		{"0x1g.com", ""}, // not hex: a name
		{"example.com.", "trailing dot"},
		{".example.com", "empty label"},
		{"example..com", "empty label"},
		{strings.Repeat("a", 64) + ".com", "63"},
		{"Example.com", "upper case"},
		{"bücher.example", "punycode"},
		{"git_hub.com", "letters, digits and hyphens"},
		{"-github.com", "hyphen"},
		{"github-.com", "hyphen"},
		{"127.0.0.1", "IPv4"},
		{"example.1", "IPv4"},
		{"example.0x7f", "IPv4"},
		{"0x", "IPv4"},
	} {
		err := Check(c.in)
		switch {
		case c.why == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", c.in, err)
		case c.why != "" && (err == nil || !strings.Contains(err.Error(), c.why)):
			t.Errorf("Check(%q) = %v, want an error that says %q", c.in, err, c.why)
		}
	}
}
