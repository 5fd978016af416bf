package fill

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/passkey"
)

// pkBrowser is a fakeBrowser that can arm a tab: the page's call is
// what call makes of the arm (nil: the page never calls), made once
// gate closes (nil: at once).
type pkBrowser struct {
	*fakeBrowser
	call     func(a passkey.Arm) passkey.Call
	gate     chan struct{}
	mu       sync.Mutex
	arms     []passkey.Arm
	answered []PasskeyResponse
	refused  int
	passed   int
}

func (b *pkBrowser) ArmPasskey(ctx context.Context, a passkey.Arm, _ string, armed func()) (passkey.Call, error) {
	b.mu.Lock()
	b.arms = append(b.arms, a)
	b.mu.Unlock()
	if armed != nil {
		armed()
	}
	if b.gate != nil {
		select {
		case <-b.gate:
		case <-ctx.Done():
			return passkey.Call{}, ctx.Err()
		}
	}
	if b.call == nil {
		<-ctx.Done()
		return passkey.Call{}, ctx.Err()
	}
	return b.call(a), nil
}
func (b *pkBrowser) AnswerPasskey(_ context.Context, _ string, r PasskeyResponse) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answered = append(b.answered, r)
	return nil
}
func (b *pkBrowser) RefusePasskey(context.Context, string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refused++
	return nil
}
func (b *pkBrowser) PassPasskey(context.Context, string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.passed++
	return nil
}

// fakePasskeys keeps one passkey and records how it was used.
type fakePasskeys struct {
	mu       sync.Mutex
	kept     *passkey.Stored
	signed   []passkey.Presence
	enrolled []passkey.Presence
	account  string
}

func (p *fakePasskeys) Lookup(_ context.Context, _, account string) (passkey.Stored, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.kept == nil {
		return passkey.Stored{}, errors.New("none kept")
	}
	p.account = account
	return *p.kept, nil
}
func (p *fakePasskeys) Enrol(_ context.Context, _, account string, _ passkey.Origin, rp passkey.RPID, _, _ []byte, pr passkey.Presence) (PasskeyResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enrolled = append(p.enrolled, pr)
	p.kept, p.account = &passkey.Stored{RPID: rp.String(), ID: []byte("new")}, account
	return PasskeyResponse{ID: []byte("new"), AttestationObject: []byte{1}, PublicKey: []byte{2}}, nil
}
func (p *fakePasskeys) Sign(_ context.Context, _, _ string, _ passkey.Origin, rp passkey.RPID, _ []byte, pr passkey.Presence) (PasskeyResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signed = append(p.signed, pr)
	return PasskeyResponse{ID: p.kept.ID, Signature: []byte{3}}, nil
}

const pkOrigin = "https://login.example.com"

// goodCall is the call a page of pkOrigin makes under a.
func goodCall(a passkey.Arm) passkey.Call {
	c := passkey.Call{ID: a.ID, Ceremony: a.Ceremony, Tab: a.Tab, Origin: pkOrigin, RPID: "example.com",
		Challenge: []byte("challenge"), UserVerification: "preferred"}
	if a.Ceremony == passkey.Create {
		c.UserHandle, c.UserName, c.Algs = []byte{7}, "ada", []int64{-7}
	}
	return c
}

type pkRig struct {
	*rig
	pb     *pkBrowser
	keys   *fakePasskeys
	native *fakeNative
	notes  *fakeNotifier
	plan   *fakePlanner
}

func newPKRig(t *testing.T, approval string) *pkRig {
	r := newRig(t)
	r.b.inspection = Inspection{Tab: 5, Frame: 3, Origins: []string{"https://frame.example.net", pkOrigin}, Field: FieldInfo{Kind: FieldNone}}
	pr := &pkRig{rig: r, pb: &pkBrowser{fakeBrowser: r.b, call: goodCall},
		keys:   &fakePasskeys{kept: &passkey.Stored{RPID: "example.com", ID: []byte("ours")}},
		native: &fakeNative{}, notes: &fakeNotifier{},
		plan: &fakePlanner{plan: Plan{Approval: approval, Lease: time.Minute, Saved: true, Account: "ada", Store: "the OS keyring",
			Stamps: map[string]string{"ada": "s1"}}},
	}
	pr.native.answer = func(context.Context, PromptInfo) (Answer, error) { return Answer{Approved: true}, nil }
	r.e.Browser, r.e.Passkeys, r.e.Native, r.e.Notifier, r.e.Planner, r.e.Leases = pr.pb, pr.keys, pr.native, pr.notes, pr.plan, NewMemState()
	return pr
}

