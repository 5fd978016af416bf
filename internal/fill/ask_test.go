package fill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNative is a native dialog the test answers.
type fakeNative struct {
	mu       sync.Mutex
	avail    error
	answer   func(ctx context.Context, info PromptInfo) (Answer, error)
	asked    []PromptInfo
	handed   [][]byte // buffers handed to the Engine, to check they were zeroed
	deadline time.Time
}

func (n *fakeNative) Available() error { return n.avail }

func (n *fakeNative) Ask(ctx context.Context, info PromptInfo) (Answer, error) {
	n.mu.Lock()
	n.asked = append(n.asked, info)
	n.deadline, _ = ctx.Deadline()
	n.mu.Unlock()
	if n.answer == nil {
		<-ctx.Done()
		return Answer{}, ctx.Err()
	}
	a, err := n.answer(ctx, info)
	n.mu.Lock()
	n.handed = append(n.handed, a.Value, a.Asked)
	n.mu.Unlock()
	return a, err
}

func (n *fakeNative) types(value []byte) {
	n.answer = func(context.Context, PromptInfo) (Answer, error) { return Answer{Value: bytes.Clone(value)}, nil }
}

func (n *fakeNative) times() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.asked)
}

func (n *fakeNative) zeroed(t *testing.T) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, b := range n.handed {
		if bytes.ContainsFunc(b, func(r rune) bool { return r != 0 }) {
			t.Error("a buffer the native dialog handed over was not zeroed")
		}
	}
}

var nativeSecret = []byte("fg-native-dialog-secret-51c2")

// nativeRig is a rig with a native dialog and prompt mode mode, where the
// person lets fillgate type into a browser a program drives (driven =
// "in-page"): these tests are about where such a fill asks.
func nativeRig(t *testing.T, mode string) (*rig, *fakeNative) {
	r := newRig(t)
	n := &fakeNative{}
	r.e.Native, r.e.PromptMode = n, mode
	r.e.Policy = fakePolicy{allow: true, driven: DrivenInPage}
	return r, n
}

// TestWhereThePersonAnswers: the prompt mode and what drives the browser
// decide between the loopback page and the native dialog.
func TestWhereThePersonAnswers(t *testing.T) {
	driven := Drive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port"}}
	for _, c := range []struct {
		name     string
		mode     string
		drive    Drive
		driveErr error
		native   bool // the native dialog asks (else the page)
	}{
		{"auto, nothing drives it", PromptAuto, Drive{}, nil, false},
		{"auto by default", "", Drive{}, nil, false},
		{"auto, driven", PromptAuto, driven, nil, true},
		{"auto, cannot tell", PromptAuto, Drive{}, errors.New("the extension did not answer"), true},
		{"native", PromptNative, Drive{}, nil, true},
		{"browser, driven", PromptBrowser, driven, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, n := nativeRig(t, c.mode)
			r.b.drive, r.b.driveErr = c.drive, c.driveErr
			n.types(nativeSecret)
			r.humanTypes(secret)
			var wheres []string
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, func(p Progress) {
				if p.Phase == PhaseWaiting {
					wheres = append(wheres, p.Where)
				}
			})

			if res.Status != StatusOK {
				t.Fatalf("%s: %s", res.Status, res.Detail)
			}
			want, where := secret, WhereBrowser
			if c.native {
				want, where = nativeSecret, WhereDesktop
			}
			if !bytes.Equal(r.b.got, want) {
				t.Error("the value inserted is not the one given where the person should answer")
			}
			if (n.times() == 1) != c.native || (r.b.window != nil) == c.native {
				t.Errorf("native dialogs %d, page opened %v", n.times(), r.b.window != nil)
			}
			if len(wheres) != 1 || wheres[0] != where {
				t.Errorf("progress said the person answers at %v", wheres)
			}
			// Once before anything is asked; a page of prompt = "auto"
			// asks again when the answer arrives.
			drives := 1
			if !c.native && c.mode != PromptBrowser {
				drives = 2
			}
			if r.b.drives != drives {
				t.Errorf("Drivable asked %d times; want %d", r.b.drives, drives)
			}
			r.assertClean(t, res)
			n.zeroed(t)
		})
	}
}

