package sessionsite

import (
	"net/http"
	"net/url"
)

// client is the one OAuth client the IdP knows.
const client = "app"

// idp is what the IdP's sessions and codes belong to: not App's "oauth",
// so that an IdP session id does not open App.
const idp = "oauth-idp"

// callback is App's OAuth redirect URI.
func (s *Site) callback() string { return s.App + "/oauth/callback" }

// oauthAppRoutes serves App's side of "oauth": /oauth/start issues a state
// (kept server-side and in App's cookie state) and sends the browser to
// the IdP; /oauth/callback wants that state in both its cookie and its
// query, redeems the code once, and opens App's session (cookie app).
func (s *Site) oauthAppRoutes(mux *http.ServeMux) {
	const arch = "oauth"
	mux.HandleFunc("GET /oauth/start", func(w http.ResponseWriter, r *http.Request) {
		state := s.issue(arch, kindState, "", "")
		setCookie(w, "state", state, sessionAttrs)
		q := url.Values{"client": {client}, "state": {state}, "redirect_uri": {s.callback()}}
		http.Redirect(w, r, s.IdP+"/authorize?"+q.Encode(), http.StatusFound)
	})
	mux.HandleFunc("GET /oauth/callback", func(w http.ResponseWriter, r *http.Request) {
		fail := func(msg string) {
			page(w, http.StatusBadRequest, "Error", `<h1>Error</h1>`+errorLine(msg))
		}
		state := r.URL.Query().Get("state")
		if c, err := r.Cookie("state"); err != nil || c.Value != state {
			fail("state mismatch")
			return
		}
		if _, ok := s.take(arch, kindState, state); !ok {
			fail("state mismatch")
			return
		}
		dropCookie(w, "state")
		code, ok := s.take(idp, kindCode, r.URL.Query().Get("code"))
		if !ok || code.bound != state {
			fail("bad code")
			return
		}
		s.signIn(w, arch, "app")
		http.Redirect(w, r, "/oauth/home", http.StatusFound)
	})
	guard(mux, "/oauth", "/oauth/start", s.cookieSession("app", arch))
}

// redirect307AppRoutes serves App's side of "redirect307": a login form
// whose POST answers 307, so that a browser would send the same POST, the
// password in it, to IdP's /collect.
func (s *Site) redirect307AppRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /redirect307/login", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Sign in", loginForm("/redirect307/login", "", ""))
	})
	mux.HandleFunc("POST /redirect307/login", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.IdP+"/collect", http.StatusTemporaryRedirect)
	})
}

// idpHandler serves the IdP's pages: "oauth"'s /authorize, with single
// sign-on (a browser with a live IdP session, cookie idp, goes straight
// back with a code), and "redirect307"'s /collect, which accepts the
// password a 307 brought (session cookie r307 on the IdP).
func (s *Site) idpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if !s.authorizeParams(w, q) {
			return
		}
		if _, ok := s.fromCookie(r, "idp", idp, kindSession); ok {
			s.redirectWithCode(w, r, q.Get("state"))
			return
		}
		page(w, http.StatusOK, "Sign in", authorizePage(client, q.Get("state"), q.Get("redirect_uri"), ""))
	})
	mux.HandleFunc("POST /authorize", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || !s.authorizeParams(w, r.PostForm) {
			if err != nil {
				http.Error(w, "bad form", http.StatusBadRequest)
			}
			return
		}
		state := r.PostForm.Get("state")
		if !s.rightPassword(r.PostForm.Get("user"), r.PostForm.Get("password")) {
			page(w, http.StatusUnauthorized, "Sign in", authorizePage(client, state, s.callback(), wrong))
			return
		}
		setCookie(w, "idp", s.issue(idp, kindSession, User, ""), sessionAttrs)
		s.redirectWithCode(w, r, state)
	})
	mux.HandleFunc("POST /collect", func(w http.ResponseWriter, r *http.Request) {
		if !s.rightPassword(r.PostFormValue("user"), r.PostFormValue("password")) {
			page(w, http.StatusUnauthorized, "Sign in", `<h1>Sign in</h1>`+errorLine(wrong))
			return
		}
		s.signIn(w, "redirect307", "r307")
		http.Redirect(w, r, "/redirect307/home", http.StatusSeeOther)
	})
	guard(mux, "/redirect307", s.App+"/redirect307/login", s.cookieSession("r307", "redirect307"))
	return mux
}

// authorizeParams checks an authorization request's client, redirect URI
// and state, and answers 400 when they are not App's.
func (s *Site) authorizeParams(w http.ResponseWriter, q url.Values) bool {
	if q.Get("client") != client || q.Get("redirect_uri") != s.callback() || q.Get("state") == "" {
		page(w, http.StatusBadRequest, "Error", `<h1>Error</h1><p id=error>unknown client or redirect</p>`)
		return false
	}
	return true
}

// redirectWithCode sends the browser back to App's callback with a new
// one-time code for state.
func (s *Site) redirectWithCode(w http.ResponseWriter, r *http.Request, state string) {
	code := s.issue(idp, kindCode, User, state)
	q := url.Values{"code": {code}, "state": {state}}
	http.Redirect(w, r, s.callback()+"?"+q.Encode(), http.StatusFound)
}
