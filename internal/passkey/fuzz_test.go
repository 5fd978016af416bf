package passkey_test

import (
	"strings"
	"testing"

	"golang.org/x/net/publicsuffix"

	"github.com/fillgate/fillgate/internal/passkey"
)

// FuzzCheckRPID checks the rpId rule's promises on any origin and id: an
// origin that parses is its own serialisation, on https or localhost; an
// id that is allowed is the one asked for (the host when none), the host
// or a parent of it at a label boundary, lower-case ASCII with no
// trailing dot, no IP address, and no public suffix unless it is the host
// itself.
func FuzzCheckRPID(f *testing.F) {
	for _, s := range [][2]string{
		{"https://example.com", ""},
		{"https://login.example.com", "example.com"},
		{"https://login.example.co.uk", "co.uk"},
		{"https://alice.github.io", "github.io"},
		{"https://bucket.s3.amazonaws.com", "amazonaws.com"},
		{"http://localhost:8080", "localhost"},
		{"http://app.localhost", "localhost"},
		{"https://example.com", "example.com."},
		{"https://example.com", "EXAMPLE.com"},
		{"https://login.xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"https://example.com", "127.0.0.1"},
		{"https://127.0.0.1", ""},
		{"https://[::1]:8443", "::1"},
		{"https://example.com:8443", "example.com:8443"},
		{"https://a.b.kawasaki.jp", "b.kawasaki.jp"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, origin, requested string) {
		o, err := passkey.ParseOrigin(origin)
		if err != nil {
			if _, err := passkey.CheckRPID(o, requested); err == nil {
				t.Fatalf("CheckRPID allowed %q for an origin that did not parse", requested)
			}
			return
		}
		if o.String() != origin {
			t.Fatalf("ParseOrigin(%q) serialises as %q", origin, o.String())
		}
		if h := o.Host(); !strings.HasPrefix(origin, "https://") && h != "localhost" && !strings.HasSuffix(h, ".localhost") {
			t.Fatalf("ParseOrigin accepted %q: neither https nor localhost", origin)
		}
		rp, err := passkey.CheckRPID(o, requested)
		if err != nil {
			return
		}
		id, host := rp.String(), o.Host()
		if requested == "" && id != host || requested != "" && id != requested {
			t.Fatalf("CheckRPID(%s, %q) = %q", origin, requested, id)
		}
		if id != host && !strings.HasSuffix(host, "."+id) {
			t.Fatalf("CheckRPID(%s, %q) = %q, which is not %s or a parent of it", origin, requested, id, host)
		}
		if id != strings.ToLower(id) || strings.HasSuffix(id, ".") || strings.Trim(id, "0123456789.") == "" || strings.ContainsAny(id, ":[]/ ") {
			t.Fatalf("CheckRPID(%s, %q) = %q, not a domain as a browser writes it", origin, requested, id)
		}
		for _, r := range id {
			if r >= 0x80 {
				t.Fatalf("CheckRPID(%s, %q) = %q, not ASCII", origin, requested, id)
			}
		}
		if ps, _ := publicsuffix.PublicSuffix(id); id != host && ps == id {
			t.Fatalf("CheckRPID(%s, %q) = %q, a public suffix", origin, requested, id)
		}
		if ps, _ := publicsuffix.PublicSuffix(host); id != host && (len(id) <= len(ps)) {
			t.Fatalf("CheckRPID(%s, %q) = %q, not longer than the host's public suffix %q", origin, requested, id, ps)
		}
	})
}
