package fill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

var secret = []byte("fg-engine-test-secret-9f3a")

// fakeBrowser is an in-memory Browser.
type fakeBrowser struct {
	mu          sync.Mutex
	inspection  Inspection
	inspectErr  error
	openErr     error
	verdict     Verdict
	insertErr   error
	got         []byte // a copy of what Insert received, compared, never printed
	inserts     int
	window      *fakeWindow
	onOpen      func(url string)
	insertBlock chan struct{}
	then        string // what the last Insert was asked to do after it
	// drive is what Drivable reports (nothing drives it by default);
	// driveAfter, when set, is how many Drivable calls report drive
	// before it reports driven.
	drive      Drive
	driveErr   error
	driven     *Drive
	driveAfter int
	drives     int // Drivable calls
}

type fakeWindow struct {
	closed    chan struct{}
	closeOnce sync.Once
	closes    int
	mu        sync.Mutex
}

func (w *fakeWindow) Closed() <-chan struct{} { return w.closed }
func (w *fakeWindow) Close(context.Context) error {
	w.mu.Lock()
	w.closes++
	w.mu.Unlock()
	return nil
}
func (w *fakeWindow) humanCloses() { w.closeOnce.Do(func() { close(w.closed) }) }

func (b *fakeBrowser) Via() string { return ViaExtension }
func (b *fakeBrowser) Inspect(ctx context.Context, req Request) (Inspection, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inspection, b.inspectErr
}
func (b *fakeBrowser) OpenPrompt(ctx context.Context, url string) (PromptWindow, error) {
	if b.openErr != nil {
		return nil, b.openErr
	}
	b.mu.Lock()
	b.window = &fakeWindow{closed: make(chan struct{})}
	w := b.window
	b.mu.Unlock()
	if b.onOpen != nil {
		go b.onOpen(url)
	}
	return w, nil
}
func (b *fakeBrowser) Drivable(context.Context) (Drive, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drives++
	if b.driven != nil && b.drives > b.driveAfter {
		return *b.driven, nil
	}
	return b.drive, b.driveErr
}
func (b *fakeBrowser) Insert(ctx context.Context, in Inspection, value []byte, opt InsertOptions) (Verdict, error) {
	if b.insertBlock != nil {
		select {
		case <-b.insertBlock:
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inserts++
	b.got = append([]byte(nil), value...)
	b.then = opt.Then
	return b.verdict, b.insertErr
}

// fakePrompt answers from a channel the test drives.
type fakePrompt struct {
	answers chan Answer
	errs    chan error
	handed  []byte // the buffer handed to the Engine, to check it was zeroed
	closed  bool
	loaded  bool // a browser loaded the page
	mu      sync.Mutex
}

func (p *fakePrompt) URL() string { return "http://127.0.0.1:1/nonce" }
func (p *fakePrompt) Loaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loaded
}
func (p *fakePrompt) Wait(ctx context.Context) (Answer, error) {
	select {
	case a := <-p.answers:
		p.mu.Lock()
		p.handed = a.Value
		p.mu.Unlock()
		return a, nil
	case err := <-p.errs:
		return Answer{}, err
	case <-ctx.Done():
		return Answer{}, ctx.Err()
	}
}

// Close zeroes an answer nobody collected, as the real prompt does.
func (p *fakePrompt) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case a := <-p.answers:
		clear(a.Value)
	default:
	}
	return nil
}

type fakePolicy struct {
	allow     bool
	detail    string
	forceThen string // what the policy's rule says follows the insert
	driven    string // the driven setting; "" is DrivenCleanRoom
}

func (p fakePolicy) Decide(req Checked, agent Agent, in Inspection, via string) (bool, string) {
	return p.allow, p.detail
}
func (p fakePolicy) DrivenMode(Checked, Inspection) string {
	if p.driven == "" {
		return DrivenCleanRoom
	}
	return p.driven
}
func (p fakePolicy) ThenFor(req Checked, in Inspection) (string, bool, string) {
	asked := req.Request().Then
	switch {
	case p.forceThen != "" && asked != p.forceThen && p.forceThen == ThenSubmit:
		return "", false, "the policy has fillgate submit the form"
	case p.forceThen != "":
		return p.forceThen, true, ""
	}
	return asked, true, ""
}

