package inpage

import "strings"

// A page that hides the focused field (#f) from the person in one way,
// and the problem code every path must refuse it with.
type trick struct{ path, problem, body string }

// tricks hide the field itself.
var tricks = []trick{
	{"/trick/overlay-no-pointer-events", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:absolute;top:0;left:0;width:100%;height:300px;background:#fff;pointer-events:none">Log in elsewhere</div>`},
	{"/trick/popover-no-pointer-events", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div popover=manual id=p style="margin:0;border:0;padding:0;inset:0;width:100vw;height:100vh;background:#fff;pointer-events:none">Log in elsewhere</div>
<script>p.showPopover()</script>`},
	{"/trick/mask-image", "masked", `<input id=f type=password style="mask-image:linear-gradient(transparent,transparent)">`},
	{"/trick/webkit-mask", "masked", `<div style="-webkit-mask-image:linear-gradient(rgba(0,0,0,.02),rgba(0,0,0,.02))"><input id=f type=password></div>`},
	{"/trick/clip-path", "clipped", `<div style="clip-path:inset(0 0 0 97%)"><input id=f type=password></div>`},
	{"/trick/svg-filter", "filtered", `<svg width=0 height=0 style="position:absolute"><filter id=white><feFlood flood-color="#fff"/>` +
		`<feComposite operator="in" in2="SourceGraphic"/></filter></svg><div style="filter:url(#white)"><input id=f type=password></div>`},
	{"/trick/blend-brightness", "blended", `<div style="filter:brightness(0);mix-blend-mode:screen"><input id=f type=password></div>`},
	{"/trick/blur", "blurred", `<div style="filter:blur(10px)"><input id=f type=password></div>`},
	{"/trick/transparent-text", "unreadable", `<input id=f type=password style="color:transparent;background:transparent">`},
	{"/trick/text-as-background", "unreadable", `<input id=f type=password style="color:#fdfdfd;background:#fff">`},
	{"/trick/glyphs-over-field", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:absolute;top:30px;left:10px;font:48px/1 monospace;color:#fff;pointer-events:none">&#9608;&#9608;&#9608;&#9608;&#9608;&#9608;&#9608;&#9608;</div>`},
	{"/trick/full-page-label", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<label for=f style="position:fixed;inset:0;background:#fff;z-index:1">Click anywhere to continue</label>`},
	{"/trick/label-over-field", "covered", `<div style="position:relative"><input id=f type=password style="position:absolute;top:20px;left:10px">
<label for=f style="position:absolute;top:22px;left:14px;width:180px;height:20px;background:#eee">Password</label></div>`},
	{"/trick/box-shadow", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:absolute;top:0;left:0;width:1px;height:1px;box-shadow:0 0 0 3000px #fff"></div>`},
	{"/trick/outline", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:absolute;top:0;left:0;width:1px;height:1px;outline:3000px solid #fff"></div>`},
	{"/trick/pseudo-element", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<style>#cover::after{content:"";position:fixed;inset:0;background:#fff;pointer-events:none}</style><div id=cover style="position:absolute;top:0;left:0"></div>`},
	{"/trick/hole-at-centre", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px;margin:0">
<div style="position:absolute;background:#fff;top:0;left:0;width:100%;height:54px"></div>
<div style="position:absolute;background:#fff;top:56px;left:0;width:100%;height:200px"></div>
<div style="position:absolute;background:#fff;top:54px;left:0;width:123px;height:2px"></div>
<div style="position:absolute;background:#fff;top:54px;left:125px;width:500px;height:2px"></div>`},
	{"/trick/field-takes-no-clicks", "unclickable", `<input id=f type=password style="pointer-events:none">`},
	{"/trick/scaled-down", "tiny", `<div style="transform:scale(.3);transform-origin:0 0"><input id=f type=password></div>`},
	{"/trick/zoomed-out", "tiny", `<div style="zoom:.3"><input id=f type=password></div>`},
}

// chromiumTricks are overlays only IntersectionObserver v2 sees: painted
// where the scan of styles does not look. Firefox fills these pages (the
// README says so).
var chromiumTricks = []trick{
	{"/trick/text-shadow", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:absolute;top:-300px;left:0;font:200px/1 monospace;color:transparent;text-shadow:0 320px 0 #fff;pointer-events:none">&#9608;&#9608;&#9608;</div>`},
	{"/trick/pseudo-of-static-element", "covered", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<style>#cover::after{content:"";position:fixed;inset:0;background:#fff;pointer-events:none}</style><p id=cover style="margin-top:400px">The end</p>`},
}

// frameTricks hide the iframe that holds the login form (the other site's
// /password page): the same tricks, applied to the frame element.
var frameTricks = []trick{
	{"/frame-trick/overlay-no-pointer-events", "covered", frameAt("position:absolute;top:40px;left:20px",
		`<div style="position:absolute;top:0;left:0;width:100%;height:400px;background:#fff;pointer-events:none">Nothing here</div>`)},
	{"/frame-trick/popover-no-pointer-events", "covered", frameAt("position:absolute;top:40px;left:20px",
		`<div popover=manual id=p style="margin:0;border:0;padding:0;inset:0;width:100vw;height:100vh;background:#fff;pointer-events:none">x</div>
<script>p.showPopover()</script>`)},
	{"/frame-trick/mask-image", "masked", frameAt("mask-image:linear-gradient(transparent,transparent)", "")},
	{"/frame-trick/clip-path", "clipped", frameAt("clip-path:inset(0 0 0 97%)", "")},
	{"/frame-trick/svg-filter", "filtered", frameAt("filter:url(#white)", `<svg width=0 height=0 style="position:absolute"><filter id=white>`+
		`<feFlood flood-color="#fff"/><feComposite operator="in" in2="SourceGraphic"/></filter></svg>`)},
	{"/frame-trick/blend-brightness", "blended", frameAt("filter:brightness(0);mix-blend-mode:screen", "")},
	{"/frame-trick/blur", "blurred", frameAt("filter:blur(10px)", "")},
	{"/frame-trick/faint", "transparent", frameAt("opacity:.2", "")},
	{"/frame-trick/box-shadow", "covered", frameAt("position:absolute;top:40px;left:20px",
		`<div style="position:absolute;top:0;left:0;width:1px;height:1px;box-shadow:0 0 0 3000px #fff"></div>`)},
	{"/frame-trick/outline", "covered", frameAt("position:absolute;top:40px;left:20px",
		`<div style="position:absolute;top:0;left:0;width:1px;height:1px;outline:3000px solid #fff"></div>`)},
	{"/frame-trick/hole-at-centre", "covered", frameAt("position:absolute;top:40px;left:20px;border:0;width:420px;height:160px",
		`<div style="position:absolute;background:#fff;top:0;left:0;width:100%;height:115px"></div>
<div style="position:absolute;background:#fff;top:125px;left:0;width:100%;height:200px"></div>
<div style="position:absolute;background:#fff;top:115px;left:0;width:225px;height:10px"></div>
<div style="position:absolute;background:#fff;top:115px;left:235px;width:500px;height:10px"></div>`)},
	{"/frame-trick/scaled-down", "tiny", frameAt("transform:scale(.3);transform-origin:0 0", "")},
}

// frameAt is a page framing the other site's /password page in an iframe
// with style, followed by extra.
func frameAt(style, extra string) string {
	return `<iframe id=fr width=420 height=160 style="` + style + `"></iframe>
<script>fr.src = "http://localhost:" + location.port + "/password";</script>` + extra
}

// An ordinary page with a login field, and the main-world expression of
// its field; every path must fill it.
type ordinaryPage struct{ path, field, body string }

var ordinary = []ordinaryPage{
	{"/ok/dialog", "f", `<p>The page behind</p><dialog id=d><form method=dialog><label>Password <input id=f type=password></label>
<button>Sign in</button></form></dialog><script>d.showModal()</script>`},
	{"/ok/modal-with-backdrop", "f", `<p>The page behind</p><div style="position:fixed;inset:0;background:rgba(0,0,0,.5);z-index:10"></div>
<div style="position:fixed;top:100px;left:100px;width:300px;padding:20px;background:#fff;z-index:11;border-radius:8px;box-shadow:0 10px 30px rgba(0,0,0,.3)">
<label for=f>Password</label><input id=f type=password></div>`},
	{"/ok/near-the-edge-after-scrolling", "f", `<div style="height:1500px">Scroll down</div><label>Password <input id=f type=password></label>
<div style="height:1500px"></div><script>f.scrollIntoView({block: "end"})</script>`},
	{"/ok/transparent-background", "f", `<input id=f type=password style="background:transparent;border:1px solid #888">`},
	{"/ok/show-password-button", "f", `<div style="position:relative;display:inline-block"><input id=f type=password style="width:240px;margin:0">
<button type=button style="position:absolute;right:2px;top:2px;height:26px;width:34px;border:0;background:#eee">Show</button></div>`},
	{"/ok/show-password-button-rtl", "f", `<div dir=rtl style="position:relative;display:inline-block"><input id=f type=password style="width:240px;margin:0">
<button type=button style="position:absolute;left:2px;top:2px;height:26px;width:34px;border:0;background:#eee">הצג</button></div>`},
	{"/ok/floating-label", "f", `<style>.mf{position:relative;margin:30px}.mf input{width:240px;height:40px;border:1px solid #888;border-radius:4px;
padding:0 12px;margin:0;font-size:16px}.mf label{position:absolute;left:10px;top:0;padding:0 4px;background:#fff;color:#1976d2;
pointer-events:none;transform:translateY(-50%) scale(.75);transform-origin:left top}</style>
<div class=mf><input id=f type=password placeholder=" "><label for=f>Password</label></div>`},
	{"/ok/label-as-placeholder", "f", `<style>.fl{position:relative;display:inline-block;margin:20px}.fl input{width:240px;height:40px;padding:0 12px;margin:0;font-size:16px}
.fl label{position:absolute;left:14px;top:12px;color:#666;pointer-events:none}</style>
<div class=fl><input id=f type=password><label for=f>Password</label></div>`},
	{"/ok/clickable-label-as-placeholder", "f", `<style>.fl{position:relative;display:inline-block;margin:20px}.fl input{width:240px;height:40px;padding:0 12px;margin:0;font-size:16px}
.fl label{position:absolute;left:14px;top:12px;color:#666}</style>
<div class=fl><input id=f type=password><label for=f>Password</label></div>`},
	{"/ok/transparent-layer-above", "f", `<input id=f type=password style="position:absolute;top:40px;left:20px">
<div style="position:fixed;inset:0;z-index:5"></div>`},
	{"/ok/fade-in-finished", "f", `<style>@keyframes fade{from{opacity:0;transform:translateY(20px)}to{opacity:1;transform:none}}
.card{animation:fade .15s ease-out both}</style><div class=card><label>Password <input id=f type=password></label></div>`},
	{"/ok/open-shadow-root", "field()", `<div id=host></div><script>host.attachShadow({mode: "open"}).innerHTML =
'<style>input{width:200px;height:24px}</style><label>Password <input id=f type=password></label>';
window.field = () => host.shadowRoot.getElementById("f");</script>`},
	{"/ok/closed-shadow-root", "field()", closedShadowPage},
	{"/ok/bootstrap", "f", bootstrapCSS + `<div class=container><form><div class=mb-3><label for=u class=form-label>Email</label>
<input class=form-control id=u type=email></div><div class=mb-3><label for=f class=form-label>Password</label>
<input class=form-control id=f type=password></div><button class="btn btn-primary">Sign in</button></form></div>`},
	{"/ok/bootstrap-floating-labels", "f", bootstrapCSS + `<div class=container><div class="form-floating mb-3">
<input type=email class=form-control id=u placeholder=name@example.com><label for=u>Email address</label></div>
<div class=form-floating><input type=password class=form-control id=f placeholder=Password><label for=f>Password</label></div></div>`},
	{"/ok/material-outlined", "f", `<style>.root{position:relative;display:inline-flex;margin:30px;font-family:sans-serif;border-radius:4px}
.inp{font:inherit;padding:16.5px 14px;border:0;box-sizing:content-box;background:none;height:1.4375em;margin:0;display:block;width:220px;outline:0}
fieldset{text-align:left;position:absolute;inset:-5px 0 0;margin:0;padding:0 8px;pointer-events:none;border-radius:inherit;border:2px solid #1976d2;overflow:hidden}
legend{float:unset;width:auto;overflow:hidden;display:block;padding:0;height:11px;font-size:.75em;visibility:hidden;white-space:nowrap}
legend span{padding:0 5px;display:inline-block;opacity:0;visibility:visible}
label{position:absolute;left:0;top:0;transform:translate(14px,-9px) scale(.75);transform-origin:top left;pointer-events:none;color:#1976d2;z-index:1}</style>
<div class=root><label for=f>Password</label><input class=inp id=f type=password><fieldset aria-hidden=true><legend><span>Password</span></legend></fieldset></div>`},
	{"/ok/tailwind-leading-icon", "f", `<style>*{box-sizing:border-box}.w{max-width:24rem;margin:2rem}.rel{position:relative}
input{appearance:none;background:#fff;border:1px solid #6b7280;border-radius:.375rem;padding:.5rem .75rem .5rem 2.5rem;font-size:1rem;line-height:1.5rem;display:block;width:100%;margin:0}
input:focus{outline:2px solid transparent;outline-offset:2px;box-shadow:0 0 0 0 #fff,0 0 0 1px #2563eb;border-color:#2563eb}
.icon{pointer-events:none;position:absolute;top:0;bottom:0;left:0;display:flex;align-items:center;padding-left:.75rem}
.icon svg{width:1.25rem;height:1.25rem;color:#9ca3af}</style>
<div class=w><label for=f style="display:block">Password</label><div class=rel><div class=icon><svg viewBox="0 0 20 20" fill="currentColor">
<path d="M5 9V7a5 5 0 0110 0v2a2 2 0 012 2v5a2 2 0 01-2 2H5a2 2 0 01-2-2v-5a2 2 0 012-2z"/></svg></div>
<input id=f type=password placeholder="••••••••"></div></div>`},
	{"/ok/borderless-iframe", "", frameAt("border:0", "")},
}

// closedShadowPage holds the field in a closed shadow root inside another
// closed shadow root; only the page keeps references to them.
const closedShadowPage = `<div id=host></div><script>
{
  const outer = host.attachShadow({mode: "closed"});
  outer.innerHTML = '<p>Sign in</p><login-box></login-box>';
  const inner = outer.querySelector("login-box").attachShadow({mode: "closed"});
  inner.innerHTML = '<style>input{width:200px;height:24px}</style><label>Password <input id=f type=password></label>';
  window.field = () => inner.getElementById("f");
}
</script>`

// bootstrapCSS is the part of Bootstrap 5.3's default styles a login form
// uses (forms, floating labels, buttons), written out here.
const bootstrapCSS = `<style>
*,::after,::before{box-sizing:border-box}body{font-family:system-ui,sans-serif;line-height:1.5;color:#212529}
.container{max-width:400px;margin:2rem auto}.mb-3{margin-bottom:1rem}.form-label{margin-bottom:.5rem;display:inline-block}
.form-control{display:block;width:100%;height:auto;padding:.375rem .75rem;margin:0;font-size:1rem;font-weight:400;line-height:1.5;color:#212529;
background-color:#fff;background-clip:padding-box;border:1px solid #dee2e6;appearance:none;border-radius:.375rem;
transition:border-color .15s ease-in-out,box-shadow .15s ease-in-out}
.form-control:focus{color:#212529;background-color:#fff;border-color:#86b7fe;outline:0;box-shadow:0 0 0 .25rem rgba(13,110,253,.25)}
.form-floating{position:relative}
.form-floating>.form-control{height:calc(3.5rem + 2px);min-height:calc(3.5rem + 2px);line-height:1.25;padding:1rem .75rem}
.form-floating>label{position:absolute;top:0;left:0;z-index:2;height:100%;padding:1rem .75rem;overflow:hidden;text-align:start;
text-overflow:ellipsis;white-space:nowrap;pointer-events:none;border:1px solid transparent;transform-origin:0 0;
transition:opacity .1s ease-in-out,transform .1s ease-in-out}
.form-floating>.form-control::placeholder{color:transparent}
.form-floating>.form-control:focus,.form-floating>.form-control:not(:placeholder-shown){padding-top:1.625rem;padding-bottom:.625rem}
.form-floating>.form-control:focus~label,.form-floating>.form-control:not(:placeholder-shown)~label{color:rgba(33,37,41,.65);
transform:scale(.85) translateY(-.5rem) translateX(.15rem)}
.form-floating>.form-control:focus~label::after,.form-floating>.form-control:not(:placeholder-shown)~label::after{position:absolute;
inset:1rem .375rem;z-index:-1;height:1.5em;content:"";background-color:#fff;border-radius:.375rem}
.btn{display:inline-block;padding:.375rem .75rem;font-size:1rem;border:1px solid transparent;border-radius:.375rem}
.btn-primary{color:#fff;background-color:#0d6efd;border-color:#0d6efd}
</style>`

func init() {
	for _, p := range append(tricks, chromiumTricks...) {
		testPages[p.path] = p.body
	}
	for _, p := range frameTricks {
		testPages[p.path] = p.body
	}
	for _, p := range ordinary {
		testPages[p.path] = p.body
	}
}

// inFrame reports whether an ordinary page's field is in the framed page.
func (p ordinaryPage) inFrame() bool { return p.field == "" }

// name is a subtest name for a page path.
func name(path string) string { return strings.TrimPrefix(path, "/") }
