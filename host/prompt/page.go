package prompt

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fillgate/fillgate/host/fill"
)

// pageStyle is the only style on any page. The CSP allows it by hash, so
// it must reach the browser byte for byte as written here.
const pageStyle = `
:root { color-scheme: light dark; --bg: #f4f5f7; --fg: #1b1f24; --muted: #57606a;
  --card: #ffffff; --line: #d0d7de; --accent: #0b57d0; --on-accent: #ffffff; --warn: #9a3412; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --card: #161b22;
    --line: #30363d; --accent: #7fb0ff; --on-accent: #0d1117; --warn: #fdba74; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
main { max-width: 34rem; margin: .75rem auto; padding: 1rem 1.25rem;
  background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
@media (max-width: 36rem) { main { margin: 0; border: 0; border-radius: 0; min-height: 100vh; } }
h1 { font-size: 1.15rem; margin: 0 0 .75rem; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem .9rem; margin: 0 0 .75rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; font-size: .95em; }
p { margin: .5rem 0; }
.note, .hint { color: var(--muted); font-size: .9rem; }
.msg { color: var(--warn); font-weight: 600; }
label { display: block; font-weight: 600; margin: .75rem 0 .3rem; }
input { width: 100%; font: inherit; padding: .55rem .7rem; border: 1px solid var(--line);
  border-radius: 8px; background: var(--bg); color: var(--fg); }
input:focus, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; }
.buttons { display: flex; gap: .6rem; margin-top: .75rem; align-items: center; }
.buttons .hint { margin: 0 0 0 auto; }
button { font: inherit; padding: .5rem 1.1rem; border-radius: 8px; border: 1px solid var(--line);
  background: var(--card); color: var(--fg); cursor: pointer; }
button.send { background: var(--accent); border-color: var(--accent); color: var(--on-accent); font-weight: 600; }
button:disabled, input:disabled { opacity: .55; cursor: default; }
.secret.typed { animation: typed .15s; }
@keyframes typed { from { border-color: var(--accent); } }
h2 { font-size: 1.05rem; margin: .75rem 0 .25rem; }
[hidden] { display: none !important; }
`

