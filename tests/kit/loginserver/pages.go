package loginserver

// template wraps every page. Its first script runs before the page's own
// and gives the test, in the page's own world, booleans only: whether a
// field holds a value (the value goes in as an argument), whether every
// field is gone or empty, and whether this document came back from the
// back/forward cache. Every page's first password or code field has the
// id pw (or otp, or b0..b5 for boxes).
const template = `<!doctype html>
<html><head><meta charset="utf-8"><title>fillgate test login</title>
<style>body { margin: 20px; font: 16px sans-serif; } input { width: 220px; height: 28px; margin: 4px; box-sizing: border-box; }
#row input { width: 32px; }</style>
<script>
(() => {
  const valueOf = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").get;
  const state = { restored: false };
  addEventListener("pageshow", (e) => { if (e.persisted) state.restored = true; });
  const inputs = (d) => Array.from(d.querySelectorAll("input"));
  const log = [];
  for (const t of ["input", "change", "submit"]) addEventListener(t, (e) => log.push(t), true);
  window.fg = Object.freeze({
    // quiet: no input, change or submit event so far; allEmpty: every
    // input is empty.
    quiet: () => log.length === 0,
    allEmpty: () => inputs(document).every((i) => valueOf.call(i) === ""),
    is: (el, v) => valueOf.call(el) === v,
    // holds: some input of the page (or of its frames) holds v.
    holds: (v) => inputs(document).some((i) => valueOf.call(i) === v) ||
      Array.from(frames).some((f) => { try { return f.fg.holds(v); } catch { return false; } }),
    // left: the field with this id is gone or empty.
    left: (id) => { const f = document.getElementById(id); return !f || valueOf.call(f) === ""; },
    restored: () => state.restored,
  });
})();
</script></head><body>
BODY
</body></html>`

// splitBoxes are six single-character code boxes named c0..c5 that move
// the focus on when filled, as most split-code widgets do.
const splitBoxes = `<div id=row>` +
	`<input id=b0 name=c0 maxlength=1 inputmode=numeric><input id=b1 name=c1 maxlength=1 inputmode=numeric>` +
	`<input id=b2 name=c2 maxlength=1 inputmode=numeric><input id=b3 name=c3 maxlength=1 inputmode=numeric>` +
	`<input id=b4 name=c4 maxlength=1 inputmode=numeric><input id=b5 name=c5 maxlength=1 inputmode=numeric></div>
<script>
const boxes = Array.from(document.querySelectorAll("#row input"));
boxes.forEach((b, i) => b.addEventListener("input", () => { if (b.value && boxes[i + 1]) boxes[i + 1].focus(); }));
</script>`

