package sessionsite

import (
	"crypto/rand"
	"crypto/subtle"
	"net/http"
	"net/url"
)

// appHandler serves App's pages: every archetype's but the IdP's side.
func (s *Site) appHandler() http.Handler {
	mux := http.NewServeMux()
	s.formRoutes(mux, "form", "sid", nil)
	s.formRoutes(mux, "reflect", "reflect_sid", nil)
	s.formRoutes(mux, "beacon", "beacon_sid", nil)
	s.formRoutes(mux, "dbsc", "dbsc_sid", func(w http.ResponseWriter) {
		w.Header().Set("Secure-Session-Registration", `(ES256);path="/dbsc/register";challenge="c1"`)
	})
	s.stepsRoutes(mux)
	s.csrfRoutes(mux)
	s.cookiesRoutes(mux)
	s.tokenRoutes(mux)
	s.memoryRoutes(mux)
	s.hashedRoutes(mux)
	s.leakyRoutes(mux)
	s.oauthAppRoutes(mux)
	s.redirect307AppRoutes(mux)
	return mux
}

// formRoutes serves the classic form login arch: GET and POST
// /arch/login, home and whoami. A right user and password get a session
// in the cookie name (and whatever extra adds to the answer), then 303 to
// home; a wrong one gets the form again with an error (401).
func (s *Site) formRoutes(mux *http.ServeMux, arch, name string, extra func(http.ResponseWriter)) {
	prefix := "/" + arch
	mux.HandleFunc("GET "+prefix+"/login", func(w http.ResponseWriter, r *http.Request) {
		body := loginForm(prefix+"/login", "", "")
		switch arch {
		case "reflect":
			body += reflected(r)
		case "beacon":
			body += beaconScript(s.IdP + "/collect")
		}
		page(w, http.StatusOK, "Sign in", body)
	})
	mux.HandleFunc("POST "+prefix+"/login", func(w http.ResponseWriter, r *http.Request) {
		if !s.rightPassword(r.PostFormValue("user"), r.PostFormValue("password")) {
			page(w, http.StatusUnauthorized, "Sign in", loginForm(prefix+"/login", "", wrong))
			return
		}
		s.signIn(w, arch, name)
		if extra != nil {
			extra(w)
		}
		http.Redirect(w, r, prefix+"/home", http.StatusSeeOther)
	})
	guard(mux, prefix, prefix+"/login", s.cookieSession(name, arch))
}

// stepsRoutes serves "steps": the username on /steps/login (which opens a
// pending login in the cookie pend), the password on /steps/password.
func (s *Site) stepsRoutes(mux *http.ServeMux) {
	const arch = "steps"
	mux.HandleFunc("GET /steps/login", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Sign in", stepsUserPage(""))
	})
	mux.HandleFunc("POST /steps/login", func(w http.ResponseWriter, r *http.Request) {
		user := r.PostFormValue("user")
		if user == "" {
			page(w, http.StatusBadRequest, "Sign in", stepsUserPage("Enter your user name"))
			return
		}
		setCookie(w, "pend", s.issue(arch, kindPending, user, ""), sessionAttrs)
		http.Redirect(w, r, "/steps/password?user="+url.QueryEscape(user), http.StatusSeeOther)
	})
	pending := func(w http.ResponseWriter, r *http.Request) (entry, bool) {
		e, ok := s.fromCookie(r, "pend", arch, kindPending)
		if !ok {
			http.Redirect(w, r, "/steps/login", http.StatusSeeOther)
		}
		return e, ok
	}
	mux.HandleFunc("GET /steps/password", func(w http.ResponseWriter, r *http.Request) {
		if e, ok := pending(w, r); ok {
			page(w, http.StatusOK, "Sign in", stepsPasswordPage(e.user, ""))
		}
	})
	mux.HandleFunc("POST /steps/password", func(w http.ResponseWriter, r *http.Request) {
		e, ok := pending(w, r)
		if !ok {
			return
		}
		if !s.rightPassword(e.user, r.PostFormValue("password")) {
			page(w, http.StatusUnauthorized, "Sign in", stepsPasswordPage(e.user, wrong))
			return
		}
		c, _ := r.Cookie("pend")
		s.drop(c.Value)
		dropCookie(w, "pend")
		s.signIn(w, arch, "steps_sid")
		http.Redirect(w, r, "/steps/home", http.StatusSeeOther)
	})
	guard(mux, "/steps", "/steps/login", s.cookieSession("steps_sid", arch))
}

