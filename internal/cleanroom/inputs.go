package cleanroom

import (
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"

	"github.com/fillgate/fillgate/internal/websession"
)

// What the driven browser says is the driving program's to choose: the
// tab's address, the cookies of its context, the account its page shows,
// its user agent and languages. In a room each reaches a page that is
// about to hold the value; a site that echoes one of them unescaped (a
// script injection it has, out of a remote attacker's reach when it is a
// cookie or a fragment, but not out of the program's) would run the
// program's script beside the value, and that script could put the value
// where the handover carries it. So a room takes of each only a shape
// that cannot begin markup, end a quoted string or call a function.

// scriptChars are the characters a room refuses in the driving program's
// inputs, once decoded: they begin markup, end a quoted string or an
// expression, call a function or escape in a script.
const scriptChars = "<>\"'`(){};\\"

// scriptURL matches a script address once spaces and controls are gone.
var scriptURL = regexp.MustCompile(`(?i)(^|[^a-z0-9])(javascript|vbscript|data):`)

// scriptish reports whether s, percent- and HTML-decoded (until nothing
// changes, at most four times), holds a control character, one of
// scriptChars not in allow, or a script address.
func scriptish(s, allow string) bool {
	for range 4 {
		if hasScript(s, allow) {
			return true
		}
		d := html.UnescapeString(s)
		if u, err := url.PathUnescape(d); err == nil {
			d = u
		}
		if d == s {
			return false
		}
		s = d
	}
	return hasScript(s, allow)
}

func hasScript(s, allow string) bool {
	var squeezed strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return true
		}
		if strings.ContainsRune(scriptChars, r) && !strings.ContainsRune(allow, r) {
			return true
		}
		if r != ' ' {
			squeezed.WriteRune(r)
		}
	}
	return scriptURL.MatchString(squeezed.String())
}

// route is a fragment a room keeps: a page's route (#/login, #!/sign-in),
// which no script can be made of.
var route = regexp.MustCompile(`^!?/[A-Za-z0-9/_.~-]*$`)

// roomURL is the address a room opens for the driven tab's raw: the same,
// but a fragment that is not a plain route is left out; an address whose
// path or query holds script characters is refused (the error says which
// part).
func roomURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the agent's tab's address does not parse")
	}
	if u.User != nil {
		return "", fmt.Errorf("the agent's tab's address carries a user name")
	}
	if scriptish(u.EscapedPath(), ";") {
		return "", fmt.Errorf("the path of the agent's tab's address holds characters a page could take for markup or script (%s)", scriptChars)
	}
	if scriptish(u.RawQuery, "") {
		return "", fmt.Errorf("the query of the agent's tab's address holds characters a page could take for markup or script (%s)", scriptChars)
	}
	if !route.MatchString(u.Fragment) {
		u.Fragment, u.RawFragment = "", ""
	}
	return u.String(), nil
}

// roomAccount checks the account name the driven page shows, which a
// room types into its page: a name with script characters is refused (an
// apostrophe is kept: O'Brien's address has one).
func roomAccount(account string) error {
	if scriptish(account, "'") {
		return fmt.Errorf("the account name the agent's page shows holds characters a page could take for markup or script (%s)", scriptChars)
	}
	return nil
}

// roomCookies are the cookies of the driven context a room copies in:
// those whose name and value hold no script characters. It returns how
// many were left out.
func roomCookies(cookies []websession.Cookie) ([]websession.Cookie, int) {
	kept := cookies[:0:0]
	for _, c := range cookies {
		if scriptish(c.Name, "") || scriptish(c.Value, "") {
			continue
		}
		kept = append(kept, c)
	}
	return kept, len(cookies) - len(kept)
}

// chromeUA matches the user agent of a Chromium-family desktop or mobile
// browser; between its parentheses only a platform's tokens.
var chromeUA = regexp.MustCompile(`^Mozilla/5\.0 \([A-Za-z0-9 ._:;/+,-]{1,120}\) AppleWebKit/[0-9.]{1,16} \(KHTML, like Gecko\) (Headless)?Chrome/[0-9.]{1,24}( Mobile)? Safari/[0-9.]{1,16}( (Edg|OPR|Vivaldi|Brave|YaBrowser)/[0-9.]{1,24})?$`)

// language matches one of the driven browser's languages (BCP 47).
var language = regexp.MustCompile(`^[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8}){0,4}$`)

// roomTab is what of the driven tab's user agent and languages a room
// takes: the user agent when it is a Chromium-family browser's, else ""
// (the room's own, headless mark removed); the languages that are
// language tags.
func roomTab(tab websession.Tab) (ua string, langs []string) {
	if chromeUA.MatchString(tab.UserAgent) {
		ua = tab.UserAgent
	}
	for _, l := range tab.Languages {
		if language.MatchString(l) && len(langs) < 8 {
			langs = append(langs, l)
		}
	}
	return ua, langs
}
