// Package agentsock is the agent socket: the local endpoint (an AF_UNIX
// socket, on Windows a named pipe) through which an agent client
// (`fillgate fill`, `fillgate mcp`) asks a running host for a fill, and its
// wire format. It implements section 1 of PROTOCOL.md and nothing above it:
// which host runs a fill is internal/route's, who asked internal/agentid's,
// what the host answers internal/nmhost's.
//
// The host side is Listen and Serve: every host listens on
// <dir>/hosts/<pid>.sock, and the first live one also owns <dir>/agent.sock.
// Every accepted connection must come from a process of the same user, and
// its one request is read and checked before the Handler gets it (a Conn).
// The client side is Dial, and Fill, Status and Peek over it.
//
// No message on this socket ever carries a secret value.
package agentsock

import (
	"fmt"
	"math"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// Ops a Request may name.
const (
	OpFill   = "fill"
	OpStatus = "status"
	// OpPeek asks a host what its browser's active tab has focused, for
	// routing a fill to the right browser.
	OpPeek = "peek"
)

// Message types a host sends.
const (
	TypeProgress = "progress"
	TypeResult   = "result"
	TypeStatus   = "status"
	TypePeek     = "peek"
	TypeError    = "error"
)

// Error codes of a TypeError message.
const (
	// CodeBadRequest: the host could not read the request (malformed, too
	// large, too slow, or asking for something unknown).
	CodeBadRequest = "bad_request"
	// CodeForbidden: the peer runs as another user.
	CodeForbidden = "forbidden"
	// CodeBusy: the host already serves as many connections as it will at
	// once; try again in a moment.
	CodeBusy = "busy"
)

// Limits of one request.
const (
	// MaxRequest is the largest request line, its newline included.
	MaxRequest = 64 << 10
	// ReadTimeout is how long after connecting the whole request may take.
	ReadTimeout = 5 * time.Second
)

// Request is the one JSON object a client sends per connection.
type Request struct {
	Op      string `json:"op"`
	Service string `json:"service,omitempty"`
	Field   string `json:"field,omitempty"`
	// Then is submit (the default) or none.
	Then string `json:"then,omitempty"`
	// TimeoutMS may shorten the prompt budget, never lengthen it; 0 means
	// the policy's budget.
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
	Tab       *int64 `json:"tab,omitempty"`
	Frame     *int64 `json:"frame,omitempty"`
	// Client says how the agent reached fillgate; display only.
	Client string `json:"client,omitempty"`
	// Browser and Profile narrow which connected browser a fill may go
	// to (internal/route); empty means any.
	Browser string `json:"browser,omitempty"`
	Profile string `json:"profile,omitempty"`
	// Enrol, with field passkey, asks for the site's create() instead of
	// get() (`fillgate passkey add`).
	Enrol bool `json:"enrol,omitempty"`
	// Account, with enrol, names the account the new passkey is kept
	// under.
	Account string `json:"account,omitempty"`
	// NoWait, with field passkey, asks for the answer "armed" as soon as
	// the tab is armed, instead of waiting for the page's call.
	NoWait bool `json:"no_wait,omitempty"`
	// All asks a status request for every host, not just the one asked.
	All bool `json:"all,omitempty"`
	// Debug asks a status request for the answering host's own
	// runtime figures (HostStatus.Goroutines), for tests of what a host
	// leaves behind.
	Debug bool `json:"debug,omitempty"`
	// Agent is set only on a fill that another host forwarded after
	// routing it: the agent that host found behind its own peer. A host
	// takes it only from a peer that runs fillgate itself.
	Agent *fill.Agent `json:"agent,omitempty"`
}

// Message is one newline-delimited JSON message a host sends. Type says
// which of the other fields are set.
type Message struct {
	Type string `json:"type"`
	// Phase and Deadline: TypeProgress.
	Phase    string    `json:"phase,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
	// Where (TypeProgress, while waiting for the person) is where they
	// answer: "browser" or "desktop".
	Where string `json:"where,omitempty"`
	// Result: TypeResult.
	Result *fill.Result `json:"result,omitempty"`
	// Status and Hosts: TypeStatus. Hosts lists every host (the one
	// answering first) when the request asked for all.
	Status *HostStatus  `json:"status,omitempty"`
	Hosts  []HostStatus `json:"hosts,omitempty"`
	// Active: TypePeek.
	Active *ActiveTab `json:"active,omitempty"`
	// Error and Detail: TypeError.
	Error  string `json:"error,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// HostStatus describes one running host.
type HostStatus struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// Browser is the browser family that started the host (e.g.
	// "chromium", "firefox").
	Browser string `json:"browser,omitempty"`
	// BrowserName is the browser itself, from its executable (e.g.
	// "chromium", "chrome", "brave", "edge", "firefox"), or "".
	BrowserName string `json:"browser_name,omitempty"`
	// Profile is the browser's user-data directory (Chromium family) or
	// profile (Firefox) when it was started with one, else "default".
	Profile string `json:"profile,omitempty"`
	// BrowserPID is the pid of the browser that started the host, 0 when
	// the host does not say.
	BrowserPID int `json:"browser_pid,omitempty"`
	// Caller is the origin or add-on id the browser passed to the host.
	Caller    string          `json:"caller,omitempty"`
	Extension ExtensionStatus `json:"extension"`
	// Socket is the host's own endpoint: hosts/<pid>.sock, or on Windows
	// its named pipe.
	Socket string `json:"socket,omitempty"`
	// ActiveTab is what the browser's active tab has focused; only in an
	// answer to a status request that asked for all hosts.
	ActiveTab *ActiveTab `json:"active_tab,omitempty"`
	// Leases are the host's live leases (`fillgate saved` lists them):
	// service, field, account, agent, origin and end; never a value.
	Leases []fill.Lease `json:"leases,omitempty"`
	// Goroutines is how many goroutines the host runs; only in the
	// answering host's own status, and only when the request asked for
	// debug.
	Goroutines int `json:"goroutines,omitempty"`
	// Drive says whether anything but the person can drive the browser
	// (remote debugging, an attached debugger, automation) and why; nil
	// when the host does not say (an older host).
	Drive *fill.Drive `json:"drive,omitempty"`
	// Prompt is the policy's prompt mode the host applies: auto (a native
	// dialog while the browser can be driven), native or browser; "" when
	// the host does not say.
	Prompt string `json:"prompt,omitempty"`
}

// ActiveTab is what the active tab of a browser's last focused window has
// focused: the origin of the focused frame and the kind of the focused
// field. It names no other tab.
type ActiveTab struct {
	Origin string `json:"origin,omitempty"`
	// Field is the focused field's kind: fill.FieldPassword, FieldOTP,
	// FieldOther or FieldNone.
	Field string `json:"field"`
	// Problem is why the field is not usable, "" when it is.
	Problem string `json:"problem,omitempty"`
}

// LoginField reports whether the focused field is a password or
// one-time-code field.
func (t ActiveTab) LoginField() bool {
	return t.Field == fill.FieldPassword || t.Field == fill.FieldOTP
}

// ExtensionStatus describes the extension connected to a host.
type ExtensionStatus struct {
	Connected bool   `json:"connected"`
	Version   string `json:"version,omitempty"`
	Paused    bool   `json:"paused"`
	UserAgent string `json:"user_agent,omitempty"`
	// Instance is a random id the extension keeps in its own storage,
	// one per browser profile, so two profiles of one browser can be told
	// apart.
	Instance string `json:"instance,omitempty"`
}

// newFillRequest is the wire form of req.
func newFillRequest(req fill.Request, client string) Request {
	w := Request{
		Op:      OpFill,
		Service: req.Service,
		Field:   req.Field,
		Then:    req.Then,
		Tab:     req.Tab,
		Frame:   req.Frame,
		Client:  client,
		Browser: req.Browser,
		Profile: req.Profile,
		Enrol:   req.Enrol,
		Account: req.Account,
		NoWait:  req.NoWait,
	}
	if req.Timeout > 0 {
		w.TimeoutMS = max(req.Timeout.Milliseconds(), 1)
	}
	return w
}

// fillRequest checks a fill request and converts it. Its errors are
// details for a bad_request message: they never echo what the client sent.
func (r Request) fillRequest() (fill.Request, error) {
	if r.Service == "" {
		return fill.Request{}, fmt.Errorf("service is missing")
	}
	field, err := fill.NormalizeField(r.Field)
	if err != nil {
		return fill.Request{}, fmt.Errorf("unknown field: use %s, %s or %s", fill.FieldPassword, fill.FieldOTP, fill.FieldPasskey)
	}
	then, err := fill.NormalizeThen(r.Then)
	if err != nil {
		return fill.Request{}, fmt.Errorf("unknown then: use %s or %s", fill.ThenSubmit, fill.ThenNone)
	}
	if r.TimeoutMS < 0 {
		return fill.Request{}, fmt.Errorf("timeout_ms must not be negative")
	}
	ms := min(r.TimeoutMS, math.MaxInt64/int64(time.Millisecond))
	return fill.Request{
		Service: r.Service,
		Field:   field,
		Then:    then,
		Timeout: time.Duration(ms) * time.Millisecond,
		Tab:     r.Tab,
		Frame:   r.Frame,
		Browser: r.Browser,
		Profile: r.Profile,
		Enrol:   r.Enrol,
		Account: r.Account,
		NoWait:  r.NoWait,
	}, nil
}
