package fill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// Approval modes a Plan names. The person's policy sets them; the agent
// never does.
const (
	// ApprovalEach: the person answers the prompt for every fill.
	ApprovalEach = "each"
	// ApprovalLease: one approval lets the same agent fill the same
	// service and account on the same origin again, with a notice and no
	// prompt, until the lease ends.
	ApprovalLease = "lease"
	// ApprovalNone: a saved value fills with a notice and no prompt.
	ApprovalNone = "none"
)

// MaxLease caps a lease, whatever a Plan says.
const MaxLease = time.Hour

// Source is where a saved value comes from: the OS keyring or the
// person's own password store. The host builds it from the person's
// policy; the Engine only asks it, after the fill was approved.
type Source interface {
	// Describe names the source for the prompt and the notice ("from
	// pass: work/github"). It holds no secret. The agent never sees it.
	Describe() string
	// Fetch returns the value for req now (a one-time code is computed
	// now). The caller zeroes it. Its errors are *SourceError.
	Fetch(ctx context.Context, req FetchRequest) ([]byte, error)
}

// FetchRequest is what a Source is told about one fill. It never holds a
// value.
type FetchRequest struct {
	Service string // canonical
	Field   string // FieldPassword or FieldOTP
	// Account is the account of the saved value ("" for the service's
	// only one).
	Account string
	// Ask hands over what the person typed in the prompt for Plan.Ask
	// (the KeePassXC database password), once; the source zeroes it. nil
	// when nobody was asked (a fill with no prompt).
	Ask func(ctx context.Context, what string) ([]byte, error)
}

// SourceError is a Source's failure in words the agent may read: what
// went wrong and the step that mends it. It never holds a value, an entry
// name or the account.
type SourceError struct {
	Detail string // what went wrong, a sentence fragment
	Fix    string // the step that mends it, or ""
}

// Error renders "detail; fix".
func (e *SourceError) Error() string {
	if e.Fix == "" {
		return e.Detail
	}
	return e.Detail + "; " + e.Fix
}

// Plan is how one fill the policy allowed gets its value: how it is
// approved and where a saved value comes from. It never holds a value.
type Plan struct {
	// Approval is ApprovalEach (also ""), ApprovalLease or ApprovalNone.
	Approval string
	// Lease is how long a lease lasts (ApprovalLease), at most MaxLease.
	Lease time.Duration
	// Source is where a saved value comes from; nil: the person types it.
	Source Source
	// Store names the source in the agent's result ("the OS keyring",
	// "pass"): never an entry name.
	Store string
	// Saved reports that Source holds a value for this fill: the prompt
	// offers Approve, and a lease or ApprovalNone may fill it unasked.
	Saved bool
	// Account is the account of the saved value ("" for the service's
	// only one), unless Accounts is set.
	Account string
	// Accounts lists the accounts with a saved value when there are
	// several and the page shows none: the person picks one in the
	// prompt.
	Accounts []string
	// Ask is what Source needs typed in the prompt before it can be read
	// (the KeePassXC database password); "" for nothing.
	Ask string
	// Remember reports that the prompt may offer to remember a typed
	// value in the OS keyring (the policy allows it and a keyring
	// answers).
	Remember bool
	// Unsaved says why nothing is saved and what to do, for a fill that
	// needs a saved value (ApprovalNone); no account in it.
	Unsaved string
	// Stamps names, by account ("" for the service's only one), the
	// saved value as it is now: a new one each time it is remembered, so
	// a lease granted for a value that was forgotten, or replaced, no
	// longer covers. nil for a source that keeps none (a password store).
	Stamps map[string]string
}

// Stamp is the stamp of the saved value of account, "" when none.
func (p Plan) Stamp(account string) string { return p.Stamps[account] }

// PlanQuery is what a Planner plans for: a request the policy allowed on
// the inspected page.
type PlanQuery struct {
	Service string // canonical
	Field   string
	Agent   Agent
	In      Inspection
	Via     string
}

// Planner is the port to the person's policy, OS keyring and password
// stores: the host implements it; the Engine never switches on stores.
type Planner interface {
	// Plan says how the fill q gets its value.
	Plan(ctx context.Context, q PlanQuery) (Plan, error)
	// Remember stores a value the person typed and asked to remember, for
	// service, field and account, in the OS keyring, and returns its new
	// stamp (Plan.Stamps). Its errors hold no account.
	Remember(ctx context.Context, service, field, account string, value []byte) (stamp string, err error)
}

// Warmer is a Planner that can start reading what is saved for a service
// (names only, never a value) while the page is inspected, so that Plan,
// after the inspect, does not wait for it. Warm returns at once.
type Warmer interface {
	Warm(ctx context.Context, service, field string)
}

// Lease is one live lease: the agent process the person approved may fill
// a service's field on one origin, for the account the page shows, with
// the saved value it was granted for, without a prompt until Until. It
// never holds a value.
type Lease struct {
	ID       string    `json:"id"`        // random, to end it by
	AgentKey string    `json:"agent_key"` // Agent.ProcessKey(): one process, never its executable alone
	Agent    string    `json:"agent"`     // Agent.String(), for the person
	Service  string    `json:"service"`
	Field    string    `json:"field"`
	Account  string    `json:"account,omitempty"` // the account the page showed
	Item     string    `json:"item,omitempty"`    // the saved value's account
	Origin   string    `json:"origin"`
	Via      string    `json:"via,omitempty"`
	Until    time.Time `json:"until"`
	// Stamp is the saved value's stamp when the lease was granted
	// (Plan.Stamps): forgetting or replacing the value ends the lease.
	Stamp string `json:"stamp,omitempty"`
	// Watched: the person approved it in a prompt that told them a
	// program can read the login page (PromptInfo.Watched). A lease
	// granted without that covers no fill into a tab a program is
	// attached to.
	Watched bool `json:"watched,omitempty"`
}

// Covers reports whether the lease lets agentKey fill field of service on
// origin, for the account the page shows, at now.
func (l Lease) Covers(agentKey, service, field, account, origin string, now time.Time) bool {
	return agentKey != "" && l.AgentKey == agentKey && l.Service == service && l.Field == field &&
		l.Account == account && l.Origin == origin && now.Before(l.Until)
}

// Same reports whether l and o are for the same agent, service, field,
// account and origin (a new lease replaces such an old one).
func (l Lease) Same(o Lease) bool {
	return l.AgentKey == o.AgentKey && l.Service == o.Service && l.Field == o.Field &&
		l.Account == o.Account && l.Origin == o.Origin
}

// NewLeaseID returns a fresh random lease id.
func NewLeaseID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Leases keeps leases between fills. The extension path keeps them in the
// host's memory (MemState); separate `fillgate fill` processes on the CDP
// path in the state dir.
type Leases interface {
	// Leased returns the live lease that covers the fill, if any.
	Leased(agentKey, service, field, account, origin string, now time.Time) (Lease, bool)
	// Grant records l, replacing a lease for the same agent, service,
	// field, account and origin.
	Grant(l Lease) error
	// End ends the lease id, if it is there: one that no longer covers
	// anything (its saved value was forgotten or replaced).
	End(id string) error
}

// Notice is what the person is shown when a fill runs with no prompt.
type Notice struct {
	Title   string
	Message string
}

// Notifier shows the person a notice they can see: a browser
// notification from the extension, or the desktop's own. A fill with no
// prompt happens only after Notify succeeded; its error makes the Engine
// ask in the prompt instead.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}
