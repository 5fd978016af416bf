// Package websession is what a login leaves behind, in one shape for every
// browser fillgate moves it between: cookies with every attribute that
// decides where the browser sends them (host-only or domain, path, Secure,
// HttpOnly, SameSite, partition, expiry), and the final origin's web
// storage. The clean room reads it from its own browser after a login and
// hands it to the driven browser, over CDP or through the extension.
//
// It never holds a password: a session is what the site gave back for one.
package websession

import (
	"net"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Cookie is one cookie, as exactly as a browser keeps it.
type Cookie struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Domain is the host the cookie is for, without a leading dot.
	Domain string `json:"domain"`
	// HostOnly: the cookie goes to Domain only (it was set without a
	// Domain attribute, as every __Host- cookie is), not to names under
	// it.
	HostOnly bool   `json:"host_only"`
	Path     string `json:"path"`
	Secure   bool   `json:"secure"`
	HTTPOnly bool   `json:"http_only"`
	// SameSite is SameSiteStrict, SameSiteLax, SameSiteNone, or "" when
	// the site set none (the browser then treats it as Lax, and so must
	// the copy: it is set without one too).
	SameSite string `json:"same_site,omitempty"`
	// Expires is when it expires, in seconds since the Unix epoch; 0 for
	// a session cookie.
	Expires float64 `json:"expires,omitempty"`
	// Partition is the partition of a partitioned (CHIPS) cookie; nil for
	// an unpartitioned one.
	Partition *Partition `json:"partition,omitempty"`
}

// SameSite values.
const (
	SameSiteStrict = "Strict"
	SameSiteLax    = "Lax"
	SameSiteNone   = "None"
)

// Partition is the key of a partitioned cookie.
type Partition struct {
	// TopLevelSite is the site of the top-level page the cookie was set
	// under ("https://example.com").
	TopLevelSite      string `json:"top_level_site"`
	CrossSiteAncestor bool   `json:"cross_site_ancestor,omitempty"`
}

// Key names the cookie slot a browser keeps one value in: name, domain
// (host-only or not), path and partition.
type Key struct {
	Name, Domain, Path string
	HostOnly           bool
	Partition          Partition
}

// Key is the slot c lives in.
func (c Cookie) Key() Key {
	k := Key{Name: c.Name, Domain: strings.ToLower(c.Domain), Path: c.Path, HostOnly: c.HostOnly}
	if c.Partition != nil {
		k.Partition = *c.Partition
	}
	return k
}

// URL is a URL the cookie applies to, for the APIs that set a cookie by
// URL (a host-only cookie can only be set that way): https for a Secure
// cookie, http otherwise.
func (c Cookie) URL() string {
	scheme := "http"
	if c.Secure {
		scheme = "https"
	}
	host := c.Domain
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	path := c.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return scheme + "://" + host + path
}

// Same reports whether a and b are the same cookie: the same slot, value
// and attributes.
func Same(a, b Cookie) bool {
	if a.Key() != b.Key() {
		return false
	}
	return a.Value == b.Value && a.Secure == b.Secure && a.HTTPOnly == b.HTTPOnly &&
		a.SameSite == b.SameSite && a.Expires == b.Expires
}

// Changes is what a login did to the cookies a browser held before it:
// the cookies it set or changed, and the slots it emptied.
type Changes struct {
	Set     []Cookie `json:"set"`
	Removed []Cookie `json:"removed,omitempty"` // name, domain, path and partition are what count
}

// Diff is what turned the cookies before into the cookies after.
func Diff(before, after []Cookie) Changes {
	was := make(map[Key]Cookie, len(before))
	for _, c := range before {
		was[c.Key()] = c
	}
	var ch Changes
	seen := make(map[Key]bool, len(after))
	for _, c := range after {
		seen[c.Key()] = true
		if old, ok := was[c.Key()]; ok && Same(old, c) {
			continue
		}
		ch.Set = append(ch.Set, c)
	}
	for _, c := range before {
		if !seen[c.Key()] {
			c.Value = ""
			ch.Removed = append(ch.Removed, c)
		}
	}
	return ch
}

// Site is the registrable domain (eTLD+1) of host, the unit cookies are
// shared in: "example.com" for "login.example.com". An IP address or
// localhost is its own site; a name that is itself a public suffix
// ("com", "github.io") is no site: "" (its cookies would be every site's
// under it).
func Site(host string) string {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return host
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return ""
	}
	return site
}

// InSite reports whether a cookie for domain is sent within site: the
// domain is the site or a name under it.
func InSite(domain, site string) bool {
	domain = strings.ToLower(strings.TrimPrefix(domain, "."))
	return domain == site || strings.HasSuffix(domain, "."+site)
}

// Storage is one origin's web storage.
type Storage struct {
	// Origin is the origin it belongs to ("https://app.example.com").
	Origin  string      `json:"origin"`
	Local   [][2]string `json:"local,omitempty"`   // localStorage, key and value, in the browser's order
	Session [][2]string `json:"session,omitempty"` // sessionStorage
}

// Empty reports whether s holds nothing.
func (s Storage) Empty() bool { return len(s.Local) == 0 && len(s.Session) == 0 }

// Size is how many bytes the keys and values hold.
func (s Storage) Size() int {
	n := 0
	for _, kv := range append(append([][2]string{}, s.Local...), s.Session...) {
		n += len(kv[0]) + len(kv[1])
	}
	return n
}

// Session is what the driven browser is handed after a login in the
// clean room.
type Session struct {
	Cookies Changes `json:"cookies"`
	// Storage is the final origin's web storage (empty when it kept
	// nothing there).
	Storage Storage `json:"storage"`
	// URL is where the login ended: the driven tab is navigated there.
	URL string `json:"url"`
}

// Tab is what the clean room needs to know of the driven tab a login is
// for.
type Tab struct {
	// URL is the page the tab shows: the clean room opens it again.
	URL string `json:"url"`
	// UserAgent and Languages are the driven browser's: the clean room
	// presents itself with them.
	UserAgent string   `json:"user_agent,omitempty"`
	Languages []string `json:"languages,omitempty"`
	// Family is the driven browser's family: "chromium" or "firefox".
	Family string `json:"-"`
}

// Shown is what a driven tab shows after a handover.
type Shown struct {
	// URL and Origin are where the tab is now.
	URL    string `json:"url"`
	Origin string `json:"origin"`
	// Password and Code count the login fields a person could see there
	// (password fields; one-time-code fields or rows of code boxes).
	Password int `json:"password"`
	Code     int `json:"code"`
}

// Any reports whether pred is true of any part of s a program given the
// session could read: the URL, a cookie's name or value, a storage key or
// value.
func (s Session) Any(pred func(string) bool) bool {
	if pred(s.URL) {
		return true
	}
	for _, c := range s.Cookies.Set {
		if pred(c.Name) || pred(c.Value) {
			return true
		}
	}
	for _, kv := range append(append([][2]string{}, s.Storage.Local...), s.Storage.Session...) {
		if pred(kv[0]) || pred(kv[1]) {
			return true
		}
	}
	return false
}
