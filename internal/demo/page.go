package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// loginPage is the demo's sign-in form: a plain form that posts to the
// demo's own server on 127.0.0.1, which starts a session for any password
// (the demo knows none) and sends the browser on to the account page.
const loginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme — sign in</title>
<meta name="color-scheme" content="light dark">
<style>
body{font:16px/1.5 system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0}
form{display:grid;gap:.7rem;padding:2rem;border:1px solid #8884;border-radius:12px;min-width:20rem}
h1{margin:0 0 .5rem;font-size:1.3rem}
input{font:inherit;padding:.5rem;border:1px solid #8888;border-radius:6px}
</style></head>
<body><form id="login" method="post" action="/login">
<h1>Sign in to Acme</h1>
<label>Email <input id="user" name="user" autocomplete="username" value="ada@example.com"></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password" autofocus></label>
<button>Sign in</button>
</form></body></html>`

// accountPage is what a signed-in browser sees.
const accountPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme — your account</title>
<meta name="color-scheme" content="light dark">
<style>body{font:16px/1.5 system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0}</style></head>
<body><p id="signedin">Signed in to Acme as ada@example.com.</p></body></html>`

// site is the demo's login site: sessions kept in memory, keyed by a
// random cookie.
type site struct {
	mu       sync.Mutex
	sessions map[string]bool
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case r.URL.Path == "/login" && r.Method == http.MethodPost:
		if r.ParseForm() != nil || r.PostForm.Get("password") == "" {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		s.mu.Lock()
		s.sessions[id] = true
		s.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "acme_session", Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.Redirect(w, r, "/account", http.StatusSeeOther)
	case r.URL.Path == "/login":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(loginPage))
	case r.URL.Path == "/account" && s.signedIn(r):
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(accountPage))
	case r.URL.Path == "/account":
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	default:
		http.NotFound(w, r)
	}
}

// signedIn reports whether r carries a session the site started.
func (s *site) signedIn(r *http.Request) bool {
	c, err := r.Cookie("acme_session")
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[c.Value]
}

// servePage serves the login site on 127.0.0.1 and returns its login
// page's URL.
func servePage(ctx context.Context) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler:           &site{sessions: map[string]bool{}},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the demo notices when the page does not load
		}
	}()
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	return "http://" + ln.Addr().String() + "/login", stop, nil
}
