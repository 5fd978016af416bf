package inpage

// pageHTML wraps a test page's body. Its first script, which runs before any
// of the page's own, keeps the original value getter and records input and
// change events, so the test can ask the page (and only get a boolean back)
// whether a field holds a value even on a page that overrides prototypes.
func pageHTML(body string) string {
	return `<!doctype html>
<html><head><meta charset="utf-8"><title>fillgate test</title>
<style>body { font: 16px sans-serif; margin: 20px; } input { width: 200px; height: 24px; margin: 4px; }</style>
<script>
(() => {
  const valueGet = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").get;
  const events = [];
  const note = (e) => events.push({ id: e.composedPath()[0].id, type: e.type, trusted: e.isTrusted });
  addEventListener("input", note, true);
  addEventListener("change", note, true);
  window.fg = Object.freeze({
    is: (el, v) => valueGet.call(el) === v,
    events,
    trustedInput: (id) => events.some((e) => e.id === id && e.type === "input" && e.trusted),
    count: (type) => events.filter((e) => e.type === type).length,
  });
})();
</script></head><body>
` + body + `
</body></html>`
}

const splitBoxes = `<form id=form onsubmit="return false">
<p>Enter the code</p>
<div id=row>
<input id=b0 maxlength=1 inputmode=numeric style="width:24px"><input id=b1 maxlength=1 inputmode=numeric style="width:24px"><input id=b2 maxlength=1 inputmode=numeric style="width:24px"><input id=b3 maxlength=1 inputmode=numeric style="width:24px"><input id=b4 maxlength=1 inputmode=numeric style="width:24px"><input id=b5 maxlength=1 inputmode=numeric style="width:24px">
</div></form>
<script>
// Like most split-code widgets: move to the next box after each character.
const boxes = [...document.querySelectorAll("#row input")];
boxes.forEach((b, i) => b.addEventListener("input", () => { if (b.value && boxes[i + 1]) boxes[i + 1].focus(); }));
window.code = () => boxes.map((b) => b.value).join("");
</script>`

// reactLike emulates React's controlled input: React keeps a "tracker" of
// the value it last saw on the element itself (an own "value" property in
// the page's world) and ignores an input event when the element's value
// equals the tracker's, so a value set through that property never reaches
// the component state. reject additionally makes the component refuse
// typed (InputEvent) changes and re-render its old state, like a framework
// that validates keystrokes; only a plain input event gets through.
func reactLike(reject bool) string {
	r := "false"
	if reject {
		r = "true"
	}
	return `<input id=f type=password>
<script>
(() => {
  const input = document.getElementById("f");
  const proto = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  let tracked = "", state = "";
  Object.defineProperty(input, "value", {
    configurable: true,
    get() { return proto.get.call(this); },
    set(v) { tracked = String(v); proto.set.call(this, v); },
  });
  input.addEventListener("input", (e) => {
    const now = proto.get.call(input);
    if (now === tracked) return; // React: "no change", no onChange
    if (` + r + ` && e instanceof InputEvent) { input.value = state; return; } // rejected: re-render old state
    state = now; // onChange → setState
    input.value = state; // controlled re-render
  });
  window.stateIs = (v) => state === v;
})();
</script>`
}

const shadowPage = `<div id=host></div>
<script>
host.attachShadow({ mode: "open" }).innerHTML = '<label>Password <input id=f type=password></label>';
window.field = () => host.shadowRoot.getElementById("f");
</script>`

const iframePage = `<p>The login form is in a frame.</p>
<iframe id=fr src="/password" width=420 height=160></iframe>
<script>window.field = () => document.getElementById("fr").contentDocument.getElementById("f");</script>`

// hostilePage overrides, in its own (main) world, everything a naive
// in-page function would trust: document.activeElement (on the prototype
// and the instance, and by named elements that shadow document
// properties), the input type and value accessors, and
// Object.defineProperty. The value setter flags any call.
const hostilePage = `<img name=activeElement alt=""><img name=execCommand alt=""><img name=body alt="">
<input id=user type=text autocomplete=username><input id=pw type=password>
<script>
(() => {
  const pw = document.getElementById("pw");
  window.stolen = false;
  const vd = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value");
  Object.defineProperty(Document.prototype, "activeElement", { get() { return pw; } });
  Object.defineProperty(document, "activeElement", { get() { return pw; } });
  Object.defineProperty(HTMLInputElement.prototype, "type", { get() { return "password"; } });
  Object.defineProperty(HTMLInputElement.prototype, "readOnly", { get() { return false; } });
  Object.defineProperty(HTMLInputElement.prototype, "value", {
    get() { return vd.get.call(this); },
    set(v) { window.stolen = true; vd.set.call(this, v); },
  });
  Element.prototype.getBoundingClientRect = () => ({ left: 10, top: 10, width: 100, height: 20 });
  Document.prototype.execCommand = function () { window.stolen = true; return true; };
  EventTarget.prototype.dispatchEvent = function () { window.stolen = true; return true; };
  Object.defineProperty = function () { window.stolen = true; throw new Error("no"); };
})();
</script>`

// testPages are served to every in-page test.
var testPages = map[string]string{
	"/password":    `<form><label for=f>Password</label> <input id=f type=password autocomplete=current-password><input id=g type=text></form>`,
	"/prefilled":   `<input id=f type=password value="an older value">`,
	"/otp":         `<input id=f autocomplete="one-time-code" inputmode=numeric>`,
	"/split":       splitBoxes,
	"/react":       reactLike(false),
	"/reject":      reactLike(true),
	"/shadow":      shadowPage,
	"/iframe":      iframePage,
	"/hostile":     hostilePage,
	"/username":    `<input id=f type=text autocomplete=username>`,
	"/readonly":    `<input id=f type=password readonly>`,
	"/hidden":      `<input id=f type=password style="width:0;height:0;padding:0;border:0;margin:0">`,
	"/tiny":        `<input id=f type=password style="width:1px;height:1px;padding:0;border:0;margin:0">`,
	"/transparent": `<div style="opacity:0.3"><div style="opacity:0.2"><input id=f type=password></div></div>`,
	"/offscreen":   `<input id=f type=password style="position:fixed;top:-200px;left:10px">`,
	"/filtered":    `<div style="filter:opacity(5%) blur(1px)"><input id=f type=password></div>`,
	"/unpainted": `<input id=f type=password style="color:transparent;caret-color:transparent;background:transparent;` +
		`border:0;outline:none;box-shadow:none">`,
	"/covered": `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:absolute;top:30px;left:10px;width:300px;height:60px;background:#fff">Log in elsewhere</div>`,
}

// crossSitePage frames the password page from another site
// (http://localhost on the same test server), which Chromium runs in its
// own process. style is the iframe's inline style.
func crossSitePage(style string) string {
	return `<p>The login form is on another site.</p><input id=f type=password>
<script>
const fr = document.createElement("iframe");
fr.src = "http://localhost:" + location.port + "/password";
fr.width = 420; fr.height = 160; fr.style = "` + style + `";
document.body.append(fr);
</script>`
}

func init() {
	testPages["/xsite"] = crossSitePage("")
	testPages["/xsite-faint"] = crossSitePage("opacity: 0.05")
}
