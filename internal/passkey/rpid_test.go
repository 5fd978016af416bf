package passkey_test

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/passkey"
)

func TestParseOrigin(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string // "" when refused
		why  string // part of the refusal
	}{
		{in: "https://example.com", host: "example.com"},
		{in: "https://login.example.co.uk:8443", host: "login.example.co.uk"},
		{in: "https://xn--bcher-kva.example", host: "xn--bcher-kva.example"},
		{in: "http://localhost:8080", host: "localhost"},
		{in: "http://localhost", host: "localhost"},
		{in: "http://app.localhost:3000", host: "app.localhost"},
		{in: "https://localhost", host: "localhost"},
		{in: "https://r3---sn-abc.example", host: "r3---sn-abc.example"},

		{in: "http://example.com", why: "plain http"},
		{in: "http://127.0.0.1:8080", why: "IP address"},
		{in: "https://127.0.0.1", why: "IP address"},
		{in: "https://[::1]", why: "IPv6"},
		{in: "https://[::1]:8443", why: "IPv6"},
		{in: "https://0x7f.1", why: "IPv4"},
		{in: "https://example.123", why: "IPv4"},
		{in: "https://EXAMPLE.com", why: "upper case"},
		{in: "HTTPS://example.com", why: "not a web page"},
		{in: "https://example.com.", why: "ends in a dot"},
		{in: "https://example.com/", why: "path"},
		{in: "https://example.com/login", why: "path"},
		{in: "https://user@example.com", why: "user info"},
		{in: "https://example.com:443", why: "default port"},
		{in: "http://localhost:80", why: "default port"},
		{in: "https://example.com:0443", why: "bad port"},
		{in: "https://example.com:", why: "bad port"},
		{in: "https://example.com:65536", why: "bad port"},
		{in: "https://bücher.example", why: "punycode"},
		{in: "https://exa_mple.com", why: "letters, digits and hyphens"},
		{in: "https://-example.com", why: "hyphen"},
		{in: "https://example..com", why: "empty label"},
		{in: "https://.example.com", why: "empty label"},
		{in: "https://" + strings.Repeat("a", 64) + ".com", why: "63"},
		{in: "https://", why: "no host"},
		{in: "null", why: "not an origin"},
		{in: "chrome-extension://abcdefghijklmnop", why: "not a web page"},
		{in: "file://", why: "not a web page"},
		{in: "", why: "not an origin"},
	} {
		o, err := passkey.ParseOrigin(tc.in)
		switch {
		case tc.host != "" && err != nil:
			t.Errorf("ParseOrigin(%q): %v", tc.in, err)
		case tc.host != "" && (o.Host() != tc.host || o.String() != tc.in):
			t.Errorf("ParseOrigin(%q) = host %q, origin %q", tc.in, o.Host(), o.String())
		case tc.host == "" && err == nil:
			t.Errorf("ParseOrigin(%q) accepted; want refused (%s)", tc.in, tc.why)
		case tc.host == "" && !strings.Contains(err.Error(), tc.why):
			t.Errorf("ParseOrigin(%q) = %v; want the reason to say %q", tc.in, err, tc.why)
		}
	}
}

