package fill

import (
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
