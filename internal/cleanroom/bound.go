package cleanroom

import (
	"net/url"
	"strings"

	"github.com/fillgate/fillgate/internal/websession"
)

// boundSites are the sites known to bind a signed-in session to the
// browser it was made in (Device Bound Session Credentials: the session
// dies minutes after it is copied elsewhere) and to refuse sign-in in an
// automated browser at all. A login for them is refused before the person
// is asked.
var boundSites = []string{
	"google.com",  // accounts.google.com: DBSC, and "This browser or app may not be secure"
	"youtube.com", // signs in through Google accounts
	"gmail.com",   // the same
}

// boundSite reports whether origin is on a site that binds its sessions to
// one browser, and which.
func boundSite(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil {
		return "", false
	}
	site := websession.Site(u.Hostname())
	for _, s := range boundSites {
		if site == s {
			return s, true
		}
	}
	return "", false
}

// registrationHeader is the response header with which a site starts a
// device-bound session (DBSC): the session it then hands out is bound to
// the browser's own key, and dies in the agent's browser once copied.
const registrationHeader = "secure-session-registration"

// bindsSession reports whether response headers start a device-bound
// session.
func bindsSession(headers map[string]any) bool {
	for k := range headers {
		if strings.EqualFold(k, registrationHeader) {
			return true
		}
	}
	return false
}
