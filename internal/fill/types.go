// Package fill runs one fill request: inspect the focused field, apply the
// policy, ask a human through the loopback prompt (or, where the person's
// policy lets a saved value fill unasked, show a notice), then re-check and
// insert.
//
// The package holds the request and result types that travel over the agent
// socket (types.go), the ports the flow talks to, all in ports.go (Browser,
// Policy, State, Planner, Source, Leases, Notifier, the prompts, Auditor),
// and the Engine that drives them (engine.go; approve.go and ask.go are its
// steps). A secret value only ever lives in a []byte that the Engine zeroes
// on every path.
package fill

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Status is the outcome of one request. The set is closed and stable: agents
// branch on it.
type Status string

// The five outcomes, and StatusArmed, the early answer of a passkey
// request that asked not to wait (Request.NoWait): only such a request
// ever gets it.
const (
	StatusOK         Status = "ok"          // the value was inserted (and, unless then none, submitted)
	StatusArmed      Status = "armed"       // no_wait: the tab is armed for the page's passkey call; nothing is signed yet
	StatusCancelled  Status = "cancelled"   // the human said no (or closed the prompt)
	StatusRefused    Status = "refused"     // a check or the policy said no; nothing was asked
	StatusNoResponse Status = "no_response" // nobody answered within the budget
	StatusFailed     Status = "failed"      // something broke; detail says what to do
)

// ExitCode is the stable process exit code `fillgate fill` uses for s.
func (s Status) ExitCode() int {
	switch s {
	case StatusOK, StatusArmed:
		return 0
	case StatusRefused:
		return 3
	case StatusCancelled:
		return 4
	case StatusNoResponse:
		return 5
	default:
		return 6
	}
}

// ExitUsage is the exit code for a malformed command line.
const ExitUsage = 2

// Field kinds, as they appear on the wire and in results.
const (
	FieldPassword = "password"
	FieldOTP      = "one-time-code"
	// FieldPasskey is no field: the agents' own passkey answers the
	// page's navigator.credentials.get() (passkey.go).
	FieldPasskey = "passkey"
	FieldOther   = "other" // focused, but neither of the above
	FieldNone    = "none"  // nothing focused
)

// NormalizeField maps the CLI spellings (password, otp, one-time-code) to a
// wire kind. The empty string means password.
func NormalizeField(s string) (string, error) {
	switch s {
	case "", "password":
		return FieldPassword, nil
	case "otp", "one-time-code", "code":
		return FieldOTP, nil
	case FieldPasskey:
		return FieldPasskey, nil
	}
	return "", fmt.Errorf("unknown field %q: use password, otp or passkey", s)
}

// What happens after the insert (Request.Then).
const (
	// ThenSubmit submits the field's form as a person would and makes
	// sure the value is no longer in the page when the request returns.
	ThenSubmit = "submit"
	// ThenNone leaves the value in the field, unsubmitted.
	ThenNone = "none"
)

// NormalizeThen maps a Then value to its wire form; the empty string
// means ThenSubmit.
func NormalizeThen(s string) (string, error) {
	switch s {
	case "", ThenSubmit:
		return ThenSubmit, nil
	case ThenNone:
		return ThenNone, nil
	}
	return "", fmt.Errorf("unknown then %q: use submit or none", s)
}

// Ways a value reaches the page.
const (
	ViaExtension = "extension"
	ViaCDP       = "cdp"
)

// Request is what an agent asks for. It never carries a value.
type Request struct {
	Service string `json:"service"`         // e.g. "github.com"
	Field   string `json:"field,omitempty"` // password (default) or one-time-code
	// Then is what follows the insert: ThenSubmit (the default, also for
	// "") or ThenNone.
	Then string `json:"then,omitempty"`
	// Timeout may shorten the prompt budget, never lengthen it. Zero means
	// the policy's budget.
	Timeout time.Duration `json:"-"`
	// Tab and Frame optionally pin the target (the ids the browser uses);
	// nil means "the focused one".
	Tab   *int64 `json:"tab,omitempty"`
	Frame *int64 `json:"frame,omitempty"`
	// Browser and Profile pick one of several connected browsers (by
	// browser name and profile); empty means whichever has the focused
	// login field. They only route the request.
	Browser string `json:"browser,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Enrol, with Field FieldPasskey, arms the tab for the site's
	// navigator.credentials.create() instead of get(): `fillgate passkey
	// add`. It is always asked of the person.
	Enrol bool `json:"enrol,omitempty"`
	// Account, with Enrol, is the account the new passkey is kept under
	// ("" for the service's only one). The person names it; it never
	// comes back in a result.
	Account string `json:"account,omitempty"`
	// NoWait, with Field FieldPasskey (a sign-in, not Enrol), answers the
	// agent with StatusArmed as soon as the tab is armed, so that an agent
	// that makes one call at a time can then click the page's passkey
	// button. The arm lives on without the agent, until the page's one
	// call or the arm's deadline; its outcome goes to the audit log.
	NoWait bool `json:"no_wait,omitempty"`
}

