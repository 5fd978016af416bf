package agentsock

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// login is an active tab showing a focused password field on service.
func login(service string) *ActiveTab {
	return &ActiveTab{Origin: "https://" + service, Field: fill.FieldPassword}
}

func TestRouteToTheBrowserWithTheLoginField(t *testing.T) {
	dir := sockDir(t)
	owner := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1, BrowserName: "chromium"}, active: login("news.test")})
	other := startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2, BrowserName: "brave"}, active: login("a.test")})
	if !owner.l.OwnsAgentSocket() {
		t.Fatal("the first host does not own agent.sock")
	}
	res, err := Fill(testCtx(t), dir, fill.Request{Service: "a.test", Field: fill.FieldPassword}, "fillgate fill", nil)
	if err != nil || res.Status != fill.StatusOK {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	if owner.h.fills.Load() != 0 || other.h.fills.Load() != 1 {
		t.Fatalf("fills: owner %d, other %d; want the other host to run it", owner.h.fills.Load(), other.h.fills.Load())
	}
	// The host that ran it names the agent the owner found behind its own
	// peer (this test process), not the owner itself.
	got := other.h.fillAgents()[0]
	want := findAgent(os.Getpid(), selfExe())
	if got.PID != want.PID || got.Exe != want.Exe || got.Via != "fillgate fill" {
		t.Errorf("the routed fill ran for agent %+v; want %+v via fillgate fill", got, want)
	}
}

func TestRouteWithOneHostAsksNoBrowser(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeHandler{active: login("a.test")})
	if res, err := Fill(testCtx(t), dir, fill.Request{Service: "other.test"}, "test", nil); err != nil || res.Status != fill.StatusOK {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	// Its own checks explain a refusal; nothing is peeked first.
	if h.h.fills.Load() != 1 || h.h.peeks.Load() != 0 {
		t.Errorf("fills %d, peeks %d; want 1 and 0", h.h.fills.Load(), h.h.peeks.Load())
	}
}

func TestRouteRefusals(t *testing.T) {
	for _, c := range []struct {
		name     string
		a, b     *ActiveTab
		req      fill.Request
		want     string // in the detail
		ranOnA   bool
		ranOnB   bool
		status   fill.Status
		refusals int
	}{
		{name: "none", a: login("x.test"), b: nil, req: fill.Request{Service: "a.test", Field: fill.FieldPassword},
			want: "no focused password field for a.test in any connected browser (2 checked)", status: fill.StatusRefused, refusals: 1},
		{name: "several", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Field: fill.FieldPassword},
			want:   "more than one connected browser has a focused password field for a.test: chromium (profile /p/one, pid 1) at https://a.test; brave (profile /p/two, pid 2) at https://a.test; name one with --browser or --profile",
			status: fill.StatusRefused, refusals: 1},
		{name: "several, browser named", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Field: fill.FieldPassword, Browser: "brave"},
			status: fill.StatusOK, ranOnB: true},
		{name: "several, profile named by its last element", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Field: fill.FieldPassword, Profile: "one"},
			status: fill.StatusOK, ranOnA: true},
		{name: "browser named, none such", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Field: fill.FieldPassword, Browser: "edge"},
			want: `no connected browser matches --browser "edge"`, status: fill.StatusRefused, refusals: 1},
		{name: "the other kind of field", a: login("a.test"), b: &ActiveTab{Origin: "https://a.test", Field: fill.FieldOTP}, req: fill.Request{Service: "a.test", Field: fill.FieldOTP},
			status: fill.StatusOK, ranOnB: true},
		{name: "browser named, one left with no field: its own checks", a: login("a.test"), b: nil, req: fill.Request{Service: "a.test", Field: fill.FieldPassword, Browser: "brave"},
			status: fill.StatusOK, ranOnB: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := sockDir(t)
			a := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1, Browser: "chromium", BrowserName: "chromium", Profile: "/p/one"}, active: c.a})
			b := startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2, Browser: "chromium", BrowserName: "brave", Profile: "/p/two"}, active: c.b})
			res, err := Fill(testCtx(t), dir, c.req, "test", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != c.status || !strings.Contains(res.Detail, c.want) {
				t.Fatalf("got %+v; want %s with %q", res, c.status, c.want)
			}
			if (a.h.fills.Load() == 1) != c.ranOnA || (b.h.fills.Load() == 1) != c.ranOnB {
				t.Errorf("fills: a %d, b %d", a.h.fills.Load(), b.h.fills.Load())
			}
			if n := a.h.refusedCount(); n != c.refusals {
				t.Errorf("the router recorded %d refusals, want %d", n, c.refusals)
			}
		})
	}
}

func TestRoutedFillIsCancelledWithItsAgent(t *testing.T) {
	dir := sockDir(t)
	started := make(chan struct{})
	ended := make(chan error, 1)
	startHost(t, dir, os.Getpid(), &fakeHandler{active: login("x.test")})
	startHost(t, dir, fakeID(2), &fakeHandler{active: login("a.test"),
		fillFn: func(ctx context.Context, req fill.Request, agent fill.Agent, progress func(fill.Progress)) fill.Result {
			progress(fill.Progress{Phase: fill.PhaseWaiting})
			close(started)
			<-ctx.Done()
			ended <- context.Cause(ctx)
			return fill.Result{Status: fill.StatusCancelled}
		}})
	ctx, cancel := context.WithCancel(testCtx(t))
	progressed := make(chan fill.Progress, 1)
	go func() {
		_, _ = Fill(ctx, dir, fill.Request{Service: "a.test"}, "test", func(p fill.Progress) { progressed <- p })
	}()
	<-started
	if p := <-progressed; p.Phase != fill.PhaseWaiting {
		t.Errorf("relayed progress %+v", p)
	}
	cancel()
	if cause := <-ended; cause != fill.ErrAgentGone {
		t.Errorf("the routed fill ended with %v, want %v", cause, fill.ErrAgentGone)
	}
}

func TestStatusAllListsActiveTabs(t *testing.T) {
	dir := sockDir(t)
	startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}, active: login("a.test")})
	startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2}})
	hs, err := StatusAt(testCtx(t), SocketPath(dir))
	if err != nil || len(hs) != 2 {
		t.Fatalf("StatusAt = %+v, %v", hs, err)
	}
	if hs[0].PID != 1 || hs[0].ActiveTab == nil || hs[0].ActiveTab.Origin != "https://a.test" || hs[1].PID != 2 || hs[1].ActiveTab != nil {
		t.Errorf("statuses %+v", hs)
	}
}

func TestForwardedAgentOnlyFromFillgate(t *testing.T) {
	s := &server{self: selfExe()}
	req := Request{Op: OpFill, Agent: &fill.Agent{Name: "claude", PID: 42, Via: "made up"}}
	if a, ok := s.forwardedAgent(req, os.Getpid()); !ok || a.Name != "claude" || a.Via != "" {
		t.Errorf("from this executable: %+v, %v; want the agent, with its made-up client dropped", a, ok)
	}
	// A copy of this binary under another name: neither fillgate nor this
	// executable.
	other, _, _ := startHelper(t, append(os.Environ(), envHelper+"=idle"), copyExe(t, t.TempDir(), "other"+exeSuffix))
	if _, ok := s.forwardedAgent(req, other.Process.Pid); ok {
		t.Error("a peer that is not fillgate named the agent")
	}
	if _, ok := s.forwardedAgent(Request{Op: OpFill}, os.Getpid()); ok {
		t.Error("a request without an agent counted as forwarded")
	}
}