func (r *pkRig) get(t *testing.T) Result {
	return r.e.Run(context.Background(), checked(t, Request{Service: "example.com", Field: FieldPasskey}), agent, nil)
}

func TestPasskeySignIn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		approval string
		edit     func(r *pkRig)
		status   Status
		detail   string
		prompts  int
		notices  int
		uv       []bool // the presence each signature got: UV
		refused  int
		passed   int
	}{
		{name: "each: the person approves, UV", approval: ApprovalEach, status: StatusOK, detail: "approved in the prompt", prompts: 1, uv: []bool{true}},
		{name: "each: UV required", approval: ApprovalEach, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.UserVerification = "required" }) },
			status: StatusOK, prompts: 1, uv: []bool{true}},
		{name: "none: a notice, no UV", approval: ApprovalNone, status: StatusOK, detail: "approval = none", notices: 1, uv: []bool{false}},
		{name: "none: UV required is refused", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.UserVerification = "required" }) },
			status: StatusRefused, detail: "requires user verification", notices: 1, refused: 1},
		{name: "none without a notice", approval: ApprovalNone, edit: func(r *pkRig) { r.notes.err = errors.New("notifications off") },
			status: StatusOK, prompts: 1, notices: 1, uv: []bool{true}},
		{name: "the person cancels", approval: ApprovalEach, edit: func(r *pkRig) {
			r.native.answer = func(context.Context, PromptInfo) (Answer, error) { return Answer{Cancelled: true}, nil }
		}, status: StatusCancelled, prompts: 1},
		{name: "no native dialog", approval: ApprovalEach, edit: func(r *pkRig) { r.native.avail = errors.New("no display") }, status: StatusRefused, detail: "native dialog"},
		{name: "nothing kept", approval: ApprovalNone, edit: func(r *pkRig) { r.plan.plan.Saved, r.plan.plan.Unsaved = false, "no passkey of the agents' is kept" },
			status: StatusFailed, detail: "no passkey"},
		{name: "several kept", approval: ApprovalNone, edit: func(r *pkRig) { r.plan.plan.Accounts = []string{"a", "b"} }, status: StatusRefused, detail: "several passkeys"},
		{name: "policy refuses", approval: ApprovalNone, edit: func(r *pkRig) { r.e.Policy = fakePolicy{detail: "not the service"} }, status: StatusRefused, detail: "not the service"},
		{name: "wrong origin", approval: ApprovalNone, edit: func(r *pkRig) {
			r.pb.call = withCall(func(c *passkey.Call) { c.Origin = "https://evil.example.net" })
		},
			status: StatusRefused, detail: "browser's own", notices: 1, passed: 1},
		{name: "rpId not claimable", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.RPID = "example.org" }) },
			status: StatusRefused, detail: "may not claim", notices: 1, passed: 1},
		{name: "rpId not the kept one", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.RPID = "login.example.com" }) },
			status: StatusRefused, detail: "another relying party", notices: 1, passed: 1},
		{name: "allowCredentials without ours", approval: ApprovalNone, edit: func(r *pkRig) {
			r.pb.call = withCall(func(c *passkey.Call) { c.Allow = [][]byte{[]byte("theirs")} })
		},
			status: StatusRefused, detail: "other passkeys", notices: 1, passed: 1},
		{name: "a frame's call", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.Frame = 3 }) },
			status: StatusRefused, detail: "frame", notices: 1, passed: 1},
		{name: "not armed (another request id)", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.ID = "forged" }) },
			status: StatusRefused, detail: "no request", notices: 1, passed: 1},
		{name: "create on a tab armed for get", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = withCall(func(c *passkey.Call) { c.Ceremony = passkey.Create }) },
			status: StatusRefused, detail: "armed for", notices: 1, passed: 1},
		{name: "driven, clean room (the default): refused with the fix", approval: ApprovalNone, edit: func(r *pkRig) { r.b.drive = driven },
			status: StatusRefused, detail: `set driven = "in-page" for example.com`},
		{name: "driven, in page: approval none is asked each time", approval: ApprovalNone, edit: func(r *pkRig) {
			r.b.drive = driven
			r.e.Policy = fakePolicy{allow: true, driven: DrivenInPage}
		}, status: StatusOK, detail: "approved in the prompt", prompts: 1, uv: []bool{true}},
		{name: "the page never calls (expired arm)", approval: ApprovalNone, edit: func(r *pkRig) { r.pb.call = nil; r.e.Limits.PasskeyWait = 50 * time.Millisecond },
			status: StatusNoResponse, detail: "did not call", notices: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPKRig(t, tc.approval)
			if tc.edit != nil {
				tc.edit(r)
			}
			res := r.get(t)
			if res.Status != tc.status || !strings.Contains(res.Detail, tc.detail) {
				t.Fatalf("result %s: %s; want %s with %q", res.Status, res.Detail, tc.status, tc.detail)
			}
			if res.Origin != pkOrigin && tc.status != StatusRefused {
				t.Errorf("origin %q; want the top page's %q", res.Origin, pkOrigin)
			}
			if got := r.native.times(); got != tc.prompts {
				t.Errorf("%d prompts; want %d", got, tc.prompts)
			}
			if got := r.notes.count(); got != tc.notices {
				t.Errorf("%d notices; want %d", got, tc.notices)
			}
			var uv []bool
			for _, p := range r.keys.signed {
				if !p.UserPresent {
					t.Error("a signature without UP")
				}
				uv = append(uv, p.UserVerified)
			}
			if len(uv) != len(tc.uv) || (len(uv) > 0 && uv[0] != tc.uv[0]) {
				t.Errorf("signatures with UV %v; want %v", uv, tc.uv)
			}
			if len(r.pb.answered) != len(tc.uv) || r.pb.refused != tc.refused || r.pb.passed != tc.passed {
				t.Errorf("answered %d, refused %d, passed %d; want %d, %d, %d", len(r.pb.answered), r.pb.refused, r.pb.passed, len(tc.uv), tc.refused, tc.passed)
			}
			for _, a := range r.pb.arms {
				if a.Tab != 5 || a.Origin != pkOrigin || a.Ceremony != passkey.Get || a.Account != "ada" {
					t.Errorf("armed %+v; want tab 5's top page for get", a)
				}
			}
			for _, in := range r.native.asked {
				if in.Field != FieldPasskey || in.Enrol || in.Origin != pkOrigin || in.Account != "ada" {
					t.Errorf("prompt %+v", in)
				}
			}
		})
	}
}