// canonical stands in for policy.NormalizeService.
func canonical(s string) (string, error) {
	if s == "com" {
		return "", errors.New("com is a public suffix")
	}
	return strings.ToLower(s), nil
}

// checked is req through the door, which it must pass.
func checked(t testing.TB, req Request) Checked {
	t.Helper()
	c, err := Check(req, canonical)
	if err != nil {
		t.Fatalf("Check(%+v): %v", req, err)
	}
	return c
}

type memAudit struct {
	mu      sync.Mutex
	entries []AuditEntry
}

func (a *memAudit) Record(e AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

type rig struct {
	e      *Engine
	b      *fakeBrowser
	p      *fakePrompt
	audit  *memAudit
	prompt PromptInfo
	infoMu sync.Mutex
}

func newRig(t *testing.T) *rig {
	r := &rig{
		b: &fakeBrowser{
			inspection: Inspection{Tab: 1, Frame: 0, Token: "t", Origins: []string{"https://github.com"},
				Field: FieldInfo{Kind: FieldPassword}},
			verdict: Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true},
		},
		p:     &fakePrompt{answers: make(chan Answer, 1), errs: make(chan error, 1)},
		audit: &memAudit{},
	}
	lim := DefaultLimits()
	lim.PromptBudget = 5 * time.Second
	r.e = &Engine{
		Browser: r.b,
		Prompter: func(ctx context.Context, info PromptInfo) (Prompt, error) {
			r.infoMu.Lock()
			r.prompt = info
			r.infoMu.Unlock()
			return r.p, nil
		},
		Policy: fakePolicy{allow: true},
		State:  NewMemState(),
		Limits: lim,
		Audit:  r.audit,
	}
	return r
}

var agent = Agent{Name: "claude", PID: 4121, Exe: "/usr/bin/claude", Via: "fillgate fill", Start: 987654}

func (r *rig) humanTypes(value []byte) {
	r.b.onOpen = func(string) { r.p.answers <- Answer{Value: append([]byte(nil), value...)} }
}

// assertClean checks that nothing the agent or the audit log sees holds
// the secret, and that the buffer handed to the Engine was zeroed.
func (r *rig) assertClean(t *testing.T, res Result) {
	t.Helper()
	out, _ := json.Marshal(res)
	if bytes.Contains(out, secret) {
		t.Error("leak: the secret appears in the result")
	}
	aud, _ := json.Marshal(r.audit.entries)
	if bytes.Contains(aud, secret) {
		t.Error("leak: the secret appears in the audit entry")
	}
	r.p.mu.Lock()
	defer r.p.mu.Unlock()
	for _, c := range r.p.handed {
		if c != 0 {
			t.Error("the answer buffer was not zeroed")
			break
		}
	}
}

func TestFillOK(t *testing.T) {
	r := newRig(t)
	r.humanTypes(secret)
	var phases []string
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, func(p Progress) { phases = append(phases, p.Phase) })
	if res.Status != StatusOK {
		t.Fatalf("status %s: %s", res.Status, res.Detail)
	}
	if !bytes.Equal(r.b.got, secret) {
		t.Error("value differed")
	}
	if res.Origin != "https://github.com" || res.Field != FieldPassword || res.Via != ViaExtension {
		t.Errorf("result %+v", res)
	}
	if strings.Join(phases, ",") != "inspecting,waiting_for_human,inserting" {
		t.Errorf("phases %v", phases)
	}
	if r.prompt.Agent != agent || r.prompt.Origin != "https://github.com" || r.prompt.Field != FieldPassword {
		t.Errorf("prompt info %+v", r.prompt)
	}
	if len(r.audit.entries) != 1 || r.audit.entries[0].Status != StatusOK {
		t.Errorf("audit %+v", r.audit.entries)
	}
	if r.b.window.closes == 0 || !r.p.closed {
		t.Error("prompt window or server left open")
	}
	r.assertClean(t, res)
}