// pageScript runs the form. It is the only script on any page, allowed by
// its hash in the CSP, so it must reach the browser byte for byte as
// written here; everything it needs is in the page's data-* attributes.
// It encrypts the answer to the prompt's key before it leaves the page
// (host/PROTOCOL.md, "The prompt's answer"), clears the field, and posts
// with fetch, so no response is ever rendered as a page and no form is
// ever submitted for the browser to remember. It disables everything at
// the page's own deadline, and as soon as its watch on the prompt ends
// (fillgate answered, closed the prompt or went away). Its state is
// "open", "busy" while an answer is on its way, then the final state
// finish shows.
//
// What the person types lives only in the script's closure, never in the
// page: every edit of the field goes through its beforeinput handler
// (typing and pasting append, Backspace takes the last character back, an
// edit of everything after select-all or any other deletion starts over;
// IME text is taken at compositionend), and the field shows the same mask
// whatever it holds. So nothing that reads the page (an agent's snapshot
// of this tab, the accessibility tree, a password manager) learns the
// value or even its length.
//
// html/template drops JavaScript comments, which would break the hash, so
// the script has none.
const pageScript = `
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const box = $("answer"), field = $("value"), send = $("send"), cancel = $("cancel");
  const form = $("cancelform"), hint = $("hint"), empty = $("empty");
  const csrf = form.elements.csrf.value, path = box.dataset.path;
  const url = new URL(path, location.href).href;
  const closesIn = box.dataset.closesIn === "" ? Infinity : Number(box.dataset.closesIn);
  const t0 = performance.now(), d0 = Date.now();
  const enc = new TextEncoder(), watch = new AbortController();
  let state = "open";
  const MASK = "\u2022".repeat(8);
  let typed = [];
  const shown = () => {
    field.value = typed.length ? MASK : "";
    field.setSelectionRange(field.value.length, field.value.length);
    field.classList.remove("typed");
    void field.offsetWidth;
    field.classList.add("typed");
  };
  const forget = () => { typed.fill(""); typed = []; };
  const all = () => field.value !== "" && field.selectionStart === 0 && field.selectionEnd === field.value.length;

  const expired = () => performance.now() - t0 >= closesIn || Date.now() - d0 >= closesIn;
  const b64 = (bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(""));
  const b64url = (bytes) => b64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  const unb64url = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
    return out;
  };

  function finish(which) {
    if (state !== "open" && state !== "busy") return;
    state = which;
    forget();
    field.value = "";
    field.disabled = send.disabled = cancel.disabled = true;
    watch.abort();
    box.hidden = form.hidden = empty.hidden = true;
    for (const el of document.querySelectorAll("[data-when]")) el.hidden = el.dataset.when !== which;
    document.body.dataset.state = which;
  }

  const post = (action, extra, signal) => fetch(url, {
    method: "POST", body: new URLSearchParams({ csrf, action, ...extra }),
    credentials: "same-origin", cache: "no-store", redirect: "error", signal,
  });

  async function seal(action, payload) {
    const subtle = crypto.subtle, info = enc.encode("fillgate-prompt-v1 " + path + " " + action);
    const hostRaw = unb64url(box.dataset.key);
    const host = await subtle.importKey("raw", hostRaw, { name: "X25519" }, false, []);
    const mine = await subtle.generateKey({ name: "X25519" }, false, ["deriveBits"]);
    const mineRaw = new Uint8Array(await subtle.exportKey("raw", mine.publicKey));
    const shared = await subtle.deriveBits({ name: "X25519", public: host }, mine.privateKey, 256);
    const hkdf = await subtle.importKey("raw", shared, "HKDF", false, ["deriveKey"]);
    const key = await subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: concat(hostRaw, mineRaw), info },
      hkdf, { name: "AES-GCM", length: 256 }, false, ["encrypt"]);
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const plain = enc.encode(JSON.stringify(payload));
    const sealed = await subtle.encrypt({ name: "AES-GCM", iv, additionalData: info }, key, plain);
    plain.fill(0);
    return b64url(concat(mineRaw, iv, new Uint8Array(sealed)));
  }

  const outcome = (res, ok) => res.ok ? ok : res.status === 410 ? "closed" : "failed";

  async function submit() {
    if (state !== "open") return;
    if (expired()) return finish("expired");
    if (typed.length === 0) {
      empty.hidden = false;
      return field.focus();
    }
    state = "busy";
    const value = typed.join("");
    forget();
    field.value = "";
    field.disabled = send.disabled = cancel.disabled = true;
    try {
      const answer = await seal("submit", { value: b64(enc.encode(value)) });
      finish(outcome(await post("submit", { answer }), "sent"));
    } catch {
      finish("failed");
    }
  }

  async function cancelNow() {
    if (state !== "open") return;
    state = "busy";
    forget();
    field.value = "";
    try {
      finish(outcome(await post("cancel", {}), "cancelled"));
    } catch {
      finish("closed");
    }
  }

  (async () => {
    try {
      const res = await post("watch", {}, watch.signal);
      if (res.ok && res.body) for (const r = res.body.getReader(); !(await r.read()).done; );
    } catch {}
    if (state === "open") finish("closed");
  })();

  field.addEventListener("beforeinput", (e) => {
    if (e.inputType === "insertCompositionText") return;
    e.preventDefault();
    if (state !== "open") return;
    const text = e.dataTransfer ? e.dataTransfer.getData("text/plain") : e.data;
    if (e.inputType.startsWith("insert")) {
      if (all()) forget();
      if (text) typed.push(...text.replace(/[\r\n]+$/, ""));
    } else if (e.inputType === "deleteContentBackward" && !all()) {
      typed.pop();
    } else {
      forget();
    }
    empty.hidden = true;
    shown();
  });
  field.addEventListener("compositionend", (e) => {
    if (state === "open" && e.data) typed.push(...e.data);
    shown();
  });
  field.addEventListener("input", (e) => { if (!e.isComposing) shown(); });
  field.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.isComposing) { e.preventDefault(); submit(); }
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); cancelNow(); }
  });
  send.addEventListener("click", submit);
  form.addEventListener("submit", (e) => { e.preventDefault(); cancelNow(); });
  addEventListener("pagehide", () => { forget(); field.value = ""; });
  document.addEventListener("visibilitychange", () => { if (state === "open" && expired()) finish("expired"); });
  if (closesIn !== Infinity) setTimeout(() => { if (state === "open") finish("expired"); }, Math.max(0, closesIn));

  if (!window.isSecureContext || !crypto.subtle) return finish("failed");
  box.hidden = send.hidden = hint.hidden = false;
  if (expired()) finish("expired");
  else field.focus();
})();
`

