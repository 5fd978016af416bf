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

	"github.com/fillgate/fillgate/internal/fill"
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
.msg, .note.warn { color: var(--warn); font-weight: 600; }
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
label.choice { display: flex; gap: .5rem; align-items: center; font-weight: normal; margin: .4rem 0; }
label.choice input { width: auto; margin: 0; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: .5rem 0; padding: .25rem .8rem; }
legend { color: var(--muted); padding: 0 .3rem; }
#saved { border-bottom: 1px solid var(--line); padding-bottom: .75rem; margin-bottom: .25rem; }
#saved h2 { margin-top: 0; }
[hidden] { display: none !important; }
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

// formBody is the prompt. The fields sit outside any form: the script
// sends what is typed, encrypted, and nothing else can (a browser's
// password manager sees no password form, and without JavaScript there is
// no way to send it at all). The Cancel form works without JavaScript.
// With a saved value, the page offers Approve (which sends no value: the
// saved one never reaches the page), the account to use when several are
// saved, and a field for what the store needs typed first. The final
// states are in the page already; the script shows one.
const formBody = `<h1>{{.Label}} for <code dir="ltr">{{.Service}}</code></h1>
<dl>
<dt>Asked by</dt><dd><code dir="ltr">{{.Agent}}</code></dd>
<dt>Service</dt><dd><code dir="ltr">{{.Service}}</code></dd>
<dt>Typed into</dt><dd>the focused {{.Noun}} field of <code dir="ltr">{{.Origin}}</code></dd>
{{- if .As}}
<dt>As</dt><dd><code dir="ltr">{{.As}}</code> (the account the page shows)</dd>
{{- end}}
{{- if .Via}}
<dt>Typed by</dt><dd>{{.Via}}</dd>
{{- end}}
<dt>Open until</dt><dd>{{.Until}}</dd>
</dl>
{{- if .Watched}}
<p class="note warn" id="watched" role="alert">A program is attached to the login page's tab over the
DevTools Protocol (an agent's browser tools, say): it can run script in that page and read what goes
into it, this {{.Noun}} too. Answer only if you trust what drives this browser.</p>
{{- end}}
{{- if .Stays}}
<p class="note warn" id="stays" role="alert">The agent asked to leave the value in the field, unsubmitted:
what you type stays there, where the page and any tool that reads it (the agent's browser tools
included) can see it until the form is submitted.{{if .From}} A saved {{.Noun}} you approve is
submitted at once and never left in the page.{{end}}</p>
{{- else if not .Watched}}
<p class="note">The agent never sees what you type or approve: fillgate types it into that
field, submits the form and tells the agent only whether it worked.</p>
{{- end}}
<noscript><p class="msg" role="alert">This prompt needs JavaScript for 127.0.0.1: it encrypts what
you type before it leaves this page, and without it nothing can be sent. You can still cancel.</p></noscript>
{{- if .Message}}
<p class="msg" role="alert">{{.Message}}</p>
{{- end}}
<div id="answer" hidden data-key="{{.Key}}" data-path="{{.Action}}" data-closes-in="{{.ClosesIn}}" data-closes-at="{{.ClosesAt}}" data-title="{{.Ready}}">
{{- if .From}}
<section id="saved" aria-labelledby="savedhead">
<h2 id="savedhead">Use the saved {{.Noun}}</h2>
<p id="from">{{.From}}{{if .As}}, as <code dir="ltr">{{.As}}</code>{{end}}</p>
{{- if .Accounts}}
<fieldset id="accounts"><legend>Which account?</legend>
{{- range $i, $a := .Accounts}}
<label class="choice"><input id="account-{{$i}}" type="radio" name="account" value="{{$a.Value}}"{{if eq $i 0}} checked{{end}}> <code dir="ltr">{{$a.Shown}}</code></label>
{{- end}}
</fieldset>
{{- end}}
{{- if .Ask}}
<label for="ask">{{.Ask}}</label>
<input id="ask" class="secret" type="text" spellcheck="false" autocapitalize="off" autocorrect="off" autocomplete="off" aria-describedby="masked">
<p id="askempty" class="msg" role="alert" hidden>Nothing was typed. Type it, or choose Cancel.</p>
{{- end}}
<div class="buttons"><button id="approve" class="send" type="button">Approve</button></div>
</section>
<h2>Or type another {{.Noun}}</h2>
{{- end}}
<label for="value">{{.Label}}</label>
<input id="value" class="secret" type="text" required spellcheck="false" autocapitalize="off" autocorrect="off"
 aria-describedby="masked" {{if .OTP}}autocomplete="one-time-code" inputmode="numeric"{{else}}autocomplete="off"{{end}}>
<p id="masked" class="hint">The field shows the same dots however much you type: what you type stays out of this page.</p>
<p id="empty" class="msg" role="alert" hidden>Nothing was typed. Type the {{.Noun}}, or choose Cancel.</p>
{{- if .Remember}}
<label class="choice"><input id="remember" type="checkbox"> Remember it in the system keychain</label>
{{- end}}
</div>
<form id="cancelform" method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<div class="buttons">
<button id="send" type="button" hidden{{if not .From}} class="send"{{end}}>Send</button>
<button id="cancel" type="submit" name="action" value="cancel">Cancel</button>
<span id="hint" class="hint" hidden>{{.Hint}}</span>
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
	Title   string // the window title until the script can take an answer
	Ready   string // the window title once it can
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
	// As is the account the page shows, or "".
	As string
	// Stays warns that a typed value will stay in the field (then none).
	Stays bool
	// Watched warns that a program attached to the login page's tab can
	// read what goes into it.
	Watched bool
	// From is where the saved value to approve comes from, or "" for
	// none; Accounts the accounts to pick among, and Ask what the store
	// needs typed first (a label), with it.
	From     string
	Accounts []accountChoice
	Ask      string
	Remember bool   // offer the Remember box
	Hint     string // the keys' hint next to the buttons
	// ClosesIn is how many milliseconds the page stays answerable from
	// when it is served, "" for no limit (see closesIn).
	ClosesIn string
	// ClosesAt is the same moment as Unix milliseconds, "" for no limit:
	// the page expires at the first of the two, so the time the page took
	// to load does not move its end past fillgate's.
	ClosesAt string
	Finals   []finalData // the final states the script may show
}

// accountChoice is one account the person may pick: what is sent back
// (the account exactly as offered) and what is shown.
type accountChoice struct{ Value, Shown string }

// finalData is one final state of the form page, shown by its script.
type finalData struct {
	When string // the state's name: sent, cancelled, closed, expired, failed
	doneData
}

// finals are the form page's final states, worded as the final pages
// the server sends without the script.
var finals = []finalData{
	{"sent", pageSent},
	{"approved", pageApproved},
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

// closesAt is ClosesAt for a prompt that ends at deadline (zero: no
// budget).
func closesAt(deadline time.Time) string {
	if deadline.IsZero() {
		return ""
	}
	return strconv.FormatInt(deadline.Add(-pageMargin).UnixMilli(), 10)
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
	var accounts []accountChoice
	for _, a := range info.Accounts {
		accounts = append(accounts, accountChoice{Value: a, Shown: display(a)})
	}
	hint := "Enter sends, Esc cancels."
	if info.From != "" {
		hint = "Esc cancels."
	}
	return formData{
		As:       display(info.Account),
		Stays:    info.Stays,
		Watched:  info.Watched,
		From:     display(info.From),
		Accounts: accounts,
		Ask:      capitalize(display(info.Ask)),
		Remember: info.Remember,
		Hint:     hint,
		Title:    "fillgate — opening the prompt",
		Ready:    "fillgate — " + noun + " for " + service,
		Label:    label,
		Noun:     noun,
		Service:  service,
		Origin:   display(info.Origin),
		Agent:    display(agent),
		Via:      via,
		Until:    until,
		Action:   action,
		CSRF:     csrf,
		OTP:      info.Field == fill.FieldOTP,
		Key:      key,
		Finals:   finals,
	}
}

// capitalize upper-cases the first letter of a label.
func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
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
	pageApproved = doneData{
		Title:    "fillgate — approved",
		Headline: "Approved. You can close this window.",
		Detail:   "fillgate reads the saved value and types it into the field; the agent learns only whether that worked.",
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