func TestFillOutcomes(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(*rig)
		req    Request
		status Status
		detail string
		insert bool
	}{
		{"cancelled", func(r *rig) {
			r.b.onOpen = func(string) { r.p.answers <- Answer{Cancelled: true} }
		}, Request{Service: "github.com"}, StatusCancelled, "cancelled", false},
		{"window closed", func(r *rig) {
			r.b.onOpen = func(string) { r.b.mu.Lock(); w := r.b.window; r.b.mu.Unlock(); w.humanCloses() }
		}, Request{Service: "github.com"}, StatusCancelled, "window was closed", false},
		{"no response", func(r *rig) {}, Request{Service: "github.com", Timeout: 50 * time.Millisecond},
			StatusNoResponse, "nobody answered", false},
		{"prompt burned", func(r *rig) {
			r.b.onOpen = func(string) { r.p.errs <- errors.New("a request carried a value in its URL; the prompt was closed") }
		}, Request{Service: "github.com"}, StatusFailed, "carried a value in its URL", false},
		{"prompt expired", func(r *rig) {
			r.b.onOpen = func(string) { r.p.errs <- fmt.Errorf("expired: %w", context.DeadlineExceeded) }
		}, Request{Service: "github.com"}, StatusNoResponse, "nobody answered", false},
		{"policy", func(r *rig) { r.e.Policy = fakePolicy{detail: "origin https://evil.test is not github.com"} },
			Request{Service: "github.com"}, StatusRefused, "evil.test", false},
		{"paused", func(r *rig) { r.b.inspection.Paused = true }, Request{Service: "github.com"}, StatusRefused, "paused", false},
		{"inspect fails", func(r *rig) { r.b.inspectErr = errors.New("no active tab") },
			Request{Service: "github.com"}, StatusFailed, "no active tab", false},
		{"inspect refuses", func(r *rig) { r.b.inspectErr = refusal{} },
			Request{Service: "github.com"}, StatusRefused, "two tabs match", false},
		{"open fails", func(r *rig) { r.b.openErr = errors.New("no window") },
			Request{Service: "github.com"}, StatusFailed, "cannot open the prompt", false},
		{"focus moved", func(r *rig) { r.humanTypes(secret); r.b.verdict = Verdict{Reason: "focus_moved"} },
			Request{Service: "github.com"}, StatusRefused, "focus moved", true},
		{"not matched", func(r *rig) { r.humanTypes(secret); r.b.verdict = Verdict{Inserted: true, Stopped: "not_matched"} },
			Request{Service: "github.com"}, StatusFailed, "did not keep", true},
		{"policy forces submit", func(r *rig) {
			r.humanTypes(secret)
			r.e.Policy = fakePolicy{allow: true, forceThen: ThenSubmit}
		}, Request{Service: "github.com", Then: ThenNone}, StatusRefused, "has fillgate submit", false},
		{"insert unconfirmed", func(r *rig) {
			r.humanTypes(secret)
			r.e.Limits.InsertBudget = 20 * time.Millisecond
			r.b.insertBlock = make(chan struct{})
		}, Request{Service: "github.com"}, StatusFailed, "may or may not be in the field", false},
		{"insert transport", func(r *rig) { r.humanTypes(secret); r.b.insertErr = errors.New("port closed") },
			Request{Service: "github.com"}, StatusFailed, "port closed", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			c.setup(r)
			res := r.e.Run(context.Background(), checked(t, c.req), agent, nil)
			if res.Status != c.status || !strings.Contains(res.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s containing %q", res.Status, res.Detail, c.status, c.detail)
			}
			if (r.b.inserts > 0) != c.insert {
				t.Errorf("inserts = %d", r.b.inserts)
			}
			if len(r.audit.entries) != 1 || r.audit.entries[0].Status != c.status {
				t.Errorf("audit %+v", r.audit.entries)
			}
			r.assertClean(t, res)
		})
	}
}

func TestNoResponseCoolsDown(t *testing.T) {
	r := newRig(t)
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	r.e.Now = func() time.Time { return now }
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Timeout: 20 * time.Millisecond}), agent, nil)
	if res.Status != StatusNoResponse || res.Fallback == "" {
		t.Fatalf("got %+v", res)
	}
	// A new request from the same agent (another client process, same
	// executable) is refused at once, without a prompt.
	other := agent
	other.PID, other.PeerPID = 9999, 10000
	r.b.onOpen = func(string) { t.Error("prompt raised during cool-down") }
	res = r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), other, nil)
	if res.Status != StatusRefused || res.Fallback == "" || !strings.Contains(res.Detail, "will not ask again") {
		t.Fatalf("got %+v", res)
	}
	// Another service, or another agent, is not affected.
	r.humanTypes(secret)
	if res := r.e.Run(context.Background(), checked(t, Request{Service: "gitlab.com"}), agent, nil); res.Status != StatusOK {
		t.Errorf("other service: %+v", res)
	}
	r.humanTypes(secret)
	if res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), Agent{Name: "cursor", Exe: "/usr/bin/cursor"}, nil); res.Status != StatusOK {
		t.Errorf("other agent: %+v", res)
	}
	// After the cool-down the agent may ask again.
	now = now.Add(DefaultLimits().Cooldown + time.Second)
	r.humanTypes(secret)
	if res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil); res.Status != StatusOK {
		t.Errorf("after cool-down: %+v", res)
	}
}

