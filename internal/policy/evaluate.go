package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/wording"
)

// MaxSplit is the most boxes a split one-time code may have.
const MaxSplit = 16

// Input is what Evaluate decides on: the agent's request and what the
// browser reported about the focused field. It never holds a value.
type Input struct {
	// Service is the service the agent asked for, e.g. "github.com".
	Service string
	// Field is the kind asked for: "password" or "one-time-code".
	Field string
	// Origins lists the focused frame's origin first, then each frame's
	// above it up to the top-level page, as the browser serialises them.
	Origins []string
	// FieldKind is the focused field's kind: "password", "one-time-code",
	// "other" or "none".
	FieldKind string
	// FieldSplit is the number of boxes of a split one-time code, or 0.
	FieldSplit int
	// FieldProblem is why the field is not usable, "" when it is: disabled,
	// readonly, hidden, tiny, transparent, offscreen, covered.
	FieldProblem string
	// Form is where the focused field's form sends the value, as the
	// browser reported it; nil for a field in no form.
	Form *Form
	// AgentExe is the asking agent's executable path ("" when unknown).
	AgentExe string
	// Via is the path the value would take: ViaExtension or ViaCDP.
	Via string
}

// Form is the focused field's form as Evaluate sees it.
type Form struct {
	// Destinations are where a submission may send the value: the form's
	// own action and target, then its default submit button's.
	Destinations []Destination
	// Elsewhere reports a field whose form owner is not the form around
	// it (a form= attribute).
	Elsewhere bool
}

// Destination is one place a form submission sends the value.
type Destination struct {
	// Action is the origin of the resolved action URL, as the browser
	// serialises it; "null" when the URL is not http or https.
	Action string
	// Target is the target browsing context as the page wrote it; ""
	// means the field's own frame.
	Target string
	// Button is true for the default submit button's destination
	// (formaction, formtarget).
	Button bool
	// Method is how the submission sends the form, as the browser
	// reported it: "post", "get" (the value would go into the URL),
	// "dialog" (it only closes a dialog and sends nothing), or "" when
	// the form names no method on a page with script (the in-page
	// function keeps the value out of the URL at its own submit).
	Method string
}

// Form methods (Destination.Method).
const (
	methodPost   = "post"
	methodGet    = "get"
	methodDialog = "dialog"
)

// Checks that refuse a request, as Decision.Check reports them.
const (
	CheckService = "service" // the service name is not valid
	CheckField   = "field"   // the requested field kind, or the focused field
	CheckVia     = "via"     // the path is not valid or not allowed
	CheckOrigin  = "origin"  // the focused frame's origin
	CheckFrame   = "frame"   // a frame above the focused one
	CheckAgent   = "agent"   // the agent may not ask for this service
	CheckForm    = "form"    // where the focused field's form sends the value
	CheckMethod  = "method"  // how it sends it: never in the URL (method=get)
)

// Decision is Evaluate's answer.
type Decision struct {
	// Allow is true when the request may go ahead to the prompt.
	Allow bool
	// Check names the check that refused (CheckService, ...); "" when
	// allowed.
	Check string
	// Detail is one or two sentences for the agent and the human: what
	// was decided and, on a refusal, what to do about it.
	Detail string
	// Settings are the person's settings for this fill (approval, lease,
	// where the value comes from, remembering), set when Allow. The agent
	// never sees or chooses them.
	Settings Settings
}

// refuse builds a refusal.
func refuse(check, format string, args ...any) Decision {
	return Decision{Check: check, Detail: fmt.Sprintf(format, args...)}
}

