package fill

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSource hands out a copy of value and keeps every buffer it handed
// out, to check they were zeroed.
type fakeSource struct {
	mu       sync.Mutex
	value    []byte
	err      error
	fetches  []FetchRequest
	handed   [][]byte
	asked    []byte // what Ask gave it (a copy), compared, never printed
	askedBuf []byte // the buffer Ask gave it
	onFetch  func()
}

func (s *fakeSource) Describe() string { return "from the test store: work/github" }
func (s *fakeSource) Fetch(ctx context.Context, req FetchRequest) ([]byte, error) {
	if s.onFetch != nil {
		s.onFetch()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches = append(s.fetches, FetchRequest{Service: req.Service, Field: req.Field, Account: req.Account})
	if req.Ask != nil {
		a, err := req.Ask(ctx, "the database password")
		if err != nil {
			return nil, err
		}
		s.asked = bytes.Clone(a)
		s.askedBuf = a
		defer clear(a) // as a source does
	}
	if s.err != nil {
		return nil, s.err
	}
	v := bytes.Clone(s.value)
	s.handed = append(s.handed, v)
	return v, nil
}

func (s *fakeSource) zeroed(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range append(slices.Clone(s.handed), s.askedBuf) {
		if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
			t.Error("a buffer holding a value was not zeroed")
		}
	}
}

// fakePlanner returns plan and records what it was asked to remember.
type fakePlanner struct {
	mu          sync.Mutex
	plan        Plan
	err         error
	queries     []PlanQuery
	remembered  []byte
	rememberFor string // service field account
	rememberErr error
}

func (p *fakePlanner) Plan(_ context.Context, q PlanQuery) (Plan, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.queries = append(p.queries, q)
	return p.plan, p.err
}
func (p *fakePlanner) Remember(_ context.Context, service, field, account string, value []byte) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.remembered = bytes.Clone(value)
	p.rememberFor = service + " " + field + " " + account
	if p.rememberErr != nil {
		return "", p.rememberErr
	}
	return "stamp-remembered", nil
}

// fakeNotifier records notices, or fails.
type fakeNotifier struct {
	mu      sync.Mutex
	notices []Notice
	err     error
}

func (n *fakeNotifier) Notify(_ context.Context, x Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notices = append(n.notices, x)
	return n.err
}

func (n *fakeNotifier) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.notices)
}

// savedRig is a rig whose policy plans a saved value from src.
type savedRig struct {
	*rig
	src     *fakeSource
	planner *fakePlanner
	notes   *fakeNotifier
	state   *MemState
	prompts int
	now     time.Time
}

