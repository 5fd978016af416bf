package websession

import (
	"reflect"
	"testing"

	"github.com/chromedp/cdproto/network"
)

// The cookie shapes a handover must keep, as CDP reports them, and how
// they go back in.
func TestCDPShapes(t *testing.T) {
	for _, c := range []struct {
		name   string
		in     network.Cookie
		want   Cookie
		url    string // the param's URL ("" for a domain cookie)
		domain string // the param's domain
	}{
		{"host-only, session", network.Cookie{Name: "sid", Value: "v", Domain: "app.example.com", Path: "/", Session: true, Expires: -1},
			Cookie{Name: "sid", Value: "v", Domain: "app.example.com", HostOnly: true, Path: "/"}, "http://app.example.com/", ""},
		{"__Host-, secure, strict", network.Cookie{Name: "__Host-s", Value: "v", Domain: "app.example.com", Path: "/", Secure: true, HTTPOnly: true, SameSite: "Strict", Expires: 1.9e9},
			Cookie{Name: "__Host-s", Value: "v", Domain: "app.example.com", HostOnly: true, Path: "/", Secure: true, HTTPOnly: true, SameSite: "Strict", Expires: 1.9e9},
			"https://app.example.com/", ""},
		{"domain cookie, path", network.Cookie{Name: "d", Value: "v", Domain: ".example.com", Path: "/app", SameSite: "None", Secure: true, Expires: 2e9},
			Cookie{Name: "d", Value: "v", Domain: "example.com", Path: "/app", SameSite: "None", Secure: true, Expires: 2e9}, "", ".example.com"},
		{"partitioned", network.Cookie{Name: "p", Value: "v", Domain: "widget.example", Path: "/", Secure: true, SameSite: "None", Session: true,
			PartitionKey: &network.CookiePartitionKey{TopLevelSite: "https://top.example", HasCrossSiteAncestor: true}},
			Cookie{Name: "p", Value: "v", Domain: "widget.example", HostOnly: true, Path: "/", Secure: true, SameSite: "None",
				Partition: &Partition{TopLevelSite: "https://top.example", CrossSiteAncestor: true}}, "https://widget.example/", ""},
		{"IPv6 host", network.Cookie{Name: "a", Value: "v", Domain: "::1", Path: "/", Session: true},
			Cookie{Name: "a", Value: "v", Domain: "::1", HostOnly: true, Path: "/"}, "http://[::1]/", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := FromCDP(&c.in)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("FromCDP = %+v, want %+v", got, c.want)
			}
			p := got.CDPParam()
			if p.URL != c.url || p.Domain != c.domain || p.Path != got.Path {
				t.Errorf("CDPParam sets url %q, domain %q, path %q; want %q, %q, %q", p.URL, p.Domain, p.Path, c.url, c.domain, got.Path)
			}
			if string(p.SameSite) != got.SameSite {
				t.Errorf("SameSite %q, want %q: said exactly, unset when the site set none", p.SameSite, got.SameSite)
			}
			if float64(p.Expires) != got.Expires || (p.PartitionKey != nil) != (got.Partition != nil) {
				t.Errorf("expires %v, partition %v; want %v, %v", p.Expires, p.PartitionKey, got.Expires, got.Partition)
			}
			if d := got.CDPDelete(); d.URL != c.url || d.Domain != c.domain {
				t.Errorf("CDPDelete names url %q, domain %q; want %q, %q", d.URL, d.Domain, c.url, c.domain)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a := Cookie{Name: "a", Value: "1", Domain: "example.com", HostOnly: true, Path: "/"}
	b := Cookie{Name: "b", Value: "1", Domain: "example.com", Path: "/"}
	a2 := a
	a2.Value = "2"
	bHost := b
	bHost.HostOnly = true // another slot than the domain cookie b
	c := Cookie{Name: "c", Value: "1", Domain: "idp.example", HostOnly: true, Path: "/", Secure: true}
	cLater := c
	cLater.Expires = 2e9

	ch := Diff([]Cookie{a, b, c}, []Cookie{a2, bHost, cLater})
	if want := []Cookie{a2, bHost, cLater}; !reflect.DeepEqual(ch.Set, want) {
		t.Errorf("set %+v, want %+v", ch.Set, want)
	}
	removed := b
	removed.Value = ""
	if want := []Cookie{removed}; !reflect.DeepEqual(ch.Removed, want) {
		t.Errorf("removed %+v, want %+v (no value)", ch.Removed, want)
	}
	if ch := Diff([]Cookie{a, b}, []Cookie{b, a}); len(ch.Set)+len(ch.Removed) != 0 {
		t.Errorf("the same cookies in another order: %+v, want no change", ch)
	}
}

func TestSite(t *testing.T) {
	for host, want := range map[string]string{
		"login.example.com":  "example.com",
		"example.com":        "example.com",
		"a.b.example.co.uk":  "example.co.uk",
		"127.0.0.1":          "127.0.0.1",
		"[::1]":              "::1",
		"localhost":          "localhost",
		"app.localhost":      "app.localhost",
		"github.io":          "",
		"com":                "",
		"":                   "",
		"user.github.io":     "user.github.io",
		"Login.Example.COM.": "example.com",
	} {
		if got := Site(host); got != want {
			t.Errorf("Site(%q) = %q, want %q", host, got, want)
		}
	}
	for _, c := range []struct {
		domain string
		in     bool
	}{{".login.example.com", true}, {"example.com", true}, {"badexample.com", false}, {"example.com.evil", false}} {
		if InSite(c.domain, "example.com") != c.in {
			t.Errorf("InSite(%q, example.com) = %v", c.domain, !c.in)
		}
	}

}

func TestAny(t *testing.T) {
	s := Session{
		URL:     "https://a.test/home",
		Cookies: Changes{Set: []Cookie{{Name: "sid", Value: "v1"}}, Removed: []Cookie{{Name: "gone"}}},
		Storage: Storage{Local: [][2]string{{"k", "v2"}}, Session: [][2]string{{"k3", "v3"}}},
	}
	for _, part := range []string{"https://a.test/home", "sid", "v1", "k", "v2", "k3", "v3"} {
		if !s.Any(func(x string) bool { return x == part }) {
			t.Errorf("Any does not look at %q", part)
		}
	}
	if s.Any(func(x string) bool { return x == "gone" }) {
		t.Error("Any looks at a removed cookie, which is handed over with no value")
	}
}
