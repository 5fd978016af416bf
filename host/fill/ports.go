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
}

// Answer is the human's reply. Value is nil when Cancelled; the receiver
// owns Value and must zero it.
type Answer struct {
	Value     []byte
	Cancelled bool
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
}

// Auditor records outcomes.
type Auditor interface {
	Record(e AuditEntry) error
}
