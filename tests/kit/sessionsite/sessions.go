package sessionsite

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"time"
)

// entry is one piece of server-side state that a random id stands for (in
// a cookie, a token, a URL or a page).
type entry struct {
	arch    string // the archetype it belongs to
	kind    string // what it is: session, pending, pre, state, code, token
	user    string
	bound   string // a random value tied to it: the CSRF token, the tab value, the other cookies, the OAuth state
	expires time.Time
}

// Kinds of entries.
const (
	kindSession = "session" // a signed-in session
	kindPending = "pending" // a two-step login between its steps
	kindPre     = "pre"     // a pre-session holding a CSRF token
	kindState   = "state"   // an OAuth state App issued
	kindCode    = "code"    // an OAuth code the IdP issued, good once
	kindToken   = "token"   // a bearer token
)

// issue keeps a new entry and returns its random id.
func (s *Site) issue(arch, kind, user, bound string) string {
	id := rand.Text()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries[id] = &entry{arch: arch, kind: kind, user: user, bound: bound, expires: time.Now().Add(lifetime)}
	return id
}

// lookup returns the live entry id of archetype arch and kind kind.
func (s *Site) lookup(arch, kind, id string) (entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[id]
	if !ok || e.arch != arch || e.kind != kind || time.Now().After(e.expires) {
		return entry{}, false
	}
	return *e, true
}

// take is lookup, and the entry is gone afterwards (an id good once).
func (s *Site) take(arch, kind, id string) (entry, bool) {
	e, ok := s.lookup(arch, kind, id)
	if ok {
		s.drop(id)
	}
	return e, ok
}

// drop forgets the entry id.
func (s *Site) drop(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, id)
}

// fromCookie looks up the entry whose id is in r's cookie name.
func (s *Site) fromCookie(r *http.Request, name, arch, kind string) (entry, bool) {
	c, err := r.Cookie(name)
	if err != nil {
		return entry{}, false
	}
	return s.lookup(arch, kind, c.Value)
}

// rightPassword reports whether user and pw are the account's (constant
// time in the password).
func (s *Site) rightPassword(user, pw string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return user == User && len(s.right) > 0 && subtle.ConstantTimeCompare([]byte(pw), s.right) == 1
}

// rightHash reports whether user and the hex SHA-256 h are the account's.
func (s *Site) rightHash(user, h string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if user != User || len(s.right) == 0 {
		return false
	}
	sum := sha256.Sum256(s.right)
	want := []byte(hex.EncodeToString(sum[:]))
	defer clear(want)
	return subtle.ConstantTimeCompare([]byte(h), want) == 1
}

// setCookie adds a Set-Cookie header with exactly these attributes.
func setCookie(w http.ResponseWriter, name, value, attrs string) {
	w.Header().Add("Set-Cookie", name+"="+value+"; "+attrs)
}

// dropCookie tells the browser to forget the cookie name (Path=/).
func dropCookie(w http.ResponseWriter, name string) {
	setCookie(w, name, "", "Path=/; Max-Age=0")
}

// sessionAttrs are the attributes of the plain session cookies.
const sessionAttrs = "Path=/; HttpOnly; SameSite=Lax"

// signIn opens a session of arch for the user, sets it in the cookie name
// and counts the login.
func (s *Site) signIn(w http.ResponseWriter, arch, name string) {
	setCookie(w, name, s.issue(arch, kindSession, User, ""), sessionAttrs)
	s.login(arch)
}

// guard serves GET prefix/home and prefix/whoami on mux for the sessions
// that who finds: home shows the welcome page, or sends the browser to
// login (303); whoami answers 200 and the user name, or 401.
func guard(mux *http.ServeMux, prefix, login string, who func(*http.Request) (string, bool)) {
	mux.HandleFunc("GET "+prefix+"/home", func(w http.ResponseWriter, r *http.Request) {
		user, ok := who(r)
		if !ok {
			http.Redirect(w, r, login, http.StatusSeeOther)
			return
		}
		page(w, http.StatusOK, "Home", welcome(user))
	})
	mux.HandleFunc("GET "+prefix+"/whoami", func(w http.ResponseWriter, r *http.Request) {
		user, ok := who(r)
		whoami(w, user, ok)
	})
}

// whoami answers a whoami request: 200 and the user, or 401.
func whoami(w http.ResponseWriter, user string, ok bool) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("not signed in"))
		return
	}
	_, _ = w.Write([]byte(user))
}

// cookieSession returns a who function for guard: the session of arch
// whose id is in the cookie name.
func (s *Site) cookieSession(name, arch string) func(*http.Request) (string, bool) {
	return func(r *http.Request) (string, bool) {
		e, ok := s.fromCookie(r, name, arch, kindSession)
		return e.user, ok
	}
}