func TestOnePromptPerService(t *testing.T) {
	r := newRig(t)
	opened := make(chan struct{})
	r.b.onOpen = func(string) { close(opened) }
	done := make(chan Result)
	go func() { done <- r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil) }()
	<-opened
	second := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), Agent{Name: "other", Exe: "/x"}, nil)
	if second.Status != StatusRefused || !strings.Contains(second.Detail, "already open") {
		t.Fatalf("second: %+v", second)
	}
	r.p.answers <- Answer{Value: append([]byte(nil), secret...)}
	if first := <-done; first.Status != StatusOK {
		t.Fatalf("first: %+v", first)
	}
	// Released: a third request may prompt again.
	r.humanTypes(secret)
	if third := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil); third.Status != StatusOK {
		t.Fatalf("third: %+v", third)
	}
}

func TestRateLimit(t *testing.T) {
	r := newRig(t)
	r.e.Limits.RateLimit = 2
	r.b.onOpen = func(string) { r.p.answers <- Answer{Cancelled: true} }
	for i := range 2 {
		if res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil); res.Status != StatusCancelled {
			t.Fatalf("request %d: %+v", i, res)
		}
	}
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	if res.Status != StatusRefused || !strings.Contains(res.Detail, "too many") {
		t.Fatalf("got %+v", res)
	}
}

func TestTimeoutNeverLengthens(t *testing.T) {
	r := newRig(t)
	r.e.Limits.PromptBudget = 30 * time.Millisecond
	start := time.Now()
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Timeout: time.Hour}), agent, nil)
	if res.Status != StatusNoResponse {
		t.Fatalf("got %+v", res)
	}
	if r.prompt.Budget != 30*time.Millisecond {
		t.Errorf("budget %s", r.prompt.Budget)
	}
	if time.Since(start) > 20*time.Second {
		t.Error("the budget was lengthened")
	}
}

