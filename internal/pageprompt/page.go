package pageprompt

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/wording"
)

// The pages are files in page/: layout.html around form.html (the prompt)
// or done.html (a final page), with the one style (style.css) and the one
// script (script.js) inline. The CSP allows the style and the script by
// the hashes of exactly the text the pages carry, computed here from the
// embedded files.
var (
	//go:embed page/layout.html page/form.html page/done.html
	pageFiles embed.FS
	//go:embed page/style.css
	styleCSS string
	//go:embed page/script.js
	scriptJS string
)

// pageStyle is the text of the <style> element, the only style on any
// page: a newline, then style.css.
var pageStyle = "\n" + styleCSS

// pageScript is the text of the form page's <script> element, the only
// script on any page: a newline, then script.js. html/template inserts it
// as it is (template.JS), comments included.
//
// The script runs the form; everything it needs is in the page's data-*
// attributes. It encrypts each answer to the prompt's key before it
// leaves the page (PROTOCOL.md, "The encrypted answer"), padded with
// spaces to a multiple of 4096 bytes so that its size says nothing of the
// value's length, clears the fields, and posts with fetch, so no response
// is ever rendered as a page and no form is ever submitted for the browser
// to remember. It disables everything at the page's own deadline (the
// earlier of the time left when it was served, counted from when the
// script runs, and that moment on the clock, so that a slow load cannot
// move it past fillgate's), and as soon as its watch on the prompt ends
// (fillgate answered, closed the prompt or went away; "expired" when the
// deadline has passed by then). Its state is "open", "busy" while an
// answer is on its way, then the final state finish shows.
//
// The answers: Send (the typed value, with the Remember box and the
// account picked when the page offers them) and, when a saved value is
// offered, Approve (the account picked, and what the store needs typed,
// such as a KeePassXC database password). Approve sends no value: the
// saved one never reaches the page.
//
// What the person types (the value, and what the store needs) lives only
// in the script's closure, never in the page: every edit of a field goes
// through its beforeinput handler (typing and pasting append, Backspace
// takes the last character back, an edit of everything after select-all
// or any other deletion starts over; IME text is taken at
// compositionend), and the field shows the same mask whatever it holds.
// So nothing that reads the page (an agent's snapshot of this tab, the
// accessibility tree, a password manager) learns the value or even its
// length.
//
// Only the person's own keys and clicks type, send and approve: an event a
// script made (isTrusted false) does nothing, so script running in the page
// cannot answer for them by dispatching events.
//
// The window's title names the prompt only once the script can take an
// answer (and has put the focus where the person types) and the browser
// has shown the page (its first contentful paint: Chromium drops the keys
// a page is sent before its first paint): a person, or a test standing
// for one, who waits for that title loses no key.
var pageScript = "\n" + scriptJS

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

var (
	formPage = parsePage("page/form.html")
	donePage = parsePage("page/done.html")
)

// parsePage is layout.html around the "body" that the file body defines.
// The style and script functions insert the inline style and script as
// they are: their text is what the CSP hashes allow.
func parsePage(body string) *template.Template {
	return template.Must(template.New("layout.html").Funcs(template.FuncMap{
		"style":  func() template.CSS { return template.CSS(pageStyle) },
		"script": func() template.JS { return template.JS(pageScript) },
	}).ParseFS(pageFiles, "page/layout.html", body))
}

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
	// InPage warns that a program drives the browser and the person's
	// policy lets fillgate type into it (driven = "in-page").
	InPage bool
	// CleanRoom says the login happens in fillgate's clean room.
	CleanRoom bool
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
	noun := wording.FieldNoun(info.Field)
	label := wording.Capitalize(noun)
	agent := info.Agent.String()
	if info.Agent.Name == "" && info.Agent.PID == 0 {
		agent = "an unknown process"
		if info.Agent.Via != "" {
			agent += " via " + info.Agent.Via
		}
	}
	var via string
	switch {
	case info.CleanRoom:
		via = "fillgate, in a browser of its own (a clean room); the agent's browser gets only the session"
	case info.Via == fill.ViaExtension:
		via = "the fillgate extension in your browser"
	case info.Via == fill.ViaCDP:
		via = "fillgate, over the browser's debugging port (CDP)"
	}
	until := "you answer, or the agent stops waiting"
	if !deadline.IsZero() {
		until = deadline.Format("15:04:05") + " (" + wording.Duration(info.Budget) + " from when it opened)"
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
		As:        display(info.Account),
		Stays:     info.Stays,
		Watched:   info.Watched,
		InPage:    info.InPage,
		CleanRoom: info.CleanRoom,
		From:      display(info.From),
		Accounts:  accounts,
		Ask:       wording.Capitalize(display(info.Ask)),
		Remember:  info.Remember,
		Hint:      hint,
		Title:     "fillgate — opening the prompt",
		Ready:     "fillgate — " + noun + " for " + service,
		Label:     label,
		Noun:      noun,
		Service:   service,
		Origin:    display(info.Origin),
		Agent:     display(agent),
		Via:       via,
		Until:     until,
		Action:    action,
		CSRF:      csrf,
		OTP:       info.Field == fill.FieldOTP,
		Key:       key,
		Finals:    finals,
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