func TestCheckRPID(t *testing.T) {
	for _, tc := range []struct {
		origin, requested string
		want              string // "" when refused
		why               string // part of the refusal
	}{
		// The host itself, by default or by name, and registrable parents.
		{origin: "https://example.com", requested: "", want: "example.com"},
		{origin: "https://example.com", requested: "example.com", want: "example.com"},
		{origin: "https://login.example.com", requested: "example.com", want: "example.com"},
		{origin: "https://a.b.login.example.com", requested: "login.example.com", want: "login.example.com"},
		{origin: "https://login.example.com", requested: "login.example.com", want: "login.example.com"},
		{origin: "https://example.com:8443", requested: "example.com", want: "example.com"},
		{origin: "https://login.example.co.uk", requested: "example.co.uk", want: "example.co.uk"},
		{origin: "https://alice.github.io", requested: "alice.github.io", want: "alice.github.io"},
		{origin: "https://a.b.test", requested: "b.test", want: "b.test"},
		{origin: "https://www.ck", requested: "www.ck", want: "www.ck"},                               // an exception rule (!www.ck)
		{origin: "https://city.kawasaki.jp", requested: "city.kawasaki.jp", want: "city.kawasaki.jp"}, // !city.kawasaki.jp
		// HTML lets a host claim itself even where it is a public suffix.
		{origin: "https://github.io", requested: "", want: "github.io"},

		// localhost on http, as browsers allow it.
		{origin: "http://localhost:8080", requested: "", want: "localhost"},
		{origin: "http://localhost:8080", requested: "localhost", want: "localhost"},
		{origin: "https://localhost", requested: "localhost", want: "localhost"},
		{origin: "http://app.localhost:3000", requested: "app.localhost", want: "app.localhost"},
		{origin: "http://app.localhost:3000", requested: "localhost", why: "public suffix"},

		// Not a parent of the host.
		{origin: "https://example.com", requested: "login.example.com", why: "neither"},
		{origin: "https://notexample.com", requested: "example.com", why: "neither"},
		{origin: "https://example.com.evil.test", requested: "example.com", why: "neither"},
		{origin: "https://example.com", requested: "other.com", why: "neither"},
		{origin: "https://example.com", requested: "ample.com", why: "neither"},
		{origin: "http://localhost:8080", requested: "example.com", why: "neither"},

		// Public suffixes, ICANN and private.
		{origin: "https://example.com", requested: "com", why: "public suffix"},
		{origin: "https://login.example.co.uk", requested: "co.uk", why: "public suffix"},
		{origin: "https://login.example.co.uk", requested: "uk", why: "public suffix"},
		{origin: "https://alice.github.io", requested: "github.io", why: "public suffix"},
		{origin: "https://alice.github.io", requested: "io", why: "public suffix"},
		{origin: "https://bucket.s3.amazonaws.com", requested: "s3.amazonaws.com", why: "public suffix"},
		{origin: "https://bucket.s3.amazonaws.com", requested: "amazonaws.com", why: "public suffix"}, // inside the host's public suffix
		{origin: "https://a.b.test", requested: "test", why: "public suffix"},                         // an unlisted TLD is one
		{origin: "https://www.ck", requested: "ck", why: "public suffix"},
		{origin: "https://a.b.kawasaki.jp", requested: "b.kawasaki.jp", why: "public suffix"}, // *.kawasaki.jp

		// Written otherwise than a browser writes a host.
		{origin: "https://example.com", requested: "example.com.", why: "ends in a dot"},
		{origin: "https://login.example.com", requested: "example.com.", why: "ends in a dot"},
		{origin: "https://example.com", requested: "Example.com", why: "upper case"},
		{origin: "https://login.example.com", requested: "EXAMPLE.COM", why: "upper case"},
		{origin: "https://example.com", requested: "example.com:443", why: "letters, digits and hyphens"},
		{origin: "https://example.com:8443", requested: "example.com:8443", why: "letters, digits and hyphens"},
		{origin: "https://example.com", requested: "https://example.com", why: "letters, digits and hyphens"},
		{origin: "https://example.com", requested: " example.com", why: "letters, digits and hyphens"},
		{origin: "https://login.example.com", requested: "*.example.com", why: "letters, digits and hyphens"},
		{origin: "https://login.example.com", requested: ".example.com", why: "empty label"},

		// Internationalised names: punycode only, as browsers write hosts.
		{origin: "https://login.xn--bcher-kva.example", requested: "xn--bcher-kva.example", want: "xn--bcher-kva.example"},
		{origin: "https://login.xn--bcher-kva.example", requested: "bücher.example", why: "punycode"},
		{origin: "https://xn--bcher-kva.example", requested: "BÜCHER.example", why: "upper case"},

		// IP addresses: never a relying party id.
		{origin: "https://example.com", requested: "127.0.0.1", why: "IP address"},
		{origin: "https://example.com", requested: "::1", why: "IP address"},
		{origin: "https://example.com", requested: "[::1]", why: "letters, digits and hyphens"},
		{origin: "https://example.com", requested: "0x7f.1", why: "IPv4"},
		{origin: "https://example.com", requested: "1.2.3", why: "IPv4"},
		{origin: "http://localhost:8080", requested: "127.0.0.1", why: "IP address"},
	} {
		o, err := passkey.ParseOrigin(tc.origin)
		if err != nil {
			t.Fatalf("ParseOrigin(%q): %v", tc.origin, err)
		}
		rp, err := passkey.CheckRPID(o, tc.requested)
		switch {
		case tc.want != "" && err != nil:
			t.Errorf("CheckRPID(%s, %q): %v", tc.origin, tc.requested, err)
		case tc.want != "" && rp.String() != tc.want:
			t.Errorf("CheckRPID(%s, %q) = %q, want %q", tc.origin, tc.requested, rp, tc.want)
		case tc.want == "" && err == nil:
			t.Errorf("CheckRPID(%s, %q) = %q; want refused (%s)", tc.origin, tc.requested, rp, tc.why)
		case tc.want == "" && !strings.Contains(err.Error(), tc.why):
			t.Errorf("CheckRPID(%s, %q) = %v; want the reason to say %q", tc.origin, tc.requested, err, tc.why)
		}
	}
}

func TestCheckRPIDNeedsAnOrigin(t *testing.T) {
	if rp, err := passkey.CheckRPID(passkey.Origin{}, "example.com"); err == nil {
		t.Fatalf("CheckRPID(zero origin) = %q; want refused", rp)
	}
}
