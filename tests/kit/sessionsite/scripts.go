package sessionsite

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"
)

// credentials is the JSON body of the script logins.
type credentials struct {
	User     string `json:"user"`
	Password string `json:"password"`
	Hash     string `json:"hash"`
}

// readCredentials decodes r's JSON body; a body that is not one is empty
// credentials, which no login accepts.
func readCredentials(r *http.Request) credentials {
	var c credentials
	_ = json.NewDecoder(r.Body).Decode(&c)
	return c
}

// writeJSON answers status and v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// failed is the answer to a wrong script login.
var failed = map[string]bool{"ok": false}

// tokenRoutes serves "token": /api/token hands out a bearer token (kept in
// localStorage by the page) and a tab value (kept in sessionStorage);
// /api/me wants both, the token in Authorization and the tab value in
// X-Tab. The pages are static; their scripts do the rest.
func (s *Site) tokenRoutes(mux *http.ServeMux) {
	const arch = "token"
	static := func(path, title, body string) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) { page(w, http.StatusOK, title, body) })
	}
	static("/token/login", "Sign in", tokenLoginPage)
	static("/token/home", "Home", tokenHomePage)
	static("/token/whoami", "Who am I", tokenWhoAmIPage)
	mux.HandleFunc("POST /api/token", func(w http.ResponseWriter, r *http.Request) {
		c := readCredentials(r)
		if !s.rightPassword(c.User, c.Password) {
			writeJSON(w, http.StatusUnauthorized, failed)
			return
		}
		tab := rand.Text()
		token := s.issue(arch, kindToken, User, tab)
		s.login(arch)
		writeJSON(w, http.StatusOK, map[string]string{"token": token, "tab": tab})
	})
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		e, found := s.lookup(arch, kindToken, token)
		ok = ok && found && subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Tab")), []byte(e.bound)) == 1
		whoami(w, e.user, ok)
	})
}

// memoryRoutes serves "memory": one login page whose script holds both
// steps; /api/memory checks the credentials and sets the session cookie.
func (s *Site) memoryRoutes(mux *http.ServeMux) {
	const arch = "memory"
	mux.HandleFunc("GET /memory/login", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Sign in", memoryLoginPage)
	})
	mux.HandleFunc("POST /api/memory", func(w http.ResponseWriter, r *http.Request) {
		c := readCredentials(r)
		if !s.rightPassword(c.User, c.Password) {
			writeJSON(w, http.StatusUnauthorized, failed)
			return
		}
		s.signIn(w, arch, "memory_sid")
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	guard(mux, "/memory", "/memory/login", s.cookieSession("memory_sid", arch))
}

// hashedRoutes serves "hashed": /api/hashed takes the user and the hex
// SHA-256 of the password, and sets the session cookie.
func (s *Site) hashedRoutes(mux *http.ServeMux) {
	const arch = "hashed"
	mux.HandleFunc("GET /hashed/login", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Sign in", hashedLoginPage)
	})
	mux.HandleFunc("POST /api/hashed", func(w http.ResponseWriter, r *http.Request) {
		c := readCredentials(r)
		if !s.rightHash(c.User, c.Hash) {
			writeJSON(w, http.StatusUnauthorized, failed)
			return
		}
		s.signIn(w, arch, "hashed_sid")
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	guard(mux, "/hashed", "/hashed/login", s.cookieSession("hashed_sid", arch))
}

// leakyRoutes serves "leaky": the page signs in with fetch, as "memory"
// does, and keeps the password in localStorage besides.
func (s *Site) leakyRoutes(mux *http.ServeMux) {
	const arch = "leaky"
	mux.HandleFunc("GET /leaky/login", func(w http.ResponseWriter, r *http.Request) {
		page(w, http.StatusOK, "Sign in", leakyLoginPage)
	})
	mux.HandleFunc("POST /api/leaky", func(w http.ResponseWriter, r *http.Request) {
		c := readCredentials(r)
		if !s.rightPassword(c.User, c.Password) {
			writeJSON(w, http.StatusUnauthorized, failed)
			return
		}
		s.signIn(w, arch, "leaky_sid")
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	})
	guard(mux, "/leaky", "/leaky/login", s.cookieSession("leaky_sid", arch))
}