// pages are the login site's pages, by path. OTHER is replaced by the
// other origin (Server.SetOther).
var pages = map[string]string{
	"/welcome": `<p id=welcome>Welcome</p>`,

	// A classic form: POST, redirect to the welcome page.
	"/classic": `<form id=login method=post action=/classic/login>
<input id=user name=user autocomplete=username value=ada>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go>Sign in</button></form>`,

	// A classic form whose user-name field the page leaves empty: the
	// account is what the person (or the agent) types there.
	"/signin": `<form id=login method=post action=/classic/login>
<input id=user name=user autocomplete=username>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go>Sign in</button></form>`,

	// A two-step login: the username first, then the password.
	"/step1": `<form method=post action=/step1><input id=user name=user autocomplete=username><button>Next</button></form>`,
	"/step2": `<form method=post action=/step2/login><input type=hidden name=user value=ada>
<input id=pw name=password type=password autocomplete=current-password><button>Sign in</button></form>`,

	// A React 18 controlled form that logs in with fetch and stays on the
	// page: the welcome text replaces the form on success, an error shows
	// under the field (which keeps the value) on failure.
	"/react": `<div id=app></div>
<script src="/lib/react.js"></script><script src="/lib/react-dom.js"></script>
<script>
const h = React.createElement;
let current = "";
window.stateIs = (v) => current === v;
function Login() {
  const [pw, setPw] = React.useState("");
  const [error, setError] = React.useState("");
  const [done, setDone] = React.useState(false);
  current = pw;
  if (done) return h("p", { id: "welcome" }, "Welcome");
  const submit = async (e) => {
    e.preventDefault();
    const r = await fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: pw }) });
    if (r.ok) setDone(true); else setError("Wrong password");
  };
  return h("form", { id: "login", onSubmit: submit },
    h("input", { id: "pw", type: "password", autoComplete: "current-password", value: pw, onChange: (e) => setPw(e.target.value) }),
    h("button", { id: "go", type: "submit" }, "Sign in"),
    error ? h("p", { id: "error" }, error) : null);
}
ReactDOM.createRoot(document.getElementById("app")).render(h(Login));
</script>`,

	// One-time codes: one field, and six boxes that post with a button.
	"/otp": `<form method=post action=/otp/verify><input id=otp name=otp autocomplete=one-time-code inputmode=numeric>
<button>Verify</button></form>`,
	"/split": `<form method=post action=/otp/verify>` + splitBoxes + `<button>Verify</button></form>`,
	// Six boxes that submit by themselves once the last is filled: they
	// lock, post the code with fetch and go on to the welcome page.
	"/split-auto": `<form onsubmit="return false">` + splitBoxes + `</form>
<script>
boxes.forEach((b) => b.addEventListener("input", async () => {
  if (!boxes.every((x) => x.value)) return;
  boxes.forEach((x) => x.disabled = true);
  const r = await fetch("/api/otp", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ code: boxes.map((x) => x.value).join("") }) });
  if (r.ok) location.href = "/welcome"; else boxes.forEach((x) => { x.disabled = false; x.value = ""; });
}));
</script>`,

	// Validation stops the submit: a required checkbox left unchecked.
	"/required": `<form method=post action=/classic/login><input id=pw name=password type=password>
<label><input id=tos name=tos type=checkbox required> I accept the terms</label><button>Sign in</button></form>`,
	// The same, with a page that writes the value into that checkbox's
	// label: the result must still not carry it.
	"/required-hostile": `<form method=post action=/classic/login><input id=pw name=password type=password>
<label><input id=tos name=tos type=checkbox required> <span id=lbl>I accept</span></label><button>Sign in</button></form>
<script>pw.addEventListener("input", () => { if (pw.value) lbl.textContent = pw.value; });</script>`,
	// A form with two text fields and no submit button, and no script: it
	// has no implicit submission, so Enter submits nothing.
	"/no-button": `<form method=post action=/classic/login><input id=user name=user autocomplete=username>
<input id=pw name=password type=password autocomplete=current-password></form>`,
	// A submit button that stays disabled.
	"/disabled": `<form method=post action=/classic/login><input id=pw name=password type=password><button disabled>Sign in</button></form>`,

	// A field in no form: the page logs in on Enter with fetch, then goes
	// on to the welcome page.
	"/noform": `<input id=pw type=password autocomplete=current-password>
<script>
pw.addEventListener("keydown", async (e) => {
  if (e.key !== "Enter") return;
  const r = await fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: pw.value }) });
  if (r.ok) location.href = "/welcome";
});
</script>`,
	// A form whose button's click handler logs in with fetch and cancels
	// the click: a submit that skipped the handler would GET the password
	// into the URL.
	"/click-login": `<form id=login><input id=pw name=password type=password><button id=go>Sign in</button></form>
<script>
go.addEventListener("click", async (e) => {
  e.preventDefault();
  const r = await fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: pw.value }) });
  if (r.ok) location.href = "/welcome";
});
</script>`,

	// Forms that would send the value elsewhere.
	"/other-origin": `<form method=post action="OTHER/classic/login"><input id=pw name=password type=password><button>Sign in</button></form>`,
	"/formaction": `<form method=post action=/classic/login><input id=pw name=password type=password>
<button formaction="OTHER/classic/login">Sign in</button></form>`,
	"/form-attr": `<form id=evil method=post action="OTHER/classic/login"></form>
<form method=post action=/classic/login><input id=pw name=password type=password form=evil><button>Sign in</button></form>`,
	"/target-frame": `<form method=post action=/classic/login target=side><input id=pw name=password type=password><button>Sign in</button></form>
<iframe name=side src="/welcome" width=300 height=60></iframe>`,
	// Forms that would put the value in their URL: method=get, and a
	// post form whose submit button says formmethod=get. Both send to
	// /classic/login, which takes only POST: a GET there is recorded, so a
	// value in its URL would show.
	"/get-form": `<form id=login method=get action=/classic/login>
<input id=user name=user autocomplete=username>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go>Sign in</button></form>`,
	"/formmethod-get": `<form id=login method=post action=/classic/login>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go formmethod=get>Sign in</button></form>`,
	// A form that names no method, on a page whose script does not take
	// the submit: the browser submits it with GET. sentEntries() is how
	// many entries the last submission's entry list held when the page's
	// own formdata listener saw it (-1 before any).
	"/no-method": `<form id=login action=/classic/login>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go>Sign in</button></form>
<script>
let entries = -1;
addEventListener("formdata", (e) => { entries = Array.from(e.formData.keys()).length; });
window.sentEntries = () => entries;
</script>`,
	// The same, with a submit handler that stops the event on its way
	// (without cancelling the submit).
	"/no-method-stopped": `<form id=login action=/classic/login>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go>Sign in</button></form>
<script>login.addEventListener("submit", (e) => e.stopPropagation());</script>`,
	// Six boxes in a form that names no method and submits itself, with
	// GET, once the last is filled.
	"/split-get": `<form id=login action=/otp/verify>` + splitBoxes + `</form>
<script>
boxes.forEach((b) => b.addEventListener("input", () => { if (boxes.every((x) => x.value)) login.requestSubmit(); }));
</script>`,
	// A form that names no method and logs in with fetch, sending a
	// FormData of the form that its submit handler builds (after an await
	// with ?later): fillgate must leave that FormData alone.
	"/formdata-login": `<form id=login action=/classic/login>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go>Sign in</button></form>
<script>
login.addEventListener("submit", async (e) => {
  e.preventDefault();
  let data = new FormData(login);
  if (location.search.includes("later")) { await null; data = new FormData(login); }
  const r = await fetch("/api/login", { method: "POST", body: new URLSearchParams(data) });
  if (r.ok) location.href = "/welcome";
});
</script>`,
	// A page that flips its form to GET once the value is in.
	"/method-changes": `<form id=login method=post action=/classic/login><input id=pw name=password type=password><button>Sign in</button></form>
<script>pw.addEventListener("input", () => { login.method = "get"; });</script>`,
	// A login in a dialog whose form says method=dialog: its submit only
	// closes the dialog and sends nothing. closedWith() is the dialog's
	// return value once it closed ("" before).
	"/dialog": `<dialog id=dlg open><form id=login method=dialog>
<input id=pw name=password type=password autocomplete=current-password>
<button id=go value=signin>Sign in</button></form></dialog>
<script>window.closedWith = () => dlg.open ? "" : dlg.returnValue;</script>`,

	// A page whose script points the form elsewhere once the value is in.
	"/form-changes": `<form id=login method=post action=/classic/login><input id=pw name=password type=password><button>Sign in</button></form>
<script>pw.addEventListener("input", () => { login.action = "OTHER/classic/login"; });</script>`,

	// A login form in a frame whose submit removes the frame (the call
	// in it ends without an answer).
	"/frame-host": `<iframe id=fr src="/frame-login" width=400 height=120></iframe>
<script>window.dropFrame = () => document.getElementById("fr").remove();</script>`,
	"/frame-login": `<form id=login><input id=pw name=password type=password><button>Sign in</button></form>
<script>
login.addEventListener("submit", async (e) => {
  e.preventDefault();
  await fetch("/api/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ password: pw.value }) });
  parent.dropFrame();
});
</script>`,
}