// TestNoNativeDialogRefuses: when the browser can be driven and no native
// dialog can be shown, the request is refused with the fix, and the page
// never opens.
func TestNoNativeDialogRefuses(t *testing.T) {
	for _, c := range []struct {
		name   string
		mode   string
		native bool
		avail  error
		want   []string
	}{
		{"driven, no dialog on this system", PromptAuto, false, nil,
			[]string{"started with --remote-debugging-port", "no native dialog", "nothing was asked"}},
		{"driven, no display", PromptAuto, true, errors.New("no display: run it in a desktop session"),
			[]string{"started with --remote-debugging-port", "run it in a desktop session"}},
		{"native, no display", PromptNative, true, errors.New("no pinentry: apt install pinentry-gtk2"),
			[]string{`prompt = "native"`, "apt install pinentry-gtk2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, n := nativeRig(t, c.mode)
			n.avail = c.avail
			if !c.native {
				r.e.Native = nil
			}
			r.b.drive = Drive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port"}}
			r.humanTypes(secret)
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
			if res.Status != StatusRefused || r.b.window != nil || r.b.inserts != 0 || n.times() != 0 {
				t.Fatalf("got %s %q; page opened %v, %d inserts", res.Status, res.Detail, r.b.window != nil, r.b.inserts)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Detail, w) {
					t.Errorf("the detail %q does not say %q", res.Detail, w)
				}
			}
		})
	}
}

// TestDrivenWhileThePageIsOpen: a browser that becomes drivable while the
// page prompt is open gets the page closed and the person asked in the
// native dialog, for what is left of the budget; nothing from the page is
// used.
func TestDrivenWhileThePageIsOpen(t *testing.T) {
	r, n := nativeRig(t, PromptAuto)
	r.b.driven = &Drive{Driven: true, Reasons: []string{"a debugger is attached to 1 of its pages"}}
	r.b.driveAfter = 2 // the choice, then one check while the page is open
	opened := time.Now()
	n.types(nativeSecret)
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	if res.Status != StatusOK || !bytes.Equal(r.b.got, nativeSecret) {
		t.Fatalf("%s: %s (the value inserted is the native dialog's: %v)", res.Status, res.Detail, bytes.Equal(r.b.got, nativeSecret))
	}
	if r.b.window == nil || r.b.window.closes == 0 || !r.p.closed {
		t.Error("the page prompt was not opened and closed again")
	}
	if n.times() != 1 || time.Until(n.deadline) > r.e.Limits.PromptBudget-time.Since(opened)+time.Second {
		t.Errorf("%d native dialogs, deadline in %s", n.times(), time.Until(n.deadline))
	}
	r.assertClean(t, res)
	n.zeroed(t)
}