func TestGoneMidRequest(t *testing.T) {
	for _, c := range []struct {
		cause  error
		status Status
	}{{ErrBrowserGone, StatusFailed}, {ErrAgentGone, StatusCancelled}} {
		t.Run(c.cause.Error(), func(t *testing.T) {
			r := newRig(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			r.b.onOpen = func(string) { cancel(c.cause) }
			res := r.e.Run(ctx, checked(t, Request{Service: "github.com"}), agent, nil)
			if res.Status != c.status || !strings.Contains(res.Detail, c.cause.Error()) {
				t.Fatalf("got %+v", res)
			}
			if r.b.inserts != 0 {
				t.Error("inserted after the request ended")
			}
			// The service is released.
			if release, err := r.e.State.Claim("github.com"); err != nil {
				t.Errorf("claim after: %v", err)
			} else {
				release()
			}
		})
	}
}

func TestLateAnswerIsZeroed(t *testing.T) {
	// The human answers just as the window closes: whichever wins, a value
	// that is not used is zeroed.
	r := newRig(t)
	buf := append([]byte(nil), secret...)
	r.b.onOpen = func(string) {
		r.b.mu.Lock()
		w := r.b.window
		r.b.mu.Unlock()
		w.humanCloses()
		r.p.answers <- Answer{Value: buf}
	}
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	if res.Status != StatusCancelled && res.Status != StatusOK {
		t.Fatalf("got %+v", res)
	}
	// Fill has returned, so the prompt is closed: the answer was either
	// handed over (and zeroed by the Engine) or left uncollected (and
	// zeroed by Close).
	if res.Status == StatusCancelled {
		if !bytes.Equal(buf, make([]byte, len(buf))) {
			t.Error("an unused answer was not zeroed")
		}
	}
	r.assertClean(t, res)
}

func TestMemStateRate(t *testing.T) {
	s := NewMemState()
	now := time.Now()
	for i := range 3 {
		if !s.Allow("a", now.Add(time.Duration(i)*time.Second), 3, time.Minute) {
			t.Fatalf("request %d refused", i)
		}
	}
	if s.Allow("a", now.Add(10*time.Second), 3, time.Minute) {
		t.Fatal("fourth request allowed")
	}
	if !s.Allow("b", now, 3, time.Minute) {
		t.Fatal("other agent refused")
	}
	if !s.Allow("a", now.Add(61*time.Second), 3, time.Minute) {
		t.Fatal("window did not slide")
	}
}

type refusal struct{}

func (refusal) Error() string  { return "two tabs match: https://github.com, https://gist.github.com" }
func (refusal) Status() Status { return StatusRefused }

// TestAgentHangingUpStartsNoCoolDown: a client that cancels gets
// cancelled, early or late, seen or not, and that starts no cool-down.
func TestAgentHangingUpStartsNoCoolDown(t *testing.T) {
	for _, c := range []struct {
		name   string
		after  time.Duration // when the agent hangs up, of a 3 s budget
		loaded bool          // a browser loaded the prompt page
	}{
		{"early", 0, false},
		{"late", 2 * time.Second, false},
		{"late, the person opened the prompt", 2 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t)
			r.p.loaded = c.loaded
			// A second between the hang-up and the budget's end: 150 ms of
			// 200 lost the race under Wine on a loaded machine (the budget
			// ran out first: no_response).
			r.e.Limits.PromptBudget = 3 * time.Second
			ctx, cancel := context.WithCancelCause(context.Background())
			r.b.onOpen = func(string) { time.Sleep(c.after); cancel(ErrAgentGone) }
			if res := r.e.Run(ctx, checked(t, Request{Service: "github.com"}), agent, nil); res.Status != StatusCancelled || res.Fallback != "" {
				t.Fatalf("got %+v", res)
			}
			if _, cooling := r.e.State.CoolingDown(agent.Key(), "github.com", time.Now()); cooling {
				t.Error("a cancelled request started a cool-down")
			}
		})
	}
}