// csp is the Content-Security-Policy of every response: nothing loads,
// the page's script may talk only to the prompt itself (connect-src) and
// the Cancel form post only there, no framing, and the one style and the
// one script run by hash.
var csp = "default-src 'none'; style-src " + cspHash(pageStyle) +
	"; script-src " + cspHash(pageScript) +
	"; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// cspHash is the CSP source expression that allows an inline element
// whose text is s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

const pageHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<style>` + pageStyle + `</style>
</head>
<body>
<main>
`

const pageFoot = `</main>
</body>
</html>
`

// formBody is the prompt. The field sits outside any form: the script
// sends what is typed, encrypted, and nothing else can (a browser's
// password manager sees no password form, and without JavaScript there is
// no way to send it at all). The Cancel form works without JavaScript.
// The final states are in the page already; the script shows one.
const formBody = `<h1>{{.Label}} for <code dir="ltr">{{.Service}}</code></h1>
<dl>
<dt>Asked by</dt><dd><code dir="ltr">{{.Agent}}</code></dd>
<dt>Service</dt><dd><code dir="ltr">{{.Service}}</code></dd>
<dt>Typed into</dt><dd>the focused {{.Noun}} field of <code dir="ltr">{{.Origin}}</code></dd>
{{- if .Via}}
<dt>Typed by</dt><dd>{{.Via}}</dd>
{{- end}}
<dt>Open until</dt><dd>{{.Until}}</dd>
</dl>
<p class="note">The agent never sees what you type: fillgate types it into that
field and tells the agent only whether it worked.</p>
<noscript><p class="msg" role="alert">This prompt needs JavaScript for 127.0.0.1: it encrypts what
you type before it leaves this page, and without it nothing can be sent. You can still cancel.</p></noscript>
{{- if .Message}}
<p class="msg" role="alert">{{.Message}}</p>
{{- end}}
<div id="answer" hidden data-key="{{.Key}}" data-path="{{.Action}}" data-closes-in="{{.ClosesIn}}">
<label for="value">{{.Label}}</label>
<input id="value" class="secret" type="text" required spellcheck="false" autocapitalize="off" autocorrect="off"
 aria-describedby="masked" {{if .OTP}}autocomplete="one-time-code" inputmode="numeric"{{else}}autocomplete="off"{{end}}>