func newSavedRig(t *testing.T, plan Plan) *savedRig {
	r := &savedRig{rig: newRig(t), src: &fakeSource{value: secret}, notes: &fakeNotifier{},
		now: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	if plan.Source == nil && plan.Saved {
		plan.Source = r.src
	}
	if plan.Store == "" {
		plan.Store = "the test store"
	}
	r.planner = &fakePlanner{plan: plan}
	r.state = NewMemState()
	r.e.Planner, r.e.Leases, r.e.Notifier, r.e.State = r.planner, r.state, r.notes, r.state
	r.e.Now = func() time.Time { return r.now }
	prompter := r.e.Prompter
	r.e.Prompter = func(ctx context.Context, info PromptInfo) (Prompt, error) {
		r.prompts++
		r.p = &fakePrompt{answers: make(chan Answer, 1), errs: make(chan error, 1)}
		return prompter(ctx, info)
	}
	return r
}

// approves answers the next prompt with Approve (for account, with ask
// typed for the store).
func (r *savedRig) approves(account string, ask []byte) {
	r.b.onOpen = func(string) {
		r.p.answers <- Answer{Approved: true, Account: account, Asked: bytes.Clone(ask)}
	}
}

func (r *savedRig) fill(t *testing.T) Result {
	t.Helper()
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	r.assertClean(t, res)
	r.src.zeroed(t)
	return res
}

func (r *savedRig) lastHow() string {
	return r.audit.entries[len(r.audit.entries)-1].How
}

func TestApproveSaved(t *testing.T) {
	r := newSavedRig(t, Plan{Saved: true, Account: "alice@example.com"})
	r.b.inspection.Account = "alice@example.com"
	r.approves("", nil)
	opened, answeredAtFetch := false, false
	open := r.b.onOpen
	r.b.onOpen = func(u string) { opened = true; open(u) }
	// The answer was put in when the prompt opened, and Wait has taken it.
	r.src.onFetch = func() { answeredAtFetch = opened && len(r.p.answers) == 0 }
	res := r.fill(t)
	if res.Status != StatusOK || !strings.Contains(res.Detail, "the value came from the test store, approved in the prompt") {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	if !bytes.Equal(r.b.got, secret) {
		t.Error("value differed")
	}
	if strings.Contains(res.Detail, "alice") || strings.Contains(res.Detail, "work/github") {
		t.Errorf("the result names the account or the entry: %s", res.Detail)
	}
	if r.prompt.From != "from the test store" || r.prompt.Entry != "from the test store: work/github" || r.prompt.Account != "alice@example.com" {
		t.Errorf("prompt info %+v", r.prompt)
	}
	if len(r.src.fetches) != 1 || r.src.fetches[0].Account != "alice@example.com" {
		t.Errorf("fetches %+v", r.src.fetches)
	}
	if !answeredAtFetch {
		t.Error("the value was fetched before the prompt's answer was in")
	}
	r.p.mu.Lock()
	closed := r.p.closed
	r.p.mu.Unlock()
	if !closed {
		t.Error("the prompt was still open when the fill returned")
	}
	if r.lastHow() != HowApproved {
		t.Errorf("audit how %q", r.lastHow())
	}
}

func TestTypedAndRemembered(t *testing.T) {
	for _, c := range []struct {
		name     string
		allow    bool // the plan lets the prompt offer it
		verdict  Verdict
		want     bool
		wantNote string
	}{
		{"remembered", true, Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true}, true, "remembered in the OS keyring"},
		{"not offered", false, Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true}, false, ""},
		{"insert failed", true, Verdict{Inserted: true, Stopped: "invalid"}, false, ""},
		{"not inserted", true, Verdict{Reason: "focus_moved"}, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newSavedRig(t, Plan{Remember: c.allow})
			r.b.inspection.Account = "bob"
			r.b.verdict = c.verdict
			r.b.onOpen = func(string) { r.p.answers <- Answer{Value: bytes.Clone(secret), Remember: true} }
			res := r.fill(t)
			if got := r.planner.remembered != nil; got != c.want {
				t.Fatalf("remembered %v, want %v (%s: %s)", got, c.want, res.Status, res.Detail)
			}
			if c.want && (!bytes.Equal(r.planner.remembered, secret) || r.planner.rememberFor != "github.com password bob") {
				t.Errorf("remembered the wrong thing for %q: value matched %v", r.planner.rememberFor, bytes.Equal(r.planner.remembered, secret))
			}
			if !strings.Contains(res.Detail, c.wantNote) {
				t.Errorf("detail %q", res.Detail)
			}
			if r.prompt.Remember != c.allow {
				t.Errorf("the prompt offered remembering: %v", r.prompt.Remember)
			}
		})
	}
}

