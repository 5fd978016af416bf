package route

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// checked is a request through the door, with a stand-in for the
// service's canonical form.
func checked(t testing.TB, req fill.Request) fill.Checked {
	t.Helper()
	c, err := fill.Check(req, func(s string) (string, error) { return s, nil })
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// login is an active tab showing a focused password field on service.
func login(service string) *agentsock.ActiveTab {
	return &agentsock.ActiveTab{Origin: "https://" + service, Field: fill.FieldPassword}
}

// servesTab is serves for a request of service and field: a tab serves it
// when its origin is https://<service> and its field has the kind asked.
func servesTab(req fill.Checked) func(agentsock.ActiveTab) bool {
	r := req.Request()
	return func(t agentsock.ActiveTab) bool {
		return t.Origin == "https://"+r.Service && t.Field == r.Field && t.Problem == ""
	}
}

func TestHere(t *testing.T) {
	for _, c := range []struct {
		req    fill.Request
		others []string
		here   bool
	}{
		{fill.Request{Service: "a.test"}, nil, true},
		{fill.Request{Service: "a.test"}, []string{"/run/fg/hosts/2.sock"}, false},
		{fill.Request{Service: "a.test", Browser: "brave"}, nil, false},
		{fill.Request{Service: "a.test", Profile: "work"}, nil, false},
	} {
		if got := Here(checked(t, c.req), c.others); got != c.here {
			t.Errorf("Here(%+v, %v) = %v, want %v", c.req, c.others, got, c.here)
		}
	}
}

func TestPick(t *testing.T) {
	// a is the routing host, b another.
	peers := func(a, b *agentsock.ActiveTab) []Peer {
		return []Peer{
			{Path: "/fg/hosts/1.sock", Self: true, Status: agentsock.HostStatus{PID: 1, Browser: "chromium", BrowserName: "chromium", Profile: "/p/one"}, Active: a},
			{Path: "/fg/hosts/2.sock", Status: agentsock.HostStatus{PID: 2, Browser: "chromium", BrowserName: "brave", Profile: "/p/two",
				Extension: agentsock.ExtensionStatus{Instance: "inst-2"}}, Active: b},
		}
	}
	for _, c := range []struct {
		name   string
		a, b   *agentsock.ActiveTab
		req    fill.Request
		target string // "" for the routing host
		want   string // in the refusal, "" for none
	}{
		{name: "the other has the field", a: login("news.test"), b: login("a.test"), req: fill.Request{Service: "a.test"}, target: "/fg/hosts/2.sock"},
		{name: "this one has the field", a: login("a.test"), b: login("news.test"), req: fill.Request{Service: "a.test"}},
		{name: "none", a: login("x.test"), b: nil, req: fill.Request{Service: "a.test"},
			want: "no focused password field for a.test in any connected browser (2 checked): open the login page, click into the field, and ask again"},
		{name: "several", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test"},
			want: "more than one connected browser has a focused password field for a.test: chromium (profile /p/one, pid 1) at https://a.test; brave (profile /p/two, pid 2) at https://a.test; name one with --browser or --profile (`fillgate status` lists them)"},
		{name: "several, browser named", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Browser: "brave"}, target: "/fg/hosts/2.sock"},
		{name: "several, browser named by family", a: login("a.test"), b: nil, req: fill.Request{Service: "a.test", Browser: "Chromium"}},
		{name: "several, profile named by its last element", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Profile: "one"}},
		{name: "several, profile named by its instance", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Profile: "INST-2"}, target: "/fg/hosts/2.sock"},
		{name: "browser named, none such", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Browser: "edge"},
			want: "no connected browser matches --browser \"edge\"; `fillgate status` lists them"},
		{name: "browser and profile named, none such", a: login("a.test"), b: login("a.test"), req: fill.Request{Service: "a.test", Browser: "brave", Profile: strings.Repeat("p", 70)},
			want: "no connected browser matches --browser \"brave\" and --profile \"" + strings.Repeat("p", 64) + "\"…"},
		{name: "the other kind of field", a: login("a.test"), b: &agentsock.ActiveTab{Origin: "https://a.test", Field: fill.FieldOTP}, req: fill.Request{Service: "a.test", Field: fill.FieldOTP}, target: "/fg/hosts/2.sock"},
		{name: "no one-time-code field", a: login("a.test"), b: nil, req: fill.Request{Service: "a.test", Field: fill.FieldOTP},
			want: "no focused one-time-code field for a.test in any connected browser (2 checked)"},
		{name: "browser named, one left with no field: its own checks", a: login("a.test"), b: nil, req: fill.Request{Service: "a.test", Browser: "brave"}, target: "/fg/hosts/2.sock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := checked(t, c.req)
			target, refused := Pick(req, peers(c.a, c.b), servesTab(req))
			if c.want == "" {
				if refused != nil || target != c.target {
					t.Fatalf("Pick = %q, %+v; want %q", target, refused, c.target)
				}
				return
			}
			r := req.Request()
			if target != "" || refused == nil || refused.Status != fill.StatusRefused || !strings.HasPrefix(refused.Detail, c.want) ||
				refused.Service != r.Service || refused.Field != r.Field || refused.Via != fill.ViaExtension {
				t.Fatalf("Pick = %q, %+v; want refused with %q", target, refused, c.want)
			}
		})
	}
}

