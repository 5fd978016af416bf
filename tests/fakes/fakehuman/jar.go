package fakehuman

import (
	"net/http"
	"net/url"
	"strings"
	"time"
)

// jar is one browser's cookie store, as far as a prompt page needs it:
// host-only cookies (a prompt is on an IP address, which has no domain
// cookies), path matching, deletion by Max-Age or Expires, and the
// SameSite rules browsers apply when they decide what to send. Like a
// browser, it refuses a Secure cookie from an http page, a cookie for
// another domain, and SameSite=None without Secure.
type jar struct {
	cookies []*http.Cookie // each with Domain set to the host it came from
}

// store takes the Set-Cookie headers of resp, the answer to a request
// for u.
func (j *jar) store(u *url.URL, resp *http.Response) {
	host := u.Hostname()
	for _, c := range resp.Cookies() {
		if c.Secure && u.Scheme != "https" {
			continue
		}
		if c.Domain != "" && !strings.EqualFold(strings.TrimPrefix(c.Domain, "."), host) {
			continue
		}
		if c.SameSite == http.SameSiteNoneMode && !c.Secure {
			continue
		}
		if c.Path == "" || c.Path[0] != '/' {
			c.Path = defaultPath(u.Path)
		}
		c.Domain = host
		j.remove(c)
		if c.MaxAge < 0 || (!c.Expires.IsZero() && !c.Expires.After(time.Now())) {
			continue // a deletion
		}
		j.cookies = append(j.cookies, c)
	}
}

// remove drops the stored cookie with c's name, host and path.
func (j *jar) remove(c *http.Cookie) {
	kept := j.cookies[:0]
	for _, old := range j.cookies {
		if old.Name != c.Name || old.Domain != c.Domain || old.Path != c.Path {
			kept = append(kept, old)
		}
	}
	j.cookies = kept
}

// send returns the cookies a browser sends with a request for u.
// crossSite says the request is cross-site (Sec-Fetch-Site cross-site or
// same-site); topLevelGET that it is a GET navigating a whole tab, which
// is when Lax cookies still go along.
func (j *jar) send(u *url.URL, crossSite, topLevelGET bool) []*http.Cookie {
	var out []*http.Cookie
	for _, c := range j.cookies {
		if !strings.EqualFold(c.Domain, u.Hostname()) || !pathMatch(u.EscapedPath(), c.Path) {
			continue
		}
		if c.Secure && u.Scheme != "https" {
			continue
		}
		if crossSite {
			switch c.SameSite {
			case http.SameSiteStrictMode:
				continue
			case http.SameSiteNoneMode:
			default: // Lax, and no attribute (browsers treat it as Lax)
				if !topLevelGET {
					continue
				}
			}
		}
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return out
}

// pathMatch is RFC 6265's path-match of a request path against a
// cookie's path.
func pathMatch(reqPath, cookiePath string) bool {
	if reqPath == "" {
		reqPath = "/"
	}
	switch {
	case reqPath == cookiePath:
		return true
	case !strings.HasPrefix(reqPath, cookiePath):
		return false
	}
	return strings.HasSuffix(cookiePath, "/") || reqPath[len(cookiePath)] == '/'
}

// defaultPath is RFC 6265's default cookie path for a request path.
func defaultPath(p string) string {
	i := strings.LastIndex(p, "/")
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
