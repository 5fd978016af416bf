package policy

import (
	"strings"
	"testing"
)

// maxDetail bounds what a refusal may say: it quotes only a short prefix
// of what it was given, however long that was.
const maxDetail = 1200

// pageOf is the origin of the login page of the canonical service svc, as
// a browser writes it: https (http on loopback), with svc's port unless it
// is the scheme's default.
func pageOf(svc service) string {
	o := origin{scheme: "https", host: svc.host, port: svc.port}
	if svc.host.loopback() {
		o.scheme = "http"
	}
	if o.scheme == "http" && o.port == "80" || o.scheme == "https" && o.port == "443" {
		o.port = ""
	}
	return o.String()
}

// allowed reports whether the default policy lets a password be filled for
// service into a focused password field of a top frame on origin.
func allowed(service, origin string) bool {
	return Default().Evaluate(Input{Service: service, Field: fieldPassword, Origins: []string{origin},
		FieldKind: fieldPassword, Via: ViaExtension}).Allow
}

// FuzzNormalizeService: a service either normalizes to a canonical form
// that normalizes to itself and whose own login page matches it (Serves
// and Evaluate), or it is refused with a short message, and then no
// origin matches it at all. Seeds: below and testdata/fuzz.
func FuzzNormalizeService(f *testing.F) {
	for _, s := range []string{
		"github.com", "GitHub.COM", "login.example.co.uk", "nas.lan:8443", "192.168.1.1:8443",
		"[fd00::10]:8443", "::1", "0:0:0:0:0:0:0:1", "localhost", "a.localhost:3000", "127.0.0.1",
		"com", "co.uk", "github.io", "127.1", "0x7f.0.0.1", "https://github.com", "github.com/",
		"user@github.com", "*.github.com", "github.com.", "a..b", "-a.com", "xn--bcher-kva.example",
		"bücher.example", "github.com:443", "github.com:0443", "github.com:65536", "[::1]", "[::1]:",
		"::ffff:127.0.0.1", "fe80::1%eth0", "example.com:80", "localhost:443", "a.b.c.d.e.f.example",
		strings.Repeat("a", 64) + ".com", strings.Repeat("a.", 130) + "com", "\x00", " github.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		canon, err := NormalizeService(s)
		if err != nil {
			if len(err.Error()) > maxDetail {
				t.Fatalf("the refusal of a %d-byte service is %d bytes long", len(s), len(err.Error()))
			}
			if canon != "" {
				t.Fatalf("NormalizeService refused %q but returned %q", s, canon)
			}
			// A refused service matches nothing: not the page its text
			// would name, in either scheme, nor its lower-case form.
			body := strings.ToLower(s)
			for _, o := range []string{"https://" + s, "http://" + s, "https://" + body, "http://" + body, "http://localhost", "https://example.com"} {
				if Default().Serves(s, fieldPassword, o, fieldPassword) {
					t.Fatalf("the refused service %q serves the origin %q", s, o)
				}
				if allowed(s, o) {
					t.Fatalf("the refused service %q is allowed on the origin %q", s, o)
				}
			}
			return
		}
		again, err := NormalizeService(canon)
		if err != nil || again != canon {
			t.Fatalf("NormalizeService(%q) = %q, but NormalizeService(%q) = %q, %v", s, canon, canon, again, err)
		}
		svc, err := parseService(canon)
		if err != nil || svc.String() != canon {
			t.Fatalf("parseService(%q) = %v, %v", canon, svc, err)
		}
		page := pageOf(svc)
		o, err := parseOrigin(page)
		if err != nil || o.String() != page {
			t.Fatalf("the login page of %q, %q, is not an origin: %v", canon, page, err)
		}
		for _, name := range []string{s, canon} {
			if !Default().Serves(name, fieldPassword, page, fieldPassword) {
				t.Fatalf("the service %q does not serve its own login page %q", name, page)
			}
			if !allowed(name, page) {
				t.Fatalf("the service %q is not allowed on its own login page %q", name, page)
			}
			if Default().Serves(name, fieldOTP, page, fieldPassword) {
				t.Fatalf("the service %q serves a one-time code into a password field", name)
			}
		}
	})
}

// FuzzParseOrigin: an origin is accepted only in the exact form browsers
// serialise it (so it round-trips), and a refused one matches no service:
// not even the one its own host names.
func FuzzParseOrigin(f *testing.F) {
	for _, s := range []string{
		"https://github.com", "http://127.0.0.1:8080", "https://[::1]:8443", "http://[::1]", "https://nas.lan:8443",
		"null", "https://GitHub.com", "https://github.com/", "https://github.com:443", "http://a.test:80",
		"https://github.com.", "https://user@github.com", "ftp://github.com", "https://[::ffff:127.0.0.1]",
		"https://0:0:0:0:0:0:0:1", "https://[0:0:0:0:0:0:0:1]", "https://127.1", "https://xn--bcher-kva.example",
		"https://bücher.example", "https://a.test:0", "https://a.test:", "https://:8443", "https://",
		"https://[fe80::1%25eth0]", "https://a.test:8443x", "https://[::1]x", "chrome-extension://abc",
		"https://github.com?x", "https://github.com#x", "https://git hub.com", "http://localhost:3000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := parseOrigin(s)
		if err != nil {
			if len(err.Error()) > maxDetail {
				t.Fatalf("the refusal of a %d-byte origin is %d bytes long", len(s), len(err.Error()))
			}
			// Whatever service its host part would name, a refused
			// origin never matches it.
			_, rest, _ := strings.Cut(s, "://")
			for _, name := range []string{rest, strings.ToLower(rest), strings.Trim(rest, "[]"), "example.com", "localhost"} {
				if Default().Serves(name, fieldPassword, s, fieldPassword) {
					t.Fatalf("the refused origin %q is served by %q", s, name)
				}
				if allowed(name, s) {
					t.Fatalf("the refused origin %q is allowed for %q", s, name)
				}
			}
			return
		}
		if got := o.String(); got != s {
			t.Fatalf("parseOrigin(%q) reads as %q: not the browser's own form", s, got)
		}
		// The service that names the page exactly covers it, unless the
		// page is plain http off loopback or the name is refused as a
		// service (a public suffix, port 443 spelled out).
		name := o.serviceOf().String()
		if _, err := NormalizeService(name); err != nil || o.transport() != nil {
			if Default().Serves(name, fieldPassword, s, fieldPassword) && o.transport() != nil {
				t.Fatalf("%q serves the plain-http page %q", name, s)
			}
			return
		}
		if !Default().Serves(name, fieldPassword, s, fieldPassword) || !allowed(name, s) {
			t.Fatalf("the service %q that names the page %q does not match it", name, s)
		}
	})
}
