package fill

import (
	"context"
	"errors"
	"time"
)

// PromptInfo is what the prompt page tells the human.
type PromptInfo struct {
	Agent   Agent
	Service string
	Origin  string // the exact origin the value will be typed into
	Field   string // FieldPassword or FieldOTP
	Via     string // ViaExtension or ViaCDP
	Budget  time.Duration
	// Account is the account the page shows ("as alice@example.com"), ""
	// for none. The page chose it: display only.
	Account string
	// From is the kind of store the saved value the person may approve
	// comes from ("from pass", "from the OS keyring"), never an entry,
	// item, database or path: the loopback page shows it. "" when there
	// is none: the person can only type a value.
	From string
	// Entry names the saved value's entry in its store ("from pass:
	// work/github"), for the native dialog only, which no program driving
	// the browser can read; "" when there is none.
	Entry string
	// Accounts, with From, are the accounts the person picks among (never
	// values): several are saved and the page shows none.
	Accounts []string
	// Ask, with From, is what the source needs typed before it can be
	// read (the KeePassXC database password); "" for nothing.
	Ask string
	// Remember offers to remember a typed value in the OS keyring.
	Remember bool
	// Watched reports that a program is attached to the login page's tab
	// over the DevTools Protocol (Inspection.Watched): both prompts warn
	// that it can read what goes into the field.
	Watched bool
	// Stays reports that a typed value will stay in the field,
	// unsubmitted (then none), where the page and any tool reading it can
	// see it; both prompts say so before the person answers. An approved
	// saved value is always submitted.
	Stays bool
}

// Answer is the human's reply: a typed Value, an approval of the saved
// value, or a cancel. The receiver owns Value and Asked and must zero them
// (Zero).
type Answer struct {
	// Value is what the person typed; nil when they approved or
	// cancelled.
	Value []byte
	// Approved: the person approved the saved value (PromptInfo.From).
	Approved bool
	// Account is the account the person picked among PromptInfo.Accounts.
	Account string
	// Asked is what the person typed for PromptInfo.Ask.
	Asked []byte
	// Remember: the person asked to remember the typed Value.
	Remember  bool
	Cancelled bool
}

// Zero clears the answer's secrets.
func (a *Answer) Zero() {
	clear(a.Value)
	clear(a.Asked)
}

// Prompt is one open loopback prompt.
type Prompt interface {
	// URL is the one-shot page; it goes to the browser, never to the agent.
	URL() string
	// Wait blocks until the human answers or ctx ends (then it returns
	// ctx.Err()).
	Wait(ctx context.Context) (Answer, error)
	// Loaded reports whether a browser ever loaded the prompt page. A
	// prompt nobody loaded was never seen: only that counts against the
	// agent (the no-response cool-down).
	Loaded() bool
	// Close ends the prompt: later requests to the URL get nothing
	// usable, and its page disables itself.
	Close() error
}

// Prompter starts a prompt.
type Prompter func(ctx context.Context, info PromptInfo) (Prompt, error)

// Prompt modes: where the person answers (the policy's prompt key; the
// agent never chooses it).
const (
	// PromptAuto asks in a native dialog whenever anything but the person
	// can drive the browser (Browser.Drivable), else in the loopback page.
	PromptAuto = "auto"
	// PromptNative always asks in a native dialog.
	PromptNative = "native"
	// PromptBrowser always asks in the loopback page: the person accepts
	// that a program driving the browser could read or answer it.
	PromptBrowser = "browser"
)

// Native asks the person in a dialog the desktop draws, outside every
// browser (pinentry, the macOS or the Windows credential dialog), where no
// program driving a browser can read, type or click. It offers what the
// loopback page offers: typing a value, approving the saved one, picking
// its account, what its store needs, remembering a typed value.
type Native interface {
	// Available reports whether a dialog can be shown here; its error
	// says why not and how to mend it.
	Available() error
	// Ask shows the dialog for info and blocks until the person answers
	// (a cancel, or a closed dialog, is Answer.Cancelled), info.Budget
	// runs out or ctx ends (then it returns ctx.Err() or an error that
	// wraps context.DeadlineExceeded). The dialog dies with ctx. The
	// caller owns the answer's secrets and zeroes them.
	Ask(ctx context.Context, info PromptInfo) (Answer, error)
}

// ErrNoDialog is wrapped by Native.Ask's error when no dialog could be
// shown after all (the display went away, the program is missing).
var ErrNoDialog = errors.New("no native dialog could be shown")

// ErrBusy is returned by State.Claim when a prompt for the service is open.
var ErrBusy = errors.New("a prompt for this service is already open")

// State is the Engine's memory between requests: which services have an
// open prompt, which agent/service pairs are cooling down after a prompt
// nobody answered, and the per-agent request rate. It never holds a value.
// The host keeps it in memory; separate `fillgate fill` processes on the CDP
// path keep it in the state dir.
type State interface {
	// Claim marks a prompt for service as open, or returns ErrBusy.
	Claim(service string) (release func(), err error)
	// CoolingDown reports whether agent must not be prompted for service
	// before the returned time.
	CoolingDown(agentKey, service string, now time.Time) (until time.Time, ok bool)
	// NoteNoResponse starts a cool-down for agent and service.
	NoteNoResponse(agentKey, service string, until time.Time) error
	// Allow counts one request by agent and reports whether it is within
	// limit requests per window.
	Allow(agentKey string, now time.Time, limit int, window time.Duration) bool
}

// AuditEntry is one line of the audit log. It never holds a value.
type AuditEntry struct {
	Time    time.Time `json:"time"`
	Agent   Agent     `json:"agent"`
	Service string    `json:"service"`
	Origin  string    `json:"origin,omitempty"`
	Field   string    `json:"field,omitempty"`
	Via     string    `json:"via,omitempty"`
	Status  Status    `json:"status"`
	Detail  string    `json:"detail,omitempty"`
	// How says how the value was approved: HowTyped, HowApproved,
	// HowLease or HowNone; "" when nothing was inserted.
	How string `json:"how,omitempty"`
}

// How a fill's value was approved (AuditEntry.How).
const (
	HowTyped    = "typed"    // the person typed it in the prompt
	HowApproved = "approved" // the person approved a saved value in the prompt
	HowLease    = "lease"    // a lease filled a saved value, with a notice
	HowNone     = "none"     // approval = none filled a saved value, with a notice
)

// Auditor records outcomes.
type Auditor interface {
	Record(e AuditEntry) error
}