// TestDrivenWhileThePageIsOpenCleanRoom: where the person's policy logs in
// to a browser a program drives in a clean room (the default), a browser
// that becomes drivable while the page prompt is open gets the page closed
// and the fill ended, nothing inserted: the agent asks again, and the
// login then happens in a clean room.
func TestDrivenWhileThePageIsOpenCleanRoom(t *testing.T) {
	r, n := nativeRig(t, PromptAuto)
	r.e.Policy = fakePolicy{allow: true}
	r.b.driven = &Drive{Driven: true, Reasons: []string{"a debugger is attached to 1 of its pages"}}
	r.b.driveAfter = 1 // the choice; the first check while the page is open says driven
	n.types(nativeSecret)
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	if res.Status != StatusFailed || !strings.Contains(res.Detail, "ask again: fillgate then logs in in a clean room") {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	if r.b.inserts != 0 || n.times() != 0 {
		t.Errorf("%d inserts, %d native dialogs; want none", r.b.inserts, n.times())
	}
	if r.b.window == nil || r.b.window.closes == 0 || !r.p.closed {
		t.Error("the page prompt was not opened and closed again")
	}
	r.assertClean(t, res)
}

// TestDrivenWhenTheAnswerArrives: the page's answer arrived, but by then
// a program could drive the browser: the answer is zeroed and never
// inserted, and the person is asked again outside.
func TestDrivenWhenTheAnswerArrives(t *testing.T) {
	for _, native := range []bool{true, false} {
		t.Run(fmt.Sprintf("native dialog %v", native), func(t *testing.T) {
			r, n := nativeRig(t, PromptAuto)
			if !native {
				r.e.Native = nil
			}
			r.b.driven = &Drive{Driven: true, Reasons: []string{"a debugger is attached to 1 of its pages"}}
			r.b.driveAfter = 1 // only the choice said "not driven"
			r.e.Limits.PromptBudget = time.Minute
			r.humanTypes(secret)
			n.types(nativeSecret)
			// The page answers before the first check while it is open.
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
			if native {
				if res.Status != StatusOK || !bytes.Equal(r.b.got, nativeSecret) || n.times() != 1 {
					t.Fatalf("%s: %s; %d native dialogs", res.Status, res.Detail, n.times())
				}
			} else if res.Status != StatusRefused || r.b.inserts != 0 || !strings.Contains(res.Detail, "became drivable") {
				t.Fatalf("without a native dialog: %s %q, %d inserts", res.Status, res.Detail, r.b.inserts)
			}
			if bytes.Equal(r.b.got, secret) {
				t.Error("the page's answer was inserted")
			}
			r.assertClean(t, res)
			n.zeroed(t)
		})
	}
}

// TestNativeOutcomes maps what the native dialog says to the statuses.
func TestNativeOutcomes(t *testing.T) {
	for _, c := range []struct {
		name     string
		answer   func(context.Context, PromptInfo) (Answer, error)
		budget   time.Duration
		status   Status
		detail   string
		cooldown bool
	}{
		{"cancelled", func(context.Context, PromptInfo) (Answer, error) { return Answer{Cancelled: true}, nil },
			0, StatusCancelled, "cancelled", false},
		{"timed out", nil, 50 * time.Millisecond, StatusNoResponse, "nobody answered", true},
		{"dialog's own timeout", func(context.Context, PromptInfo) (Answer, error) {
			return Answer{}, fmt.Errorf("pinentry: %w", context.DeadlineExceeded)
		}, 0, StatusNoResponse, "nobody answered", true},
		{"dialog failed", func(context.Context, PromptInfo) (Answer, error) {
			return Answer{}, fmt.Errorf("pinentry exited: %w", ErrNoDialog)
		}, 0, StatusFailed, "native dialog ended without an answer", false},
		{"empty answer", func(context.Context, PromptInfo) (Answer, error) { return Answer{Value: []byte{}}, nil },
			0, StatusFailed, "holds no value", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, n := nativeRig(t, PromptNative)
			n.answer = c.answer
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Timeout: c.budget}), agent, nil)
			if res.Status != c.status || !strings.Contains(res.Detail, c.detail) || r.b.inserts != 0 {
				t.Fatalf("got %s %q, %d inserts; want %s %q", res.Status, res.Detail, r.b.inserts, c.status, c.detail)
			}
			if _, cooling := r.e.State.CoolingDown(agent.Key(), "github.com", time.Now()); cooling != c.cooldown {
				t.Errorf("cooling down %v, want %v", cooling, c.cooldown)
			}
		})
	}

	// The agent hanging up ends the dialog and is a cancel.
	r, n := nativeRig(t, PromptNative)
	ctx, cancel := context.WithCancelCause(context.Background())
	n.answer = func(dctx context.Context, _ PromptInfo) (Answer, error) {
		cancel(ErrAgentGone)
		<-dctx.Done()
		return Answer{}, dctx.Err()
	}
	if res := r.e.Run(ctx, checked(t, Request{Service: "github.com"}), agent, nil); res.Status != StatusCancelled {
		t.Fatalf("the agent hung up: %+v", res)
	}
}

