// Package fill runs one fill request: inspect the focused field, apply the
// policy, ask a human through the loopback prompt, then re-check and insert.
//
// The package holds the request and result types that travel over the agent
// socket, the ports the flow talks to (Browser, State, Audit), and the Engine
// that drives them. A secret value only ever lives in a []byte that the
// Engine zeroes on every path.
package fill

import (
	"context"
	"fmt"
	"time"
)

// Status is the outcome of one request. The set is closed and stable: agents
// branch on it.
type Status string

// The five outcomes.
const (
	StatusOK         Status = "ok"          // the value is in the field
	StatusCancelled  Status = "cancelled"   // the human said no (or closed the prompt)
	StatusRefused    Status = "refused"     // a check or the policy said no; nothing was asked
	StatusNoResponse Status = "no_response" // nobody answered within the budget
	StatusFailed     Status = "failed"      // something broke; detail says what to do
)

// ExitCode is the stable process exit code `fillgate fill` uses for s.
func (s Status) ExitCode() int {
	switch s {
	case StatusOK:
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
	FieldOther    = "other" // focused, but neither of the above
	FieldNone     = "none"  // nothing focused
)

// NormalizeField maps the CLI spellings (password, otp, one-time-code) to a
// wire kind. The empty string means password.
func NormalizeField(s string) (string, error) {
	switch s {
	case "", "password":
		return FieldPassword, nil
	case "otp", "one-time-code", "code":
		return FieldOTP, nil
	}
	return "", fmt.Errorf("unknown field %q: use password or otp", s)
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
}

// Result is all an agent ever learns. It never holds the value, its length,
// a prefix or a hash.
type Result struct {
	Status   Status `json:"status"`
	Service  string `json:"service"`
	Origin   string `json:"origin,omitempty"`
	Field    string `json:"field,omitempty"`
	Via      string `json:"via,omitempty"`
	Detail   string `json:"detail,omitempty"`
	Fallback string `json:"fallback,omitempty"`
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
}

// Key is what per-agent state (cool-downs, rates) is keyed on.
func (a Agent) Key() string {
	if a.Exe != "" {
		return a.Exe
	}
	return a.Name
}

// String renders the agent for the prompt and the audit log, e.g.
// "claude (pid 4121) via fillgate mcp".
func (a Agent) String() string {
	s := fmt.Sprintf("%s (pid %d)", a.Name, a.PID)
	if a.Name == "" {
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
	// codes host/PROTOCOL.md section 2 lists (disabled, readonly, hidden,
	// covered, masked, ...).
	Problem string `json:"problem,omitempty"`
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
	Paused  bool      `json:"paused,omitempty"` // the user paused fills in the extension
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
	// Matched reports that the field now holds a value of the expected
	// length (never the value or the length itself).
	Matched bool `json:"matched"`
	// Reason says why nothing was inserted: focus_moved, origin_changed,
	// element_gone, kind_changed, not_usable, paused, ...
	Reason string `json:"reason,omitempty"`
}

// PromptWindow is a prompt page the browser opened for the human.
type PromptWindow interface {
	// Closed is closed when the human closes the window without answering.
	// It may be nil when the opener cannot tell.
	Closed() <-chan struct{}
	// Close closes the window; it is safe to call more than once.
	Close(ctx context.Context) error
}

// Browser is the port to the user's browser: the extension over native
// messaging, or CDP. Errors are transport failures; a check that fails in
// the page is reported in the Inspection or the Verdict, not as an error.
type Browser interface {
	// Via names the path: ViaExtension or ViaCDP.
	Via() string
	// Inspect finds the focused field (in req.Tab / req.Frame when set) and
	// remembers it for Insert.
	Inspect(ctx context.Context, req Request) (Inspection, error)
	// OpenPrompt shows the loopback prompt at url to the human.
	OpenPrompt(ctx context.Context, url string) (PromptWindow, error)
	// Insert re-checks origin, element and kind in the page and, only if
	// all still hold, inserts value. The caller zeroes value afterwards;
	// implementations must not keep it.
	Insert(ctx context.Context, in Inspection, value []byte) (Verdict, error)
}

// Progress is one step of a running request, for the waiting agent's
// display.
type Progress struct {
	Phase string `json:"phase"` // inspecting, waiting_for_human, inserting
	// Deadline is when the current phase gives up, if it has one.
	Deadline time.Time `json:"deadline,omitzero"`
}

// Phases reported through Progress.
const (
	PhaseInspecting = "inspecting"
	PhaseWaiting    = "waiting_for_human"
	PhaseInserting  = "inserting"
)