func TestLease(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: 10 * time.Minute, Saved: true})
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusOK || !strings.Contains(res.Detail, "until 10:10:00 (a lease)") {
		t.Fatalf("first fill %s: %s", res.Status, res.Detail)
	}
	if r.prompts != 1 || r.notes.count() != 0 {
		t.Fatalf("%d prompts and %d notices after the first fill", r.prompts, r.notes.count())
	}
	r.b.onOpen = func(string) { t.Error("a prompt opened under the lease") }
	r.now = r.now.Add(9 * time.Minute)
	res := r.fill(t)
	if res.Status != StatusOK || !strings.Contains(res.Detail, "under a lease, with a notice and no prompt") || r.lastHow() != HowLease {
		t.Fatalf("fill under the lease: %s %s (how %s)", res.Status, res.Detail, r.lastHow())
	}
	if r.prompts != 1 || r.notes.count() != 1 || r.b.inserts != 2 {
		t.Fatalf("%d prompts, %d notices, %d inserts", r.prompts, r.notes.count(), r.b.inserts)
	}
	n := r.notes.notices[0]
	for _, want := range []string{"claude (pid 4121) via fillgate fill", "https://github.com", "github.com", "from the test store"} {
		if !strings.Contains(n.Title+" "+n.Message, want) {
			t.Errorf("the notice %+v does not name %q", n, want)
		}
	}

	// Another agent, another page's account, another origin: asked again.
	for _, c := range []struct {
		name   string
		change func()
	}{
		{"another agent", func() { r.e.Now = func() time.Time { return r.now } }},
		{"another account", func() { r.b.inspection.Account = "carol" }},
		{"another origin", func() { r.b.inspection.Origins = []string{"https://gist.github.com"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			saved := r.b.inspection
			defer func() { r.b.inspection = saved }()
			c.change()
			a := agent
			if c.name == "another agent" {
				a.Exe = "/usr/bin/other"
			}
			r.approves("", nil)
			before := r.prompts
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), a, nil)
			if res.Status != StatusOK || r.prompts != before+1 {
				t.Errorf("%s: %s %s after %d prompts", c.name, res.Status, res.Detail, r.prompts-before)
			}
		})
	}

	// After it ends: asked again.
	r.now = r.now.Add(time.Hour)
	r.approves("", nil)
	before := r.prompts
	if res := r.fill(t); res.Status != StatusOK || r.prompts != before+1 {
		t.Fatalf("after the lease: %s, %d prompts", res.Status, r.prompts-before)
	}
}

func TestLeaseNeedsANotice(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: time.Minute, Saved: true})
	r.approves("", nil)
	r.fill(t)
	r.notes.err = errors.New("no notification service")
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusOK || r.prompts != 2 || r.lastHow() != HowApproved {
		t.Fatalf("without a notice: %s, %d prompts, how %s", res.Status, r.prompts, r.lastHow())
	}
	r.e.Notifier = nil
	r.approves("", nil)
	if r.fill(t); r.prompts != 3 {
		t.Fatalf("without a notifier: %d prompts", r.prompts)
	}
}

func TestLeaseTypedOnlyWhenRemembered(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: time.Minute, Remember: true})
	r.b.onOpen = func(string) { r.p.answers <- Answer{Value: bytes.Clone(secret)} }
	r.fill(t)
	if leases := r.state.LiveLeases(r.now); len(leases) != 0 {
		t.Fatalf("a typed value nobody remembered started a lease: %+v", leases)
	}
	r.b.onOpen = func(string) { r.p.answers <- Answer{Value: bytes.Clone(secret), Remember: true} }
	r.fill(t)
	if leases := r.state.LiveLeases(r.now); len(leases) != 1 || leases[0].Until != r.now.Add(time.Minute) {
		t.Fatalf("leases %+v", leases)
	}
}

func TestApprovalNone(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalNone, Saved: true})
	r.b.onOpen = func(string) { t.Error("a prompt opened with approval none") }
	res := r.fill(t)
	if res.Status != StatusOK || r.prompts != 0 || r.notes.count() != 1 || r.lastHow() != HowNone ||
		!strings.Contains(res.Detail, "with a notice and no prompt (approval = none)") {
		t.Fatalf("%s %s; %d prompts, %d notices", res.Status, res.Detail, r.prompts, r.notes.count())
	}
	if !bytes.Equal(r.b.got, secret) {
		t.Error("value differed")
	}

	r.planner.plan = Plan{Approval: ApprovalNone, Unsaved: "remember it: fillgate remember --service github.com"}
	res = r.fill(t)
	if res.Status != StatusFailed || !strings.Contains(res.Detail, "fillgate remember --service github.com") || r.prompts != 0 || r.b.inserts != 1 {
		t.Fatalf("nothing saved: %s %s; %d prompts, %d inserts", res.Status, res.Detail, r.prompts, r.b.inserts)
	}
}