// TestNativeDialogIsTold: the native dialog gets the entry of a saved
// value and the page only its kind of store; both hear that a typed value
// will stay in the page with then none.
func TestNativeDialogIsTold(t *testing.T) {
	r := newSavedRig(t, Plan{Saved: true})
	n := &fakeNative{answer: func(context.Context, PromptInfo) (Answer, error) { return Answer{Value: bytes.Clone(secret)}, nil }}
	r.e.Native, r.e.PromptMode = n, PromptNative
	r.b.inspection.Watched = true
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Then: ThenNone}), agent, nil)
	if res.Status != StatusOK || r.b.then != ThenNone {
		t.Fatalf("%s %s; then %q", res.Status, res.Detail, r.b.then)
	}
	info := n.asked[0]
	if info.From != "from the test store" || info.Entry != "from the test store: work/github" || !info.Stays || !info.Watched {
		t.Errorf("the dialog was told %+v", info)
	}
	r.assertClean(t, res)
	n.zeroed(t)
}

// TestSavedValueNeverStays: with then none, a value the person typed stays
// in the field; a saved one (approved, leased or none) is always
// submitted.
func TestSavedValueNeverStays(t *testing.T) {
	for _, c := range []struct {
		name   string
		plan   Plan
		answer Answer
		want   string
	}{
		{"typed", Plan{Saved: true}, Answer{Value: secret}, ThenNone},
		{"approved", Plan{Saved: true}, Answer{Approved: true}, ThenSubmit},
		{"approval none", Plan{Saved: true, Approval: ApprovalNone}, Answer{}, ThenSubmit},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newSavedRig(t, c.plan)
			r.b.onOpen = func(string) {
				a := c.answer
				a.Value = bytes.Clone(a.Value)
				r.p.answers <- a
			}
			if c.want == ThenNone {
				r.b.verdict = Verdict{Inserted: true, Matched: true, Remains: true}
			}
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Then: ThenNone}), agent, nil)
			if res.Status != StatusOK || r.b.then != c.want {
				t.Fatalf("%s %s: Insert was asked for then %q, want %q", res.Status, res.Detail, r.b.then, c.want)
			}
			if c.want == ThenSubmit && !strings.Contains(res.Detail, "fillgate leaves only a value the person typed") {
				t.Errorf("the detail does not say why it was submitted: %s", res.Detail)
			}
			if c.plan.Approval != ApprovalNone && !r.prompt.Stays {
				t.Errorf("the prompt was not told the typed value stays: %+v", r.prompt)
			}
			r.assertClean(t, res)
			r.src.zeroed(t)
		})
	}
}

// TestLeaseIsTheProcesss: a lease covers the process the person approved,
// not its executable, and only the saved value it was granted for.
func TestLeaseIsTheProcesss(t *testing.T) {
	stamps := map[string]string{"": "stamp-1"}
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: 10 * time.Minute, Saved: true, Stamps: stamps})
	r.e.Limits.RateLimit = 0
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusOK || r.prompts != 1 {
		t.Fatalf("first fill %s: %s", res.Status, res.Detail)
	}
	for _, c := range []struct {
		name   string
		agent  func(Agent) Agent
		stamp  string
		leased bool
	}{
		{"the same process", func(a Agent) Agent { return a }, "stamp-1", true},
		{"another process of the same executable", func(a Agent) Agent { a.PID++; return a }, "stamp-1", false},
		{"a reused pid", func(a Agent) Agent { a.Start++; return a }, "stamp-1", false},
		{"another ssh session", func(a Agent) Agent { a.Remote = "ssh"; return a }, "stamp-1", false},
		{"an unknown start", func(a Agent) Agent { a.Start = 0; return a }, "stamp-1", false},
		{"orphans under the service manager", func(a Agent) Agent { a.Name, a.Exe = "systemd", "/usr/lib/systemd/systemd"; return a }, "stamp-1", false},
		{"the value was forgotten", func(a Agent) Agent { return a }, "", false},
		{"the value was replaced", func(a Agent) Agent { return a }, "stamp-2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			stamps[""] = c.stamp
			r.approves("", nil)
			before := r.prompts
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), c.agent(agent), nil)
			if res.Status != StatusOK || (r.prompts == before) != c.leased {
				t.Errorf("%s %s after %d prompts; want leased %v", res.Status, res.Detail, r.prompts-before, c.leased)
			}
		})
	}
}

