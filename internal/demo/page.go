package demo

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// loginPage is the demo's sign-in form. The password field takes focus on
// load; the form's script "signs in" without sending anything anywhere and
// replaces the form with a welcome, as a single-page app would.
const loginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme — sign in</title>
<meta name="color-scheme" content="light dark">
<style>
body{font:16px/1.5 system-ui,sans-serif;display:grid;place-items:center;min-height:90vh;margin:0}
form{display:grid;gap:.7rem;padding:2rem;border:1px solid #8884;border-radius:12px;min-width:20rem}
h1{margin:0 0 .5rem;font-size:1.3rem}
input{font:inherit;padding:.5rem;border:1px solid #8888;border-radius:6px}
#filled{color:#1a7f37;min-height:1.5em}
</style></head>
<body><form id="login">
<h1>Sign in to Acme</h1>
<label>Email <input id="user" autocomplete="username" value="ada@example.com"></label>
<label>Password <input id="password" type="password" autocomplete="current-password" autofocus></label>
<div id="filled"></div>
<button>Sign in</button>
</form>
<p id="signedin" hidden>Signed in to Acme (the page got the password; nothing left this computer).</p>
<script>
const pw = document.getElementById('password');
pw.addEventListener('input', e => {
  document.getElementById('filled').textContent =
    pw.value ? 'The password field was filled' + (e.isTrusted ? ' (a trusted input event).' : '.') : '';
});
document.getElementById('login').addEventListener('submit', e => {
  e.preventDefault();
  if (!pw.value) return;
  e.target.remove();
  document.getElementById('signedin').hidden = false;
});
</script></body></html>`

// servePage serves the login page on 127.0.0.1 and returns its URL.
func servePage(ctx context.Context) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write([]byte(loginPage))
		}),
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