// Checked is a Request that passed Check, the door every request passes
// once: its field is FieldPassword or FieldOTP, its then ThenSubmit or
// ThenNone, and its service canonical. Only Check makes one, so what
// takes a Checked (the Engine, the Policy port, routing) checks none of
// these again. The zero Checked is no request.
type Checked struct{ req Request }

// Request is the checked request.
func (c Checked) Request() Request { return c.req }

// ErrMalformed is wrapped by Check's error for a request that names a
// field or a then fillgate does not know: one none of fillgate's own front
// ends sends.
var ErrMalformed = errors.New("malformed request")

// malformed is a Check error that wraps ErrMalformed and reads as its
// text alone.
type malformed string

func (m malformed) Error() string { return string(m) }
func (malformed) Unwrap() error   { return ErrMalformed }

// Check checks req once, at the door, and returns it as a Checked. Its
// error never echoes req: a field or a then it does not know (wrapping
// ErrMalformed), or canonical's error for a service fillgate does not
// fill for. canonical is the service's canonical form
// (policy.NormalizeService).
func Check(req Request, canonical func(service string) (string, error)) (Checked, error) {
	var err error
	if req.Field, err = NormalizeField(req.Field); err != nil {
		return Checked{}, malformed(fmt.Sprintf("unknown field: use %s, %s or %s", FieldPassword, FieldOTP, FieldPasskey))
	}
	if req.Enrol && req.Field != FieldPasskey {
		return Checked{}, malformed("enrol is for a passkey only")
	}
	if req.NoWait && (req.Field != FieldPasskey || req.Enrol) {
		return Checked{}, malformed("no_wait is for a passkey sign-in only")
	}
	if req.Account != "" && (!req.Enrol || cleanAccount(req.Account) != req.Account) {
		return Checked{}, malformed("an account is named only to enrol a passkey, as at most 256 bytes of printable text")
	}
	if req.Then, err = NormalizeThen(req.Then); err != nil {
		return Checked{}, malformed(fmt.Sprintf("unknown then: use %s or %s", ThenSubmit, ThenNone))
	}
	if req.Service, err = canonical(req.Service); err != nil {
		return Checked{}, err
	}
	return Checked{req: req}, nil
}

// Result is all an agent ever learns. It never holds the value, its length,
// a prefix or a hash.
type Result struct {
	Status  Status `json:"status"`
	Service string `json:"service"`
	Origin  string `json:"origin,omitempty"`
	Field   string `json:"field,omitempty"`
	Via     string `json:"via,omitempty"`
	// Submitted and Navigated are set on every result of a request that
	// inserted: whether the form was submitted (by fillgate or by the page
	// itself), and whether the page then navigated away. They are absent
	// when nothing was inserted.
	Submitted *bool `json:"submitted,omitempty"`
	Navigated *bool `json:"navigated,omitempty"`
	// HandedOver, set after a login in the clean room (a browser a
	// program drives), reports that the agent's tab was handed the
	// session; TabOrigin is the origin the tab shows now.
	HandedOver *bool  `json:"handed_over,omitempty"`
	TabOrigin  string `json:"tab_origin,omitempty"`
	Detail     string `json:"detail,omitempty"`
	Fallback   string `json:"fallback,omitempty"`
}

// Agent names the process that asked: the nearest ancestor of the socket
// peer that is not fillgate itself.
type Agent struct {
	Name string `json:"name"`          // process name, e.g. "claude"
	PID  int    `json:"pid"`           // its pid
	Exe  string `json:"exe,omitempty"` // its executable path; rules and cool-downs key on it
	Via  string `json:"via,omitempty"` // the fillgate client it used: "fillgate fill", "fillgate mcp"
	// PeerPID is the pid on the other end of the socket (often a fillgate
	// client process).
	PeerPID int `json:"peer_pid,omitempty"`
	// Remote names the tunnel when the agent is on another machine and
	// its request came through a forwarded socket: "ssh". Name and PID are
	// then the local end of the tunnel.
	Remote string `json:"remote,omitempty"`
	// Start is when the agent process started, in the OS's own opaque
	// units (clock ticks since boot on Linux, microseconds since the
	// epoch on macOS, 100 ns intervals on Windows); 0 when unknown. With
	// PID it names one process: a pid the OS reuses later gets another
	// Start.
	Start uint64 `json:"start,omitempty"`
}