func TestSourceFails(t *testing.T) {
	for _, how := range []string{"approved", "none"} {
		t.Run(how, func(t *testing.T) {
			plan := Plan{Saved: true}
			if how == "none" {
				plan.Approval = ApprovalNone
			}
			r := newSavedRig(t, plan)
			r.src.err = &SourceError{Detail: "the OS keyring is locked", Fix: "unlock it"}
			r.approves("", nil)
			res := r.fill(t)
			if res.Status != StatusFailed || res.Detail != "the value could not be read from the test store: the OS keyring is locked; unlock it; nothing was typed" {
				t.Fatalf("%s: %s", res.Status, res.Detail)
			}
			if r.b.inserts != 0 || res.Submitted != nil {
				t.Errorf("%d inserts", r.b.inserts)
			}
		})
	}
}

func TestSeveralAccounts(t *testing.T) {
	r := newSavedRig(t, Plan{Saved: true, Accounts: []string{"alice", "bob"}})
	r.approves("bob", nil)
	if res := r.fill(t); res.Status != StatusOK || len(r.src.fetches) != 1 || r.src.fetches[0].Account != "bob" {
		t.Fatalf("%s %s; fetches %+v", res.Status, res.Detail, r.src.fetches)
	}
	if !slices.Equal(r.prompt.Accounts, []string{"alice", "bob"}) {
		t.Errorf("the prompt offered %v", r.prompt.Accounts)
	}
	for _, account := range []string{"mallory", ""} {
		r.approves(account, nil)
		if res := r.fill(t); res.Status != StatusFailed || r.b.inserts != 1 {
			t.Errorf("approving %q: %s %s", account, res.Status, res.Detail)
		}
	}
	// With approval none the person still picks.
	r.planner.plan.Approval = ApprovalNone
	r.approves("alice", nil)
	if res := r.fill(t); res.Status != StatusOK || r.notes.count() != 0 || r.src.fetches[len(r.src.fetches)-1].Account != "alice" {
		t.Fatalf("none with several accounts: %s %s", res.Status, res.Detail)
	}
}

func TestAskedForTheStore(t *testing.T) {
	r := newSavedRig(t, Plan{Saved: true, Ask: "the password of the KeePassXC database /db.kdbx"})
	dbPassword := []byte("fg-db-password-71c2")
	r.approves("", dbPassword)
	if res := r.fill(t); res.Status != StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	if r.prompt.Ask != "the password of the KeePassXC database /db.kdbx" {
		t.Errorf("prompt info %+v", r.prompt)
	}
	if !bytes.Equal(r.src.asked, dbPassword) {
		t.Error("the store got another database password: value differed")
	}
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusFailed || r.b.inserts != 1 {
		t.Errorf("an approval without the database password: %s %s", res.Status, res.Detail)
	}
}

func TestPageAccountCleaned(t *testing.T) {
	for account, want := range map[string]string{
		" alice@example.com ":     "alice@example.com",
		"al\u202eice":             "",
		"a\nb":                    "",
		strings.Repeat("x", 257):  "",
		string([]byte{0xff, 'a'}): "",
	} {
		r := newSavedRig(t, Plan{})
		r.b.inspection.Account = account
		r.humanTypes(secret)
		r.fill(t)
		if got := r.planner.queries[0].In.Account; got != want {
			t.Errorf("the page's account %q reached the planner as %q, want %q", account, got, want)
		}
	}
}