// TestAfterInsert maps every verdict of an insert that happened to its
// outcome, and checks what reaches Insert as Then and what the result says
// about the submit.
func TestAfterInsert(t *testing.T) {
	cases := []struct {
		name      string
		then      string // asked
		force     string // the policy's rule
		v         Verdict
		wantThen  string
		status    Status
		detail    string
		submitted bool
		navigated bool
	}{
		{"submitted, navigated", "", "", Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true},
			ThenSubmit, StatusOK, "the form was submitted and the page navigated away", true, true},
		{"submitted, script kept the field", ThenSubmit, "", Verdict{Inserted: true, Matched: true, Submitted: true, Cleared: true},
			ThenSubmit, StatusOK, "fillgate cleared it", true, false},
		{"submitted, field removed", ThenSubmit, "", Verdict{Inserted: true, Matched: true, Submitted: true},
			ThenSubmit, StatusOK, "the page removed or emptied the field", true, false},
		{"then none", ThenNone, "", Verdict{Inserted: true, Matched: true, Remains: true},
			ThenNone, StatusOK, "nothing was submitted (then none): the page, and any tool that reads it", false, false},
		{"policy says none", ThenSubmit, ThenNone, Verdict{Inserted: true, Matched: true, Remains: true},
			ThenNone, StatusOK, "can see the value in the field until it is submitted", false, false},
		{"policy says submit", ThenSubmit, ThenSubmit, Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true},
			ThenSubmit, StatusOK, "navigated away", true, true},
		{"validation stopped it", "", "", Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "invalid", StoppedBy: "I agree\x00 to the\nterms"},
			ThenSubmit, StatusFailed, `validation stopped the submit at the field "I agree to theterms"; fill it in`, false, false},
		{"a GET submission stopped", "", "", Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "method_get"},
			ThenSubmit, StatusFailed, "would have put the value in its URL", false, false},
		{"a dialog form", "", "", Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "method_dialog"},
			ThenSubmit, StatusFailed, "only closes a dialog", false, false},
		{"disabled button", "", "", Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "button_disabled"},
			ThenSubmit, StatusFailed, "submit button is disabled", false, false},
		{"no submit button, no implicit submission", "", "", Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "no_submit"},
			ThenSubmit, StatusFailed, "showed no sign of a submit", false, false},
		{"form changed", "", "", Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "form_changed"},
			ThenSubmit, StatusFailed, "changed where its form sends the value", false, false},
		{"put back", "", "", Verdict{Inserted: true, Matched: true, Submitted: true, Remains: true},
			ThenSubmit, StatusFailed, "put the value back", true, false},
		{"went away mid-call", "", "", Verdict{Inserted: true, Matched: true, Navigated: true, Unconfirmed: true},
			ThenSubmit, StatusOK, "the page went away during the fill", false, true},
		{"not matched with then none", ThenNone, "", Verdict{Inserted: true, Remains: true},
			ThenNone, StatusFailed, "did not keep the whole value", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			r.humanTypes(secret)
			r.b.verdict = c.v
			r.e.Policy = fakePolicy{allow: true, forceThen: c.force}
			res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Then: c.then}), agent, nil)
			if res.Status != c.status || !strings.Contains(res.Detail, c.detail) {
				t.Fatalf("got %s %q, want %s containing %q", res.Status, res.Detail, c.status, c.detail)
			}
			if r.b.then != c.wantThen {
				t.Errorf("Insert got then %q, want %q", r.b.then, c.wantThen)
			}
			if res.Submitted == nil || res.Navigated == nil || *res.Submitted != c.submitted || *res.Navigated != c.navigated {
				t.Errorf("result %+v; want submitted %v, navigated %v", res, c.submitted, c.navigated)
			}
			out, _ := json.Marshal(res)
			if !bytes.Contains(out, []byte(`"submitted":`)) || !bytes.Contains(out, []byte(`"navigated":`)) {
				t.Errorf("the JSON result lacks submitted or navigated: %s", out)
			}
			r.assertClean(t, res)
		})
	}

	// A refusal carries neither field.
	r := newRig(t)
	r.humanTypes(secret)
	r.b.verdict = Verdict{Reason: "focus_moved"}
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
	if out, _ := json.Marshal(res); res.Status != StatusRefused || bytes.Contains(out, []byte("submitted")) || bytes.Contains(out, []byte("navigated")) {
		t.Errorf("refused result %s", out)
	}
}

// TestPolicyForcesSubmitBeforeAsking: then none under a policy that
// forces submit is refused before any prompt opens.
func TestPolicyForcesSubmitBeforeAsking(t *testing.T) {
	r := newRig(t)
	r.e.Policy = fakePolicy{allow: true, forceThen: ThenSubmit}
	r.b.onOpen = func(string) { t.Error("a prompt opened") }
	res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Then: ThenNone}), agent, nil)
	if res.Status != StatusRefused || r.b.inserts != 0 || r.b.window != nil {
		t.Fatalf("got %+v, %d inserts", res, r.b.inserts)
	}
}

// TestNoResponseCoolsDownSeenOrNot: nobody answered in time. Whether the
// page was loaded or never seen, the same agent does not raise a second
// prompt for the service within the cool-down: it switches to another way
// of asking, as the fallback says.
func TestNoResponseCoolsDownSeenOrNot(t *testing.T) {
	for _, loaded := range []bool{false, true} {
		r := newRig(t)
		r.p.loaded = loaded
		res := r.e.Run(context.Background(), checked(t, Request{Service: "github.com", Timeout: 20 * time.Millisecond}), agent, nil)
		if res.Status != StatusNoResponse || res.Fallback == "" {
			t.Fatalf("loaded %v: got %+v", loaded, res)
		}
		if _, cooling := r.e.State.CoolingDown(agent.Key(), "github.com", time.Now()); !cooling {
			t.Fatalf("loaded %v: no cool-down after no_response", loaded)
		}
		r.humanTypes(secret)
		r.b.window = nil
		res = r.e.Run(context.Background(), checked(t, Request{Service: "github.com"}), agent, nil)
		if res.Status != StatusRefused || res.Fallback == "" || r.b.window != nil {
			t.Errorf("loaded %v: the retry %+v (a prompt opened: %v)", loaded, res, r.b.window != nil)
		}
	}
}
