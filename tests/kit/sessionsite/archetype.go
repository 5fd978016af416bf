package sessionsite

import "fmt"

// Archetype is one kind of login the site offers, by the URLs a test
// needs. Each keeps its own sessions: one archetype's session does not
// authenticate another's pages.
type Archetype struct {
	Name string // e.g. "form"
	// Login is the URL the agent's tab opens (absolute). For "oauth" it is
	// the IdP's /authorize without its query: the tab gets there from
	// Site.OAuthStart, with a state of its own.
	Login string
	Field string // the id of the login field on the page where the password is typed ("pw")
	Home  string // the URL the login ends on (absolute); it shows #welcome when signed in
	// WhoAmI tells whether the browser is signed in. Unless WhoAmIPage,
	// GET it from the signed-in browser (with its credentials: a
	// same-origin fetch from the Home page): 200 and body "ada" when the
	// session is valid, 401 otherwise.
	WhoAmI string
	// WhoAmIPage means WhoAmI is a page to load in the tab instead: its
	// script checks the session (a token in localStorage, which no request
	// carries by itself) and then sets document.body.dataset.who to "ada"
	// or "none".
	WhoAmIPage bool
	// Step is, for a two-step login, the id of the username field of the
	// first step ("" otherwise).
	Step string
}

// names are the archetypes Archetypes returns; extras are the others.
var (
	names  = []string{"form", "token", "steps", "memory", "oauth", "csrf", "cookies", "hashed"}
	extras = []string{"dbsc", "redirect307", "leaky", "reflect", "beacon"}
)

// Archetype returns the archetype called name. The archetypes are:
//
//   - "form": a classic POST form; session cookie sid.
//   - "token": a fetch login that keeps a bearer token in localStorage and
//     a tab value in sessionStorage; both are needed (WhoAmIPage).
//   - "steps": the username, then the password on a second page (the step
//     is in the URL and in a pending-login cookie).
//   - "memory": the username, then the password, in one document whose
//     script swaps the steps; the password goes out with fetch.
//   - "oauth": App sends the tab to IdP, which signs in and redirects back
//     with a one-time code; App checks its state cookie.
//   - "csrf": a form with a CSRF token bound to a pre-session cookie.
//   - "cookies": a login that sets a __Host- cookie (Secure, Strict), a
//     partitioned SameSite=None cookie and a cookie without SameSite; all
//     three are needed.
//   - "hashed": the page sends the password's hex SHA-256, never the
//     password (see Site.ReceivedHash).
//   - "dbsc": "form", plus a Device Bound Session Credentials registration
//     header on the login's answer (not in Archetypes).
//   - "redirect307": a form on App whose POST answers 307 to IdP's
//     /collect, which would accept the password (not in Archetypes).
//   - "leaky": a fetch login that also keeps the password, base64-encoded,
//     in localStorage ("remember me" done wrong; not in Archetypes).
//   - "reflect": "form", on a login page that echoes, unescaped, its
//     cookie banner, its query parameter msg and its fragment (a script
//     injection reached only by what the browser's own user sets; not in
//     Archetypes).
//   - "beacon": "form", on a login page whose script also sends the
//     password to IdP's /collect as the form is submitted (a hostile or
//     compromised page; not in Archetypes).
//
// It panics for any other name.
func (s *Site) Archetype(name string) Archetype {
	paths := func(origin string) Archetype {
		return Archetype{
			Name:   name,
			Login:  origin + "/" + name + "/login",
			Field:  "pw",
			Home:   origin + "/" + name + "/home",
			WhoAmI: origin + "/" + name + "/whoami",
		}
	}
	switch name {
	case "form", "csrf", "cookies", "hashed", "dbsc", "leaky", "reflect", "beacon":
		return paths(s.App)
	case "token":
		a := paths(s.App)
		a.WhoAmIPage = true
		return a
	case "steps", "memory":
		a := paths(s.App)
		a.Step = "user"
		return a
	case "oauth":
		a := paths(s.App)
		a.Login = s.IdP + "/authorize"
		return a
	case "redirect307":
		a := paths(s.IdP)
		a.Login = s.App + "/redirect307/login"
		return a
	}
	panic(fmt.Sprintf("sessionsite: no archetype %q", name))
}

// Archetypes returns every archetype but the extras (dbsc, redirect307,
// leaky, reflect, beacon).
func (s *Site) Archetypes() []Archetype {
	out := make([]Archetype, len(names))
	for i, n := range names {
		out[i] = s.Archetype(n)
	}
	return out
}

// OAuthStart is the App URL the agent's tab opens first for "oauth": it
// sets App's state cookie and redirects to the IdP's /authorize.
func (s *Site) OAuthStart() string { return s.App + "/oauth/start" }