// Key is what per-agent limits (cool-downs, rates) are keyed on: the
// executable, so that a program cannot escape them by starting again.
func (a Agent) Key() string {
	if a.Exe != "" {
		return a.Exe
	}
	return a.Name
}

// ProcessKey names the one process that asked: its executable, pid and
// start time, and the tunnel it came through. Leases are keyed on it, so
// that two programs of one interpreter (two node processes) or two ssh
// sessions never share what the person approved for one of them. Without
// a known start time no two requests share a ProcessKey: nothing is
// leased to a process that cannot be named. Nor to init or a service
// manager (pid 1, systemd, launchd): orphaned requests of every program
// end up under them.
func (a Agent) ProcessKey() string {
	if a.Start == 0 || a.PID <= 1 {
		return ""
	}
	switch strings.ToLower(a.Name) {
	case "systemd", "init", "launchd":
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%s", a.Key(), a.PID, a.Start, a.Remote)
}

// String renders the agent for the prompt and the audit log, e.g.
// "claude (pid 4121) via fillgate mcp".
func (a Agent) String() string {
	s := fmt.Sprintf("%s (pid %d)", a.Name, a.PID)
	switch {
	case a.Remote != "":
		s = fmt.Sprintf("an agent on another machine, through %s (pid %d)", a.Remote, a.PID)
	case a.Name == "":
		s = fmt.Sprintf("pid %d", a.PID)
	}
	if a.Via != "" {
		s += " via " + a.Via
	}
	return s
}

// FieldInfo describes the focused field as the in-page function saw it.
type FieldInfo struct {
	Kind string `json:"kind"` // FieldPassword, FieldOTP, FieldOther, FieldNone
	// Split is the number of single-character boxes of a split one-time
	// code, or 0 for one input.
	Split int `json:"split,omitempty"`
	// Problem is why the field is not usable ("" when it is): one of the
	// codes PROTOCOL.md section 2 lists (disabled, readonly, hidden,
	// covered, masked, ...).
	Problem string `json:"problem,omitempty"`
	// Hint is the field's id and name, for a password or one-time-code
	// field: the clean room finds the same field with them. Page text,
	// never a value; it goes to no agent.
	Hint *FieldHint `json:"hint,omitempty"`
}

// FieldHint names a field as its page does.
type FieldHint struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
}

// Destination is where a form submission sends the value.
type Destination struct {
	// Action is the origin of the resolved action URL
	// ("https://github.com"), or "null" when it is not an http or https
	// URL (javascript:, data:, mailto:, ...).
	Action string `json:"action"`
	// Target is the browsing context the response loads in, as the page
	// wrote it (at most 64 characters); "" means the field's own frame.
	Target string `json:"target,omitempty"`
	// Method is how the submission sends the form: MethodPost,
	// MethodGet (the value would go into the URL: refused; also reported
	// for a form with no method in a document with no script, which
	// nothing could stop from submitting with GET), MethodDialog (a
	// submission that only closes a <dialog>: it sends nothing, and
	// counts as no submit), or "" for a form that names no method on a
	// page with script: not refused, and the in-page function stops such
	// a submission should it go out with GET (Verdict.Stopped
	// method_get).
	Method string `json:"method,omitempty"`
}

// Form methods (Destination.Method), lower case as the page reports them.
const (
	MethodPost   = "post"
	MethodGet    = "get"
	MethodDialog = "dialog"
)

// FormInfo describes the form the focused field belongs to: where a
// submission sends the value.
type FormInfo struct {
	// Destination is where submitting the form itself (Enter without a
	// submit button) sends it: the form's action and target (or the
	// document's <base target>).
	Destination
	// Submitter is where the form's default submit button sends it (its
	// formaction and formtarget, else the form's); nil when the form has
	// no submit button.
	Submitter *Destination `json:"submitter,omitempty"`
	// Elsewhere reports a field whose form owner is not the form around it
	// (a form= attribute naming a form elsewhere in the page).
	Elsewhere bool `json:"elsewhere,omitempty"`
}

// Destinations lists where a submission of the form may send the value:
// the form's own destination, then its default submitter's.
func (f *FormInfo) Destinations() []Destination {
	if f == nil {
		return nil
	}
	if f.Submitter == nil {
		return []Destination{f.Destination}
	}
	return []Destination{f.Destination, *f.Submitter}
}