// withCall is goodCall changed by edit.
func withCall(edit func(*passkey.Call)) func(passkey.Arm) passkey.Call {
	return func(a passkey.Arm) passkey.Call {
		c := goodCall(a)
		edit(&c)
		return c
	}
}

// A lease covers passkeys: approved once, the same agent process signs
// in again with a notice and no prompt, without UV.
func TestPasskeyLease(t *testing.T) {
	r := newPKRig(t, ApprovalLease)
	if res := r.get(t); res.Status != StatusOK || !strings.Contains(res.Detail, "a lease") {
		t.Fatalf("first: %s: %s", res.Status, res.Detail)
	}
	if res := r.get(t); res.Status != StatusOK || !strings.Contains(res.Detail, "under a lease") {
		t.Fatalf("second: %s: %s", res.Status, res.Detail)
	}
	if r.native.times() != 1 || r.notes.count() != 1 || len(r.keys.signed) != 2 || !r.keys.signed[0].UserVerified || r.keys.signed[1].UserVerified {
		t.Fatalf("prompts %d, notices %d, signatures %+v", r.native.times(), r.notes.count(), r.keys.signed)
	}
	// The passkey forgotten (another stamp): the lease ends, the person is asked.
	r.plan.plan.Stamps = map[string]string{"ada": "s2"}
	if res := r.get(t); res.Status != StatusOK || r.native.times() != 2 {
		t.Fatalf("after the passkey changed: %s, %d prompts", res.Status, r.native.times())
	}
}

