//go:build linux

package e2e

import (
	"fmt"
	"net/http"
	"strings"
)

// loginPages are the pages the scenarios fill, and /frame-other, which
// frames the password page of the origin other. Fields sit at fixed
// positions so a test can click them by coordinates: the first field at
// (20..220, 20..50), the second at (20..220, 80..110).
func loginPages(other string) http.Handler {
	mux := http.NewServeMux()
	for path, body := range pageBodies {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			writePage(w, body)
		})
	}
	// A page that frames the password page of the other origin.
	mux.HandleFunc("/frame-other", func(w http.ResponseWriter, r *http.Request) {
		writePage(w, `<p style="position:absolute;left:20px;top:300px">A page that frames another site's login form.</p>
<iframe id=fr src="`+other+`/password" style="position:absolute;left:0;top:0;width:400px;height:260px;border:0"></iframe>`)
	})
	return mux
}

func writePage(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, strings.Replace(pageTemplate, "BODY", body, 1))
}

// pageTemplate wraps every page. Its first script runs before the page's
// own and keeps, in the page's world, a log of input, change and submit
// events, what the inputs of the form held when it was last submitted,
// and the original value getter, so the test can ask the page for
// booleans only: whether a field holds the secret (the secret goes in as
// an argument, a boolean comes out), whether a field got a trusted input
// event, whether anything was submitted, and whether a submit sent the
// secret.
const pageTemplate = `<!doctype html>
<html><head><meta charset="utf-8"><title>fillgate e2e login</title>
<style>body { margin: 0; font: 16px sans-serif; } input { box-sizing: border-box; }</style>
<script>
(() => {
  const valueOf = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").get;
  const log = [];
  const note = (e) => log.push({ id: e.composedPath()[0].id || "", type: e.type, trusted: e.isTrusted });
  let sent = [];
  addEventListener("input", note, true);
  addEventListener("change", note, true);
  addEventListener("submit", note, true);
  addEventListener("submit", (e) => { sent = Array.from(e.target.elements ?? [], (i) => i instanceof HTMLInputElement ? valueOf.call(i) : ""); }, true);
  window.fg = Object.freeze({
    is: (el, v) => valueOf.call(el) === v,
    allEmpty: () => Array.from(document.querySelectorAll("input")).every((i) => valueOf.call(i) === ""),
    trustedInput: (id) => log.some((e) => e.id === id && e.type === "input" && e.trusted),
    untrustedInput: () => log.some((e) => e.type === "input" && !e.trusted),
    onlyInputOn: (ids) => log.every((e) => ids.includes(e.id) && (e.type === "input" || e.type === "change")),
    quiet: () => log.length === 0,
    submitted: () => log.some((e) => e.type === "submit"),
    sent: (v) => sent.includes(v),
  });
})();
</script></head><body>
BODY
</body></html>`

// field places an input at row 0 (top 20px) or row 1 (top 80px).
func field(row int, attrs string) string {
	return fmt.Sprintf(`<input %s style="position:absolute;left:20px;top:%dpx;width:200px;height:30px">`, attrs, 20+60*row)
}

// pageBodies are served on every origin, by path.
var pageBodies = map[string]string{
	"/password": `<form id=login onsubmit="return false">` +
		field(0, `id=user type=text autocomplete=username`) +
		field(1, `id=pw type=password autocomplete=current-password`) +
		`<button id=go style="position:absolute;left:20px;top:130px">Log in</button></form>`,
	"/otp": `<form onsubmit="return false">` + field(1, `id=otp autocomplete=one-time-code inputmode=numeric`) + `</form>`,
	"/split": `<form onsubmit="return false"><div id=row style="position:absolute;left:20px;top:80px">` +
		strings.Repeat(`<input maxlength=1 inputmode=numeric style="width:30px;height:30px;margin-right:4px">`, 6) +
		`</div></form>
<script>
// Like most split-code widgets: each box moves the focus on when filled.
const boxes = Array.from(document.querySelectorAll("#row input"));
boxes.forEach((b, i) => { b.id = "b" + i; b.addEventListener("input", () => { if (b.value && boxes[i + 1]) boxes[i + 1].focus(); }); });
window.codeIs = (v) => boxes.map((b) => b.value).join("") === v;
window.eachBoxTrusted = () => boxes.every((b) => fg.trustedInput(b.id));
</script>`,
	"/react":  reactPage,
	"/shadow": shadowPage,
	"/iframe": `<p style="position:absolute;left:20px;top:300px">The login form is in a same-origin frame.</p>
<iframe id=fr src="/password" style="position:absolute;left:0;top:0;width:400px;height:260px;border:0"></iframe>`,
	"/hidden":      field(0, `id=user type=text`) + `<input id=pw type=password style="position:absolute;left:20px;top:80px;width:0;height:0;padding:0;border:0">`,
	"/tiny":        field(0, `id=user type=text`) + `<input id=pw type=password style="position:absolute;left:20px;top:80px;width:1px;height:1px;padding:0;border:0">`,
	"/transparent": field(0, `id=user type=text`) + `<div style="opacity:0.3"><div style="opacity:0.2">` + field(1, `id=pw type=password`) + `</div></div>`,
	"/covered": field(0, `id=user type=text`) + field(1, `id=pw type=password`) +
		`<div style="position:absolute;left:10px;top:70px;width:300px;height:60px;background:#fff">Sign in somewhere else</div>`,
}

// reactPage is a controlled input as React makes one: the component's
// state is the source of truth, the element carries a tracker of the
// value last written through its "value" property, and an input event
// reaches the component (onChange, then setState and a re-render that
// writes the state back) only when the element's value differs from the
// tracker. A value written through the property alone never reaches the
// state; stateIs tells whether the component's state holds v.
const reactPage = `<div id=app></div>
<script>
(() => {
  const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  let state = "";
  const input = document.createElement("input");
  input.id = "pw"; input.type = "password";
  input.style = "position:absolute;left:20px;top:80px;width:200px;height:30px";
  let tracked = "";
  Object.defineProperty(input, "value", {
    configurable: true,
    get() { return proto.get.call(this); },
    set(v) { tracked = String(v); proto.set.call(this, v); },
  });
  const render = () => { if (input.value !== state) input.value = state; };
  input.addEventListener("input", () => {
    const now = proto.get.call(input);
    if (now === tracked) return;
    tracked = now;
    state = now; // onChange → setState
    render();
  });
  document.getElementById("app").append(input);
  render();
  window.stateIs = (v) => state === v;
})();
</script>`

// shadowPage puts the password field inside an open shadow root.
const shadowPage = `<div id=host style="position:absolute;left:20px;top:80px"></div>
<script>
document.getElementById("host").attachShadow({ mode: "open" }).innerHTML =
  '<input id=pw type=password style="width:200px;height:30px">';
window.field = () => document.getElementById("host").shadowRoot.getElementById("pw");
</script>`