// csrfRoutes serves "csrf": the login page opens a pre-session (cookie
// pre) holding a CSRF token that the form carries; a POST whose token is
// not its pre-session's gets 403.
func (s *Site) csrfRoutes(mux *http.ServeMux) {
	const arch = "csrf"
	mux.HandleFunc("GET /csrf/login", func(w http.ResponseWriter, r *http.Request) {
		e, ok := s.fromCookie(r, "pre", arch, kindPre)
		if !ok {
			e.bound = rand.Text()
			setCookie(w, "pre", s.issue(arch, kindPre, "", e.bound), sessionAttrs)
		}
		page(w, http.StatusOK, "Sign in", loginForm("/csrf/login", hidden("csrf", e.bound), ""))
	})
	mux.HandleFunc("POST /csrf/login", func(w http.ResponseWriter, r *http.Request) {
		e, ok := s.fromCookie(r, "pre", arch, kindPre)
		if !ok || subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(e.bound)) != 1 {
			page(w, http.StatusForbidden, "Forbidden", `<h1>Forbidden</h1><p id=error>CSRF check failed</p>`)
			return
		}
		if !s.rightPassword(r.PostFormValue("user"), r.PostFormValue("password")) {
			page(w, http.StatusUnauthorized, "Sign in", loginForm("/csrf/login", hidden("csrf", e.bound), wrong))
			return
		}
		c, _ := r.Cookie("pre")
		s.drop(c.Value)
		dropCookie(w, "pre")
		s.signIn(w, arch, "csrf_sid")
		http.Redirect(w, r, "/csrf/home", http.StatusSeeOther)
	})
	guard(mux, "/csrf", "/csrf/login", s.cookieSession("csrf_sid", arch))
}

// The cookies of "cookies", with their attributes. A session needs all
// three: __Host-sid names the session, which knows the other two.
const (
	hostSidAttrs = "Secure; Path=/; HttpOnly; SameSite=Strict"
	ptAttrs      = "Secure; Path=/; SameSite=None; Partitioned"
	laxAttrs     = "Path=/"
)

// cookiesRoutes serves "cookies": a form login that sets __Host-sid, pt
// and lax.
func (s *Site) cookiesRoutes(mux *http.ServeMux) {
	const arch = "cookies"
	mux.HandleFunc("GET /cookies/login", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Sign in", loginForm("/cookies/login", "", ""))
	})
	mux.HandleFunc("POST /cookies/login", func(w http.ResponseWriter, r *http.Request) {
		if !s.rightPassword(r.PostFormValue("user"), r.PostFormValue("password")) {
			page(w, http.StatusUnauthorized, "Sign in", loginForm("/cookies/login", "", wrong))
			return
		}
		pt, lax := rand.Text(), rand.Text()
		setCookie(w, "__Host-sid", s.issue(arch, kindSession, User, pt+" "+lax), hostSidAttrs)
		setCookie(w, "pt", pt, ptAttrs)
		setCookie(w, "lax", lax, laxAttrs)
		s.login(arch)
		http.Redirect(w, r, "/cookies/home", http.StatusSeeOther)
	})
	guard(mux, "/cookies", "/cookies/login", func(r *http.Request) (string, bool) {
		e, ok := s.fromCookie(r, "__Host-sid", arch, kindSession)
		pt, err1 := r.Cookie("pt")
		lax, err2 := r.Cookie("lax")
		if !ok || err1 != nil || err2 != nil {
			return "", false
		}
		return e.user, subtle.ConstantTimeCompare([]byte(pt.Value+" "+lax.Value), []byte(e.bound)) == 1
	})
}