// Evaluate decides whether the request in may go ahead. It is a pure
// function of p and in. It checks, in this order: the service, the
// requested field kind, the path, the focused frame's origin, every frame
// above it, the rules that apply (agent, field kinds, path), the focused
// field itself, and where and how its form sends the value. A nil p means
// Default().
func (p *Policy) Evaluate(in Input) Decision {
	if p == nil {
		p = Default()
	}
	service, err := parseService(in.Service)
	if err != nil {
		return refuse(CheckService, "The %v.", err)
	}
	svc := service.String()
	service.exactHost = p.exactHost(svc)
	if in.Field != fieldPassword && in.Field != fieldOTP && in.Field != fieldPasskey {
		return refuse(CheckField, "The requested field %s is not valid; ask for password, one-time-code or passkey.", quote(in.Field))
	}
	if in.Via != ViaExtension && in.Via != ViaCDP {
		return refuse(CheckVia, "The path %s is not valid; it is extension or cdp.", quote(in.Via))
	}
	if len(in.Origins) == 0 {
		return refuse(CheckOrigin, "The browser reported no origin for the focused frame; nothing was asked.")
	}
	focused, err := parseOrigin(in.Origins[0])
	if err != nil {
		return refuse(CheckOrigin, "The focused frame's origin %s is refused: %v. Open the %s login page itself and try again.", quote(in.Origins[0]), err, svc)
	}
	what := "The focused field is on"
	if in.Field == fieldPasskey {
		what = "The tab shows"
	}
	if d, ok := matchService(focused, service, CheckOrigin, what); !ok {
		return d
	}
	rules := p.rulesFor(focused)
	if in.Field == fieldPasskey {
		return evaluatePasskey(in, focused, svc, rules)
	}
	if d, ok := checkAncestors(in.Origins[1:], service, focused, rules); !ok {
		return d
	}
	if d, ok := checkRules(in, rules); !ok {
		return d
	}
	if d, ok := checkFieldKind(in, focused); !ok {
		return d
	}
	if d, ok := checkForm(in.Form, service, focused, len(in.Origins) == 1); !ok {
		return d
	}
	return Decision{Allow: true, Detail: fmt.Sprintf("The focused %s field on %s belongs to %s.", wording.FieldNoun(in.Field), focused, svc),
		Settings: settingsFor(focused, in.Field, rules)}
}

// evaluatePasskey decides a passkey request: the origin (checked
// already) is the top page of the tab, which alone is ever armed, and the
// rules that hold allow it. No field or form is involved.
func evaluatePasskey(in Input, top origin, svc string, rules []*Rule) Decision {
	if len(in.Origins) != 1 {
		return refuse(CheckFrame, "A passkey is used only in a tab's top page, and the browser reported frames; nothing was asked.")
	}
	if d, ok := checkRules(in, rules); !ok {
		return d
	}
	return Decision{Allow: true, Detail: fmt.Sprintf("The page %s belongs to %s.", top, svc), Settings: settingsFor(top, in.Field, rules)}
}

// matchService refuses an origin whose host is not the service or a name
// under it (the service itself only, when its rule says subdomains =
// false), that is not https (http only on loopback), or that is not on
// the service's port. check names the check and what starts the sentence.
func matchService(o origin, service service, check, what string) (Decision, bool) {
	if err := o.belongsTo(service); err != nil {
		return refuse(check, "%s %s, which %v; nothing was asked. Open the %s login page itself and try again.", what, o, err, service), false
	}
	if err := o.transport(); err != nil {
		return refuse(check, "%s %s, which %v; nothing was asked.", what, o, err), false
	}
	if err := o.onPort(service); err != nil {
		return refuse(check, "%s %s, which %v; nothing was asked.", what, o, err), false
	}
	return Decision{}, true
}

// checkAncestors checks the frames above the focused one, nearest first:
// each must match the service like the focused frame, or be an origin a
// rule names in frame_ancestors.
func checkAncestors(ancestors []string, service service, focused origin, rules []*Rule) (Decision, bool) {
	for _, a := range ancestors {
		o, err := parseOrigin(a)
		if err != nil {
			return refuse(CheckFrame, "The focused field on %s is inside a frame whose origin %s is refused: %v; nothing was asked.", focused, quote(a), err), false
		}
		if allowedAncestor(rules, a) {
			continue
		}
		what := fmt.Sprintf("The focused field on %s is inside a page from", focused)
		if d, ok := matchService(o, service, CheckFrame, what); !ok {
			return d, false
		}
	}
	return Decision{}, true
}

// allowedAncestor reports whether a rule names origin a in frame_ancestors.
func allowedAncestor(rules []*Rule, a string) bool {
	for _, r := range rules {
		if slices.Contains(r.FrameAncestors, a) {
			return true
		}
	}
	return false
}