// serveTest serves h on a fresh host endpoint as id in dir until the test
// ends, and returns the endpoint.
func serveTest(t testing.TB, dir string, id int, h agentsock.Handler) string {
	t.Helper()
	l, err := agentsock.ListenAs(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- agentsock.Serve(ctx, l, h) }()
	t.Cleanup(func() {
		cancel()
		<-served
		_ = l.Close()
	})
	return l.Path()
}

// fakeID is a hosts/<id>.sock name no real process has (above Linux's
// largest pid_max), for a second listener in this process.
func fakeID(n int) int { return 5_000_000 + n }

func TestAsk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fg")
	peek := func(st agentsock.HostStatus, active *agentsock.ActiveTab) agentsock.Handler {
		return func(_ context.Context, c *agentsock.Conn) {
			c.Answer(agentsock.Message{Type: agentsock.TypePeek, Status: &st, Active: active})
		}
	}
	one := serveTest(t, dir, fakeID(1), peek(agentsock.HostStatus{PID: 1}, login("a.test")))
	two := serveTest(t, dir, fakeID(2), peek(agentsock.HostStatus{PID: 2}, nil))
	gone := filepath.Join(dir, "hosts", "gone.sock")
	got := Ask(testctx.New(t), []string{one, gone, two})
	if len(got) != 2 || got[0].Path != one || got[0].Status.PID != 1 || got[0].Active == nil || *got[0].Active != *login("a.test") ||
		got[1].Path != two || got[1].Status.PID != 2 || got[1].Active != nil || got[0].Self || got[1].Self {
		t.Fatalf("Ask = %+v; want the two hosts that answer, in order", got)
	}
	// A host that does not answer within the bound is left out, and the
	// bound holds.
	stuck := serveTest(t, dir, fakeID(3), func(ctx context.Context, c *agentsock.Conn) { <-ctx.Done() })
	start := time.Now()
	if got := Ask(testctx.New(t), []string{stuck, one}); len(got) != 1 || got[0].Path != one {
		t.Fatalf("Ask with a stuck host = %+v", got)
	}
	if took := time.Since(start); took > agentsock.PeekWait+5*time.Second {
		t.Errorf("Ask waited %v for a stuck host; its bound is %v", took, agentsock.PeekWait)
	}
}

// TestForward: the routing host hands the fill to the other with the
// agent it found, relays its progress and result, and the agent's hang-up
// cancels the fill there.
func TestForward(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fg")
	agent := fill.Agent{Name: "claude", PID: 4121, Exe: "/usr/bin/claude", Via: "fillgate fill"}
	got := make(chan agentsock.Request, 1)
	started := make(chan struct{})
	ended := make(chan error, 1)
	target := serveTest(t, dir, fakeID(2), func(ctx context.Context, c *agentsock.Conn) {
		got <- c.Request()
		c.Progress(fill.Progress{Phase: fill.PhaseWaiting})
		close(started)
		<-ctx.Done()
		ended <- context.Cause(ctx)
		c.Result(fill.Result{Status: fill.StatusCancelled})
	})
	router := serveTest(t, dir, fakeID(1), func(ctx context.Context, c *agentsock.Conn) {
		Forward(ctx, target, c.Request(), agent, c)
	})

	ctx, cancel := context.WithCancel(testctx.New(t))
	progressed := make(chan fill.Progress, 1)
	go func() {
		_, _ = agentsock.FillAt(ctx, router, fill.Request{Service: "a.test", Browser: "brave"}, "fillgate fill", func(p fill.Progress) { progressed <- p })
	}()
	<-started
	if p := <-progressed; p.Phase != fill.PhaseWaiting {
		t.Errorf("relayed progress %+v", p)
	}
	req := <-got
	if req.Op != agentsock.OpFill || req.Service != "a.test" || req.Browser != "brave" || req.Client != "fillgate fill" || req.Agent == nil || *req.Agent != agent {
		t.Errorf("the other host got %+v (agent %+v)", req, req.Agent)
	}
	cancel()
	if cause := <-ended; cause != fill.ErrAgentGone {
		t.Errorf("the routed fill ended with %v, want %v", cause, fill.ErrAgentGone)
	}
}

// TestForwardFails: what the agent learns when the other host cannot take
// or finish the fill.
func TestForwardFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fg")
	refuses := serveTest(t, dir, fakeID(2), func(_ context.Context, c *agentsock.Conn) {
		c.Error(agentsock.CodeForbidden, "no")
	})
	hangsUp := serveTest(t, dir, fakeID(3), func(context.Context, *agentsock.Conn) {})
	for i, c := range []struct {
		target, want string
	}{
		{filepath.Join(dir, "hosts", "gone.sock"), "the browser's fillgate host went away before it got the request; ask again"},
		{refuses, "the browser's fillgate host refused the forwarded request (forbidden)"},
		{hangsUp, "the browser's fillgate host went away during the request; check the page, then ask again"},
	} {
		router := serveTest(t, dir, fakeID(10+i), func(ctx context.Context, conn *agentsock.Conn) {
			Forward(ctx, c.target, conn.Request(), fill.Agent{Name: "claude"}, conn)
		})
		res, err := agentsock.FillAt(testctx.New(t), router, fill.Request{Service: "a.test"}, "test", nil)
		if err != nil || res.Status != fill.StatusFailed || res.Detail != c.want || res.Service != "a.test" || res.Via != fill.ViaExtension {
			t.Errorf("to %s: %+v, %v; want failed: %q", filepath.Base(c.target), res, err, c.want)
		}
	}
}