// An enrolment is always asked of the person, whatever the policy, and
// answered only for create().
func TestPasskeyEnrol(t *testing.T) {
	r := newPKRig(t, ApprovalNone)
	r.keys.kept = nil
	add := checked(t, Request{Service: "example.com", Field: FieldPasskey, Enrol: true, Account: "ada"})
	res := r.e.Run(context.Background(), add, agent, nil)
	if res.Status != StatusOK || !strings.Contains(res.Detail, "added a passkey") {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	if r.native.times() != 1 || !r.native.asked[0].Enrol || r.native.asked[0].Account != "ada" || r.notes.count() != 0 {
		t.Fatalf("prompts %+v, notices %d", r.native.asked, r.notes.count())
	}
	if len(r.keys.enrolled) != 1 || !r.keys.enrolled[0].UserVerified || r.keys.account != "ada" || len(r.pb.answered) != 1 || r.pb.arms[0].Ceremony != passkey.Create {
		t.Fatalf("enrolled %+v under %q, answered %d, armed %+v", r.keys.enrolled, r.keys.account, len(r.pb.answered), r.pb.arms)
	}
	// The person says no: nothing is armed.
	r = newPKRig(t, ApprovalNone)
	r.native.answer = func(context.Context, PromptInfo) (Answer, error) { return Answer{Cancelled: true}, nil }
	if res := r.e.Run(context.Background(), add, agent, nil); res.Status != StatusCancelled || len(r.pb.arms) != 0 {
		t.Fatalf("%s, %d arms", res.Status, len(r.pb.arms))
	}
	// A get() on a tab armed to add is the browser's.
	r = newPKRig(t, ApprovalNone)
	r.pb.call = withCall(func(c *passkey.Call) { c.Ceremony = passkey.Get })
	if res := r.e.Run(context.Background(), add, agent, nil); res.Status != StatusRefused || r.pb.passed != 1 || len(r.keys.enrolled) != 0 {
		t.Fatalf("%s: %s; passed %d", res.Status, res.Detail, r.pb.passed)
	}
	if _, err := Check(Request{Service: "a.test", Enrol: true}, canonical); err == nil {
		t.Error("Check took enrol for a password")
	}
	if _, err := Check(Request{Service: "a.test", Field: FieldPasskey, Account: "ada"}, canonical); err == nil {
		t.Error("Check took an account without enrol")
	}
}

// A sign-in that does not wait answers its agent once the tab is armed,
// and the arm outlives the agent's hang-up, not the host's end.
func TestPasskeyNoWait(t *testing.T) {
	req := checked(t, Request{Service: "example.com", Field: FieldPasskey, NoWait: true})
	for _, tc := range []struct {
		name   string
		cause  error  // how the agent's request context ends after the early answer
		status Status // the request's own outcome, as audited
		signed int
	}{
		{name: "the agent hangs up: the page's call is answered", cause: ErrAgentGone, status: StatusOK, signed: 1},
		{name: "the host ends: the arm ends", cause: context.Canceled, status: StatusCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newPKRig(t, ApprovalNone)
			r.pb.gate = make(chan struct{})
			ctx, end := context.WithCancelCause(context.Background())
			defer end(nil)
			early := make(chan Result, 2)
			progress := func(p Progress) {
				if p.Result != nil {
					if p.Phase != PhaseArmed || p.Deadline.IsZero() {
						t.Errorf("early answer in progress %+v", p)
					}
					early <- *p.Result
				}
			}
			done := make(chan Result, 1)
			go func() { done <- r.e.Run(ctx, req, agent, progress) }()
			got := <-early
			if got.Status != StatusArmed || got.Origin != pkOrigin || !strings.Contains(got.Detail, "click the page's passkey button") {
				t.Fatalf("early answer %s (%s): %s", got.Status, got.Origin, got.Detail)
			}
			if got.Status.ExitCode() != 0 {
				t.Errorf("armed exits %d", got.Status.ExitCode())
			}
			end(tc.cause)
			if tc.cause == ErrAgentGone {
				time.Sleep(20 * time.Millisecond) // the hang-up has been seen
				close(r.pb.gate)
			}
			res := <-done
			if res.Status != tc.status || len(r.keys.signed) != tc.signed || len(r.pb.answered) != tc.signed {
				t.Fatalf("outcome %s: %s; signed %d, answered %d", res.Status, res.Detail, len(r.keys.signed), len(r.pb.answered))
			}
			if len(early) != 0 {
				t.Error("a second early answer")
			}
		})
	}
	// Before the tab is armed, a hang-up still ends the request.
	r := newPKRig(t, ApprovalEach)
	ctx, end := context.WithCancelCause(context.Background())
	r.native.answer = func(context.Context, PromptInfo) (Answer, error) {
		end(ErrAgentGone)
		return Answer{Cancelled: true}, ctx.Err()
	}
	if res := r.e.Run(ctx, req, agent, func(p Progress) {
		if p.Result != nil {
			t.Error("an early answer before the arm")
		}
	}); res.Status == StatusOK || len(r.pb.arms) != 0 {
		t.Fatalf("%s, %d arms", res.Status, len(r.pb.arms))
	}
	for _, bad := range []Request{
		{Service: "a.test", NoWait: true},
		{Service: "a.test", Field: FieldPasskey, Enrol: true, NoWait: true},
	} {
		if _, err := Check(bad, canonical); err == nil {
			t.Errorf("Check took no_wait with %+v", bad)
		}
	}
}

// The CDP path never offers passkeys.
func TestPasskeyNotOnCDP(t *testing.T) {
	r := newRig(t)
	r.e.Passkeys = &fakePasskeys{}
	res := r.e.Run(context.Background(), checked(t, Request{Service: "example.com", Field: FieldPasskey}), agent, nil)
	if res.Status != StatusRefused || !strings.Contains(res.Detail, "need the fillgate extension") || !strings.Contains(res.Detail, "private key") {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
}