// checkRules applies the limits of the rules that hold for the request.
func checkRules(in Input, rules []*Rule) (Decision, bool) {
	for _, r := range rules {
		if len(r.Agents) > 0 && !slices.ContainsFunc(r.Agents, func(a string) bool { return sameExe(a, in.AgentExe) }) {
			agent := quote(in.AgentExe)
			if in.AgentExe == "" {
				agent = "an agent whose executable is unknown"
			}
			return refuse(CheckAgent, "The policy lets only named programs ask for %s, and %s is not one of them; nothing was asked.", r.Service, agent), false
		}
		if len(r.Fields) > 0 && !slices.Contains(r.Fields, in.Field) {
			return refuse(CheckField, "The policy does not allow filling a %s for %s; nothing was asked.", wording.FieldNoun(in.Field), r.Service), false
		}
		if len(r.AllowVia) > 0 && !slices.Contains(r.AllowVia, in.Via) {
			return refuse(CheckVia, "The policy allows filling %s only through %s, not %s; nothing was asked.", r.Service, viaNouns(r.AllowVia), viaNoun(in.Via)), false
		}
	}
	return Decision{}, true
}

// checkFieldKind refuses a focused field of the wrong kind, or one that is
// not usable.
func checkFieldKind(in Input, focused origin) (Decision, bool) {
	want := wording.FieldNoun(in.Field)
	switch in.FieldKind {
	case fieldNone:
		return refuse(CheckField, "Nothing is focused on %s: click into the %s field of the login form, then ask again.", focused, want), false
	case fieldOther:
		return refuse(CheckField, "The focused field on %s is not a %s field: click into the %s field of the login form, then ask again.", focused, want, want), false
	case fieldPassword, fieldOTP:
		if in.FieldKind != in.Field {
			return refuse(CheckField, "The focused field on %s is a %s field, but a %s was asked for: click into the %s field, or ask for a %s.", focused, wording.FieldNoun(in.FieldKind), want, want, wording.FieldNoun(in.FieldKind)), false
		}
	default:
		return refuse(CheckField, "The browser reported an unknown field kind %s; nothing was asked.", quote(in.FieldKind)), false
	}
	if in.FieldProblem != "" {
		return refuse(CheckField, "The focused %s field on %s %s, so it cannot be filled safely: make it visible and usable, click into it, then ask again.", want, focused, problemPhrase(in.FieldProblem)), false
	}
	switch {
	case in.FieldSplit < 0 || in.FieldSplit > MaxSplit || in.FieldSplit == 1:
		return refuse(CheckField, "The browser reported %d boxes for the focused field; nothing was asked.", in.FieldSplit), false
	case in.FieldSplit > 0 && in.FieldKind != fieldOTP:
		return refuse(CheckField, "The focused %s field is split into boxes, which only one-time codes use; nothing was asked.", want), false
	}
	return Decision{}, true
}

// checkForm refuses a form that may send the value anywhere but the
// service: a field owned by a form elsewhere in the page, an action that
// is not an http(s) URL on the service (https off loopback), a target
// other than the field's own frame, or a method that would put the value
// in the URL (checkMethod). top says the focused frame is the
// top-level page, where _top and _parent are the frame itself. A field in
// no form is allowed: only the page's own script can send it, and the
// page is on the service.
func checkForm(f *Form, service service, focused origin, top bool) (Decision, bool) {
	if f == nil {
		return Decision{}, true
	}
	if f.Elsewhere {
		return refuse(CheckForm, "The focused field on %s belongs to a form elsewhere in the page (a form= attribute), so submitting it could send the value somewhere else; nothing was asked.", focused), false
	}
	for _, d := range f.Destinations {
		what := "The form around the focused field on " + focused.String() + " sends it"
		if d.Button {
			what = "The submit button of the form around the focused field on " + focused.String() + " sends it"
		}
		if d.Action == "null" {
			return refuse(CheckForm, "%s to an address that is not http or https (javascript:, data:, mailto: or the like); nothing was asked.", what), false
		}
		o, err := parseOrigin(d.Action)
		if err != nil {
			return refuse(CheckForm, "%s to something that is not a web page on %s (%v); nothing was asked.", what, service, err), false
		}
		if err := o.belongsTo(service); err != nil {
			return refuse(CheckForm, "%s to %s, which %v; nothing was asked.", what, o, err), false
		}
		if err := o.transport(); err != nil {
			return refuse(CheckForm, "%s to %s, which %v; nothing was asked.", what, o, err), false
		}
		if err := o.onPort(service); err != nil {
			return refuse(CheckForm, "%s to %s, which %v; nothing was asked.", what, o, err), false
		}
		if !ownFrame(d.Target, top) {
			return refuse(CheckForm, "%s into another frame or window (target %s); nothing was asked.", what, quote(d.Target)), false
		}
		if refusal, ok := checkMethod(d, focused); !ok {
			return refusal, false
		}
	}
	return Decision{}, true
}