// Inspection is what the browser reports about the focused field. It names
// one exact tab, frame and element (through Token) for the later insert.
type Inspection struct {
	Tab   int64  `json:"tab"`
	Frame int64  `json:"frame"`
	Token string `json:"token"` // names the remembered element in the page's isolated world
	// Origins lists the origin of the focused frame first, then of each
	// frame above it up to the top-level page.
	Origins []string  `json:"origins"`
	Field   FieldInfo `json:"field"`
	// Form is the focused field's form; nil for a field in no form.
	Form *FormInfo `json:"form,omitempty"`
	// Account is the user name the focused field's form shows (never a
	// secret; the page chose it), "" for none. It goes to the prompt and
	// to the keyring lookup, never to the agent.
	Account string `json:"account,omitempty"`
	Paused  bool   `json:"paused,omitempty"` // the user paused fills in the extension
	// Watched reports that a program is attached to the tab over the
	// DevTools Protocol (always so on the CDP path): it can run script in
	// the login page and read what goes into the field. The prompt says
	// so; fillgate cannot stop it.
	Watched bool `json:"watched,omitempty"`
}

// Origin is the origin of the focused frame, or "".
func (in Inspection) Origin() string {
	if len(in.Origins) == 0 {
		return ""
	}
	return in.Origins[0]
}

// Verdict is the browser's answer to an insert.
type Verdict struct {
	Inserted bool `json:"inserted"`
	// Matched reports that the field held a value of the expected length
	// right after the insert (never the value or the length itself).
	Matched bool `json:"matched"`
	// Reason says why nothing was inserted: focus_moved, origin_changed,
	// element_gone, kind_changed, not_usable, form_changed, paused, ...
	Reason string `json:"reason,omitempty"`

	// What followed the insert (InsertOptions.Then).

	// Submitted reports that the form was submitted: by fillgate (its
	// default button, or Enter for a form without one or a field in no
	// form), or by the page itself (a one-time-code widget that submits
	// when its last box is filled).
	Submitted bool `json:"submitted,omitempty"`
	// Navigated reports that the page left the document the value was in
	// (a navigation started, the frame went away or the tab closed).
	Navigated bool `json:"navigated,omitempty"`
	// Cleared reports that fillgate emptied the field after the submit
	// because the page kept it (a script handled the login, or the submit
	// was stopped).
	Cleared bool `json:"cleared,omitempty"`
	// Remains reports that the value is still in the field: with ThenNone,
	// or when the page put it back after fillgate cleared it.
	Remains bool `json:"remains,omitempty"`
	// Stopped says why fillgate did not submit after inserting: invalid
	// (the form's validation stopped it), button_disabled, no_submit (no
	// button, no implicit submission, and the page did nothing on Enter),
	// form_changed
	// (the page changed where the form sends the value), not_matched (the
	// field did not keep the whole value), method_get (the submission
	// would have gone out with GET), method_dialog (it only closed a
	// dialog). The field is cleared.
	Stopped string `json:"stopped,omitempty"`
	// StoppedBy names the field whose validation stopped the submit: its
	// label, name or id (never its value).
	StoppedBy string `json:"stopped_by,omitempty"`
	// Unconfirmed reports that the page went away while the call ran, so
	// the page could not say how far the insert and submit got.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
}

// Drive is what is known about programs that can drive a browser.
type Drive struct {
	// Driven reports that something besides the person can read, type
	// into or click the browser's pages.
	Driven bool `json:"driven"`
	// Reasons says what, in a few words each ("the browser was started
	// with --remote-debugging-port", "a debugger is attached to 2 of its
	// tabs"). It names no page.
	Reasons []string `json:"reasons,omitempty"`
}

// Progress is one step of a running request, for the waiting agent's
// display.
type Progress struct {
	Phase string `json:"phase"` // inspecting, waiting_for_human, inserting
	// Deadline is when the current phase gives up, if it has one.
	Deadline time.Time `json:"deadline,omitzero"`
	// Where, while waiting for the person, is where they answer:
	// WhereBrowser (the loopback page) or WhereDesktop (a native dialog).
	Where string `json:"where,omitempty"`
	// Result, when set, is the request's answer, given early: the agent
	// gets it now and the request goes on without it (a passkey arm of a
	// NoWait request). Nothing more is sent to the agent after it.
	Result *Result `json:"-"`
}

// Where the person answers (Progress.Where).
const (
	WhereBrowser = "browser"
	WhereDesktop = "desktop"
)

// Phases reported through Progress.
const (
	PhaseInspecting = "inspecting"
	// PhaseCleanRoom: a program drives the browser, and fillgate opens the
	// page again in its clean room.
	PhaseCleanRoom = "opening_clean_room"
	PhaseWaiting   = "waiting_for_human"
	PhaseInserting = "inserting"
	// PhaseArmed carries the early answer of a NoWait request
	// (Progress.Result).
	PhaseArmed = "armed"
)