// TestNoLeaseForAnUnknownProcess: a process whose start time is unknown
// cannot be named, so no lease is started for it.
func TestNoLeaseForAnUnknownProcess(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: 10 * time.Minute, Saved: true})
	r.approves("", nil)
	a := agent
	a.Start = 0
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), a, nil)
	if res.Status != StatusOK || len(r.state.LiveLeases(r.now)) != 0 || !strings.Contains(res.Detail, "no lease was started") {
		t.Fatalf("%s %s; leases %+v", res.Status, res.Detail, r.state.LiveLeases(r.now))
	}
}

// TestLeaseAndAWatchedTab: a lease the person approved while nothing was
// attached to the tab covers no fill into a tab a program is attached to
// now: the person decides again, told so. One approved in a prompt that
// told them (the browser could be driven) covers such fills, with a
// notice that says a program can read the value.
func TestLeaseAndAWatchedTab(t *testing.T) {
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: 10 * time.Minute, Saved: true, Stamps: map[string]string{"": "s"}})
	r.e.Limits.RateLimit = 0
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusOK || r.prompts != 1 {
		t.Fatalf("first fill %s: %s", res.Status, res.Detail)
	}
	r.b.inspection.Watched = true
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusOK || r.prompts != 2 || r.lastHow() != HowApproved || !r.prompt.Watched {
		t.Fatalf("a watched tab under an unwatched lease: %s %s, %d prompts, how %s, told %v", res.Status, res.Detail, r.prompts, r.lastHow(), r.prompt.Watched)
	}
	// That approval was given knowing: its lease covers watched fills.
	r.b.onOpen = func(string) { t.Error("a prompt opened under the lease") }
	if res := r.fill(t); res.Status != StatusOK || r.lastHow() != HowLease {
		t.Fatalf("a watched tab under a watched lease: %s %s, how %s", res.Status, res.Detail, r.lastHow())
	}
	if n := r.notes.notices[len(r.notes.notices)-1]; !strings.Contains(n.Message, "can read it as it goes in") {
		t.Errorf("the notice does not say a program can read the value: %+v", n)
	}
}

// TestDrivenDialogWarns: the native dialog asked because the browser can
// be driven tells the person a program can read the login page.
func TestDrivenDialogWarns(t *testing.T) {
	r, n := nativeRig(t, PromptAuto)
	r.b.drive = Drive{Driven: true, Reasons: []string{"another extension could drive it"}}
	n.types(nativeSecret)
	if res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil); res.Status != StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	if !n.asked[0].Watched {
		t.Error("the dialog asked because the browser can be driven did not warn")
	}
	r2, n2 := nativeRig(t, PromptNative)
	n2.types(nativeSecret)
	if res := r2.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil); res.Status != StatusOK {
		t.Fatalf("%s: %s", res.Status, res.Detail)
	}
	if n2.asked[0].Watched {
		t.Error("the dialog of prompt = native, with nothing driving the browser, warned")
	}
	n.zeroed(t)
	n2.zeroed(t)
}

// TestLeaseOfAForgottenValueEnds: a lease whose saved value was forgotten
// or replaced ends at the next fill that finds it, so the extension's
// popup and `fillgate saved` stop listing it.
func TestLeaseOfAForgottenValueEnds(t *testing.T) {
	stamps := map[string]string{"": "stamp-1"}
	r := newSavedRig(t, Plan{Approval: ApprovalLease, Lease: 10 * time.Minute, Saved: true, Stamps: stamps})
	r.approves("", nil)
	if res := r.fill(t); res.Status != StatusOK || len(r.state.LiveLeases(r.now)) != 1 {
		t.Fatalf("first fill %s: %s", res.Status, res.Detail)
	}
	stamps[""] = "stamp-2" // forgotten, then remembered anew
	r.b.onOpen = func(string) { r.p.answers <- Answer{Cancelled: true} }
	if res := r.fill(t); res.Status != StatusCancelled {
		t.Fatalf("after the value changed: %s %s; want a prompt (cancelled)", res.Status, res.Detail)
	}
	if ls := r.state.LiveLeases(r.now); len(ls) != 0 {
		t.Errorf("the lease of the old value is still there: %+v", ls)
	}
}