// checkMethod refuses a destination whose submission would put the value
// in its URL (method=get, which the browser also reports for a form that
// names no method on a page without script), where the address bar, the
// browser's history and server logs keep it, and a method the in-page
// function never reports. "" (no method named, on a page with script) is
// allowed: such forms are mostly submitted by script, and the in-page
// function stops a native GET submission at its own submit.
func checkMethod(d Destination, focused origin) (Decision, bool) {
	what := "The form around the focused field on " + focused.String()
	if d.Button {
		what = "The submit button of the form around the focused field on " + focused.String()
	}
	switch asciiLower(d.Method) {
	case "", methodPost, methodDialog:
		return Decision{}, true
	case methodGet:
		return refuse(CheckMethod, "%s would put the value in its URL (method=get, or no method on a page without script), where the browser's history and server logs keep it; nothing was asked. The person has to sign in on this page themselves.", what), false
	}
	return refuse(CheckMethod, "%s sends it with a method the browser reported as %s, not post, get or dialog; nothing was asked.", what, quote(d.Method)), false
}

// ownFrame reports whether a form target names the field's own frame:
// empty, _self, or _top and _parent in the top-level page (ASCII case
// folded, as browsers compare these keywords).
func ownFrame(target string, top bool) bool {
	switch asciiLower(target) {
	case "", "_self":
		return true
	case "_top", "_parent":
		return top
	}
	return false
}

// asciiLower folds A-Z to a-z and nothing else.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// rulesFor returns the rules that apply to a page of origin o, in file
// order.
func (p *Policy) rulesFor(o origin) []*Rule {
	var rs []*Rule
	for i := range p.Rules {
		if r := &p.Rules[i]; r.covers(o) {
			rs = append(rs, r)
		}
	}
	return rs
}

// viaNoun names a path in a sentence.
func viaNoun(via string) string {
	if via == ViaCDP {
		return "the DevTools protocol (cdp)"
	}
	return "the extension"
}

// viaNouns names a list of paths in a sentence.
func viaNouns(vias []string) string {
	names := make([]string, len(vias))
	for i, v := range vias {
		names[i] = viaNoun(v)
	}
	return strings.Join(names, " or ")
}

// problemPhrase says what is wrong with a field, from the in-page
// function's problem code.
func problemPhrase(p string) string {
	switch p {
	case "disabled":
		return "is disabled"
	case "readonly":
		return "is read-only"
	case "hidden":
		return "is hidden"
	case "tiny":
		return "is too small to see"
	case "transparent":
		return "is transparent"
	case "offscreen":
		return "is outside the visible part of the page"
	case "covered":
		return "is covered by another element"
	case "background":
		return "is in a tab or window that is not shown"
	case "masked":
		return "is hidden by a CSS mask"
	case "clipped":
		return "is clipped away in part or whole"
	case "filtered":
		return "is washed out by a CSS filter"
	case "blurred":
		return "is blurred"
	case "blended":
		return "is blended into the page (mix-blend-mode)"
	case "unreadable":
		return "shows its text in a colour that cannot be seen"
	case "unclickable":
		return "takes no clicks (pointer-events: none)"
	}
	return "is not usable (" + quote(p) + ")"
}