<p id="masked" class="hint">The field shows the same dots however much you type: what you type stays out of this page.</p>
<p id="empty" class="msg" role="alert" hidden>Nothing was typed. Type the {{.Noun}}, or choose Cancel.</p>
</div>
<form id="cancelform" method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="buttons">
<button id="send" class="send" type="button" hidden>Send</button>
<button id="cancel" type="submit" name="action" value="cancel">Cancel</button>
<span id="hint" class="hint" hidden>Enter sends, Esc cancels.</span>
</div>
</form>
{{- range .Finals}}
<div class="final" data-when="{{.When}}" hidden><h2>{{.Headline}}</h2><p>{{.Detail}}</p></div>
{{- end}}
<script>` + pageScript + `</script>
`

const doneBody = `<h1>{{.Headline}}</h1>
<p>{{.Detail}}</p>
`

var (
	formPage = template.Must(template.New("form").Parse(pageHead + formBody + pageFoot))
	donePage = template.Must(template.New("done").Parse(pageHead + doneBody + pageFoot))
)

// formData is what the form page shows. Every string is display text
// (see display) and the template escapes it.
type formData struct {
	Title   string // the window title
	Label   string // "Password" or "One-time code"
	Noun    string // "password" or "one-time code"
	Service string
	Origin  string
	Agent   string
	Via     string // how the value reaches the page, or ""
	Until   string // when the prompt closes
	Action  string // where the answers go: the prompt's path
	CSRF    string
	OTP     bool
	Message string // a short note above the form, or ""
	Key     string // the prompt's public key, base64url
	// ClosesIn is how many milliseconds the page stays answerable from
	// when it is served, "" for no limit (see closesIn).
	ClosesIn string
	Finals   []finalData // the final states the script may show
}

// finalData is one final state of the form page, shown by its script.
type finalData struct {
	When string // the state's name: sent, cancelled, closed, expired, failed
	doneData
}

// finals are the form page's final states, worded as the final pages
// the server sends without the script.
var finals = []finalData{
	{"sent", pageSent},
	{"cancelled", pageCancelled},
	{"closed", pageGone},
	{"expired", doneData{Headline: "This prompt has expired.",
		Detail: "Its time ran out, so nothing can be sent from it any more. You can close this window."}},
	{"failed", doneData{Headline: "Not sent.",
		Detail: "fillgate did not take the answer, and typed nothing. " +
			"If this browser blocks cookies or JavaScript for 127.0.0.1, allow them and ask the agent to try again."}},
}

// pageMargin is how much sooner than the prompt's budget its page
// disables itself, so that it never sends an answer the prompt could no
// longer take.
const pageMargin = time.Second

// closesIn is ClosesIn for a page served now for a prompt that ends at
// deadline (zero: no budget).
func closesIn(deadline time.Time) string {
	if deadline.IsZero() {
		return ""
	}
	return strconv.FormatInt(max(time.Until(deadline)-pageMargin, 0).Milliseconds(), 10)
}

// doneData is what a final page shows.
type doneData struct {
	Title    string
	Headline string
	Detail   string
}

// newFormData prepares the form page for info. The deadline is when the
// budget runs out (zero: no budget).
func newFormData(info fill.PromptInfo, action, csrf, key string, deadline time.Time) formData {
	label, noun := "Password", "password"
	if info.Field == fill.FieldOTP {
		label, noun = "One-time code", "one-time code"
	}
	agent := info.Agent.String()
	if info.Agent.Name == "" && info.Agent.PID == 0 {
		agent = "an unknown process"
		if info.Agent.Via != "" {
			agent += " via " + info.Agent.Via
		}
	}
	var via string
	switch info.Via {
	case fill.ViaExtension:
		via = "the fillgate extension in your browser"
	case fill.ViaCDP:
		via = "fillgate, over the browser's debugging port (CDP)"
	}
	until := "you answer, or the agent stops waiting"
	if !deadline.IsZero() {
		until = deadline.Format("15:04:05") + " (" + humanDuration(info.Budget) + " from when it opened)"
	}
	service := display(info.Service)
	return formData{
		Title:   "fillgate — " + noun + " for " + service,
		Label:   label,
		Noun:    noun,
		Service: service,
		Origin:  display(info.Origin),
		Agent:   display(agent),
		Via:     via,
		Until:   until,
		Action:  action,
		CSRF:    csrf,
		OTP:     info.Field == fill.FieldOTP,
		Key:     key,
		Finals:  finals,
	}
}

// maxDisplay caps how many characters of one name a page shows.
const maxDisplay = 200

// display makes a name that an agent or a page chose safe to show: control
// and format characters (bidi overrides, zero-width joiners) become U+FFFD
// so they cannot reorder or hide text, and very long names are cut. HTML
// escaping is the template's job.
func display(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return utf8.RuneError
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > maxDisplay {
		s = string([]rune(s)[:maxDisplay]) + "…"
	}
	return s
}

// humanDuration renders a budget as "2 min", "45 s" or "1 min 30 s".
func humanDuration(d time.Duration) string {
	d = d.Round(time.Second)
	m, s := int(d/time.Minute), int((d%time.Minute)/time.Second)
	switch {
	case m == 0:
		return strconv.Itoa(s) + " s"
	case s == 0:
		return strconv.Itoa(m) + " min"
	}
	return fmt.Sprintf("%d min %d s", m, s)
}

// setSecurityHeaders sets the headers every response carries.
//
// Referrer-Policy is no-referrer everywhere except on the form page (see
// writeForm).
func setSecurityHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", csp)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// writeForm sends the form page with status code.
//
// The form page alone uses Referrer-Policy: same-origin. Under no-referrer
// browsers send "Origin: null" with the form's POST (Fetch standard,
// "serializing a request origin"; Chromium does so), which would make the
// Origin check refuse every real answer. same-origin still sends no
// referrer to any other origin, and the CSP lets the page load nothing
// from anywhere.
func writeForm(w http.ResponseWriter, code int, d formData) {
	w.Header().Set("Referrer-Policy", "same-origin")
	writePage(w, code, formPage, d)
}

// writeDone sends a final page with status code.
func writeDone(w http.ResponseWriter, code int, d doneData) {
	writePage(w, code, donePage, d)
}

// writePage renders t with d into a buffer first, so a template error
// never leaves half a page, and sends it with a Content-Length.
func writePage(w http.ResponseWriter, code int, t *template.Template, d any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		writeText(w, http.StatusInternalServerError, "internal error")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

// writeText sends a short plain-text refusal.
func writeText(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(msg)+1))
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

// The final pages.
var (
	pageSent = doneData{
		Title:    "fillgate — sent",
		Headline: "Sent. You can close this window.",
		Detail:   "fillgate types it into the field; the agent learns only whether that worked.",
	}
	pageCancelled = doneData{
		Title:    "fillgate — cancelled",
		Headline: "Cancelled.",
		Detail:   "Nothing was sent. You can close this window.",
	}
	pageGone = doneData{
		Title:    "fillgate — closed",
		Headline: "This prompt is closed.",
		Detail: "It was answered, cancelled or expired, or the request it was for has ended, " +
			"so nothing can be sent from it any more. You can close this window.",
	}
	pageSecondClient = doneData{
		Title:    "fillgate — closed",
		Headline: "This prompt is closed: it was opened by a second client.",
		Detail: "Another browser or program loaded this prompt besides the first one, so its " +
			"address got out. fillgate closed it and typed nothing. Ask the agent to try again.",
	}
	pageNoCookie = doneData{
		Title:    "fillgate — not sent",
		Headline: "Not sent: this is not the browser the prompt was opened in.",
		Detail: "The answer did not carry the cookie the prompt gave the browser that opened it, " +
			"so fillgate did not take it and typed nothing. If this browser blocks cookies for " +
			"127.0.0.1, allow them and ask the agent to try again.",
	}
	pageBurned = doneData{
		Title:    "fillgate — closed",
		Headline: "This prompt is closed: a value came in the address.",
		Detail: "A value sent in the address may stay in the browser's history, so fillgate " +
			"threw it away and typed nothing. Ask the agent to try again; if it was a real " +
			"secret, consider changing it.",
	}
)
