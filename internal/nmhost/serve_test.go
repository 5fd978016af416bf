package nmhost

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/procinfo"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// fakeLocal stands in for a host's browser: it reports st, its active tab
// shows active (nil: the browser does not answer a peek), and a fill runs
// fillFn (by default: ok). It records what it was asked.
type fakeLocal struct {
	st     agentsock.HostStatus
	active *agentsock.ActiveTab
	fillFn func(ctx context.Context, req fill.Checked, agent fill.Agent, progress func(fill.Progress)) fill.Result
	peeks  atomic.Int32

	mu       sync.Mutex
	fills    []fill.Checked
	agents   []fill.Agent
	refusals []fill.Result
	policies []*policy.Policy // what status was given, in order
}

func (l *fakeLocal) status(pol *policy.Policy) agentsock.HostStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.policies = append(l.policies, pol)
	st := l.st
	if pol != nil {
		st.Prompt = pol.Prompt
	}
	return st
}

func (l *fakeLocal) peek(context.Context) (agentsock.ActiveTab, error) {
	l.peeks.Add(1)
	if l.active == nil {
		return agentsock.ActiveTab{}, errors.New("no browser")
	}
	return *l.active, nil
}

func (l *fakeLocal) fillHere(ctx context.Context, pol *policy.Policy, req fill.Checked, agent fill.Agent, progress func(fill.Progress)) fill.Result {
	l.mu.Lock()
	l.fills = append(l.fills, req)
	l.agents = append(l.agents, agent)
	l.mu.Unlock()
	if l.fillFn != nil {
		return l.fillFn(ctx, req, agent, progress)
	}
	r := req.Request()
	return fill.Result{Status: fill.StatusOK, Service: r.Service, Field: r.Field, Via: fill.ViaExtension, Detail: "inserted"}
}

func (l *fakeLocal) refused(pol *policy.Policy, agent fill.Agent, res fill.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refusals = append(l.refusals, res)
}

// ran reports the checked requests and agents of the fills run here.
func (l *fakeLocal) ran() ([]fill.Checked, []fill.Agent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.fills), slices.Clone(l.agents)
}

func (l *fakeLocal) refusedAtTheDoor() []fill.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.refusals)
}

type memAudit struct {
	mu      sync.Mutex
	entries []fill.AuditEntry
}

func (a *memAudit) Record(e fill.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

func (a *memAudit) all() []fill.AuditEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.entries)
}

// testHost is a server on the agent socket with a fake browser.
type testHost struct {
	l     *agentsock.Listener
	local *fakeLocal
	audit *memAudit
	loads atomic.Int32 // policy loads
}

// startHost serves loc as host id in dir until the test ends. load reads
// the policy (nil: the defaults).
func startHost(t testing.TB, dir string, id int, loc *fakeLocal, load func() (*policy.Policy, error)) *testHost {
	t.Helper()
	if load == nil {
		load = func() (*policy.Policy, error) { return policy.Default(), nil }
	}
	l, err := agentsock.ListenAs(dir, id)
	if err != nil {
		t.Fatal(err)
	}
	h := &testHost{l: l, local: loc, audit: &memAudit{}}
	srv := &server{
		l:          l,
		self:       agentid.Self(),
		policyPath: "/cfg/fillgate/policy",
		loadPolicy: func() (*policy.Policy, error) { h.loads.Add(1); return load() },
		local:      loc,
		audit:      h.audit,
		log:        slog.New(slog.DiscardHandler),
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- agentsock.Serve(ctx, l, srv.serve) }()
	t.Cleanup(func() {
		cancel()
		<-served
		_ = l.Close()
	})
	return h
}

// fakeID is a hosts/<id>.sock name no real process has (above Linux's
// largest pid_max), for a second host in this process.
func fakeID(n int) int { return 5_000_000 + n }

func sockDir(t testing.TB) string { return filepath.Join(t.TempDir(), "fg") }

// login is an active tab showing a focused password field on service.
func login(service string) *agentsock.ActiveTab {
	return &agentsock.ActiveTab{Origin: "https://" + service, Field: fill.FieldPassword}
}

// TestFillRunsHereWithItsAgent: a fill on the only host passes the door
// (its service canonical, its field normalized) and runs for the agent
// behind the socket's peer: the host skips its own executable (this test
// binary), so the agent is this test's parent, with its start time, and
// the client it came through when that is one of fillgate's own.
func TestFillRunsHereWithItsAgent(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeLocal{}, nil)
	tab := int64(12)
	res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "GitHub.com", Field: "otp", Timeout: 1500 * time.Millisecond, Tab: &tab}, "fillgate fill", nil)
	if err != nil || res.Status != fill.StatusOK || res.Service != "github.com" || res.Field != fill.FieldOTP {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	reqs, agents := h.local.ran()
	if len(reqs) != 1 {
		t.Fatalf("%d fills ran", len(reqs))
	}
	got := reqs[0].Request()
	if got.Service != "github.com" || got.Field != fill.FieldOTP || got.Then != fill.ThenSubmit || got.Timeout != 1500*time.Millisecond || got.Tab == nil || *got.Tab != 12 {
		t.Errorf("the fill ran for %+v", got)
	}
	want := os.Getppid()
	if want == 0 {
		want = os.Getpid() // no parent to walk to (Wine, started from Linux): its own agent
	}
	a := agents[0]
	if a.PID != want || a.PeerPID != os.Getpid() || a.Via != "fillgate fill" {
		t.Errorf("agent = %+v, want pid %d (our parent), peer %d, via fillgate fill", a, want, os.Getpid())
	}
	if runtime.GOOS == "linux" {
		parent, err := procinfo.Get(a.PID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Start == 0 || a.Start != parent.Start || a.ProcessKey() == "" {
			t.Errorf("agent %s has start %d; the OS says %d", a, a.Start, parent.Start)
		}
	}

	// A client that is not one of fillgate's front ends is not named.
	if _, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "github.com"}, "evil\x1b[2J", nil); err != nil {
		t.Fatal(err)
	}
	if _, agents := h.local.ran(); agents[1].Via != "" {
		t.Errorf("the agent came via %q", agents[1].Via)
	}
}

// TestDoorRefusesOnce: a service fillgate does not fill for is refused at
// the door, before any browser is asked: the refusal is recorded as the
// fill flow records one, and routing never starts.
func TestDoorRefusesOnce(t *testing.T) {
	dir := sockDir(t)
	owner := startHost(t, dir, os.Getpid(), &fakeLocal{active: login("a.test")}, nil)
	other := startHost(t, dir, fakeID(2), &fakeLocal{active: login("a.test")}, nil)
	res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "com"}, "fillgate fill", nil)
	if err != nil || res.Status != fill.StatusRefused || !strings.Contains(res.Detail, "is a public suffix") ||
		res.Service != "com" || res.Field != fill.FieldPassword || res.Via != fill.ViaExtension {
		t.Fatalf("Fill(com) = %+v, %v", res, err)
	}
	if got := owner.local.refusedAtTheDoor(); len(got) != 1 || got[0] != res {
		t.Errorf("the door recorded %+v, want the refusal", got)
	}
	for _, h := range []*testHost{owner, other} {
		if reqs, _ := h.local.ran(); len(reqs) != 0 || h.local.peeks.Load() != 0 {
			t.Errorf("a refused request ran (%d) or peeked (%d)", len(reqs), h.local.peeks.Load())
		}
	}
	if n := owner.loads.Load(); n != 1 {
		t.Errorf("the policy was loaded %d times for one request", n)
	}
}

// TestPolicyThatDoesNotLoadRefuses: every fill is refused and audited,
// never run under the defaults; a status names no prompt mode.
func TestPolicyThatDoesNotLoadRefuses(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeLocal{st: agentsock.HostStatus{PID: 7}}, func() (*policy.Policy, error) {
		return nil, errors.New("policy: 1:1: broken")
	})
	res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "com"}, "fillgate fill", nil)
	want := policy.Refusal("/cfg/fillgate/policy", "com", fill.ViaExtension)
	if err != nil || res != want {
		t.Fatalf("Fill = %+v, %v; want %+v", res, err, want)
	}
	entries := h.audit.all()
	if len(entries) != 1 || entries[0].Status != fill.StatusRefused || entries[0].Detail != want.Detail || entries[0].Service != "com" || entries[0].Via != fill.ViaExtension {
		t.Errorf("audit %+v", entries)
	}
	if reqs, _ := h.local.ran(); len(reqs) != 0 || len(h.local.refusedAtTheDoor()) != 0 {
		t.Error("a request ran, or reached the door, under a policy that does not load")
	}
	hs, err := agentsock.Status(testctx.New(t), dir)
	if err != nil || len(hs) != 1 || hs[0].PID != 7 || hs[0].Prompt != "" {
		t.Errorf("Status = %+v, %v", hs, err)
	}
}

func TestRouteToTheBrowserWithTheLoginField(t *testing.T) {
	dir := sockDir(t)
	owner := startHost(t, dir, os.Getpid(), &fakeLocal{st: agentsock.HostStatus{PID: 1, BrowserName: "chromium"}, active: login("news.test")}, nil)
	other := startHost(t, dir, fakeID(2), &fakeLocal{st: agentsock.HostStatus{PID: 2, BrowserName: "brave"}, active: login("a.test")}, nil)
	if !owner.l.OwnsAgentSocket() {
		t.Fatal("the first host does not own agent.sock")
	}
	res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "a.test", Field: fill.FieldPassword}, "fillgate fill", nil)
	if err != nil || res.Status != fill.StatusOK {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	ownerRan, _ := owner.local.ran()
	otherRan, agents := other.local.ran()
	if len(ownerRan) != 0 || len(otherRan) != 1 {
		t.Fatalf("fills: owner %d, other %d; want the other host to run it", len(ownerRan), len(otherRan))
	}
	// The host that ran it names the agent the owner found behind its own
	// peer (this test process), not the owner itself.
	want := agentid.Find(os.Getpid(), agentid.Self())
	if got := agents[0]; got.PID != want.PID || got.Exe != want.Exe || got.Start != want.Start || got.Via != "fillgate fill" {
		t.Errorf("the routed fill ran for agent %+v; want %+v via fillgate fill", got, want)
	}
	// One policy load per request each host answered: the owner's for
	// the fill it routed; the other's for the peek and for the fill it
	// ran.
	if o, r := owner.loads.Load(), other.loads.Load(); o != 1 || r != 2 {
		t.Errorf("policy loads: owner %d, other %d; want 1 and 2", o, r)
	}
}

func TestRouteWithOneHostAsksNoBrowser(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeLocal{active: login("a.test")}, nil)
	if res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "other.test"}, "test", nil); err != nil || res.Status != fill.StatusOK {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	// Its own checks explain a refusal; nothing is peeked first.
	if reqs, _ := h.local.ran(); len(reqs) != 1 || h.local.peeks.Load() != 0 {
		t.Errorf("fills %d, peeks %d; want 1 and 0", len(reqs), h.local.peeks.Load())
	}
}

// TestRouteRefusalIsRecorded: a fill no host may take is refused by the
// routing host and recorded in its audit log, and no browser runs it.
func TestRouteRefusalIsRecorded(t *testing.T) {
	dir := sockDir(t)
	a := startHost(t, dir, os.Getpid(), &fakeLocal{st: agentsock.HostStatus{PID: 1, BrowserName: "chromium", Profile: "/p/one"}, active: login("a.test")}, nil)
	b := startHost(t, dir, fakeID(2), &fakeLocal{st: agentsock.HostStatus{PID: 2, BrowserName: "brave", Profile: "/p/two"}, active: login("a.test")}, nil)
	res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "a.test"}, "fillgate fill", nil)
	if err != nil || res.Status != fill.StatusRefused || !strings.HasPrefix(res.Detail, "more than one connected browser has a focused password field for a.test") {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	entries := a.audit.all()
	if len(entries) != 1 || entries[0].Status != fill.StatusRefused || entries[0].Detail != res.Detail || entries[0].Field != fill.FieldPassword || entries[0].Agent.PeerPID != os.Getpid() {
		t.Errorf("the router recorded %+v", entries)
	}
	for _, h := range []*testHost{a, b} {
		if reqs, _ := h.local.ran(); len(reqs) != 0 {
			t.Error("a refused fill ran")
		}
	}
	// With the browser named, the same fill goes to it.
	if res, err := agentsock.Fill(testctx.New(t), dir, fill.Request{Service: "a.test", Browser: "brave"}, "fillgate fill", nil); err != nil || res.Status != fill.StatusOK {
		t.Fatalf("Fill --browser brave = %+v, %v", res, err)
	}
	if reqs, _ := b.local.ran(); len(reqs) != 1 {
		t.Error("the named browser did not run it")
	}
}

// TestStatusListsEveryHost: a status for all hosts lists each once, the
// owner of agent.sock first, with its endpoint and what its browser's
// active tab shows, under the policy loaded once.
func TestStatusListsEveryHost(t *testing.T) {
	dir := sockDir(t)
	h1 := startHost(t, dir, os.Getpid(), &fakeLocal{st: agentsock.HostStatus{PID: 1}, active: login("a.test")}, func() (*policy.Policy, error) {
		p := policy.Default()
		p.Prompt = policy.PromptNative
		return p, nil
	})
	h2 := startHost(t, dir, fakeID(2), &fakeLocal{st: agentsock.HostStatus{PID: 2}}, nil)
	got, err := agentsock.Status(testctx.New(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].PID != 1 || got[1].PID != 2 {
		t.Fatalf("Status = %+v", got)
	}
	if got[0].Socket != h1.l.Path() || got[1].Socket != h2.l.Path() {
		t.Errorf("sockets %s, %s", got[0].Socket, got[1].Socket)
	}
	if got[0].ActiveTab == nil || got[0].ActiveTab.Origin != "https://a.test" || got[1].ActiveTab != nil {
		t.Errorf("active tabs %+v, %+v", got[0].ActiveTab, got[1].ActiveTab)
	}
	if got[0].Prompt != policy.PromptNative || got[1].Prompt != policy.PromptAuto {
		t.Errorf("prompt modes %q, %q", got[0].Prompt, got[1].Prompt)
	}
	if n := h1.loads.Load(); n != 1 {
		t.Errorf("the answering host loaded the policy %d times", n)
	}
}

// TestForwardedRunsHere: a fill that names its agent, from a peer that
// runs this executable (another host; here this test binary, the host's
// own executable), runs here for that agent, unrouted, its client
// cleaned. (agentid.TestForwardedOnlyFromFillgate: from any other peer the
// agent field is ignored.)
func TestForwardedRunsHere(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeLocal{active: login("news.test")}, nil)
	startHost(t, dir, fakeID(2), &fakeLocal{active: login("x.test")}, nil)
	c, err := agentsock.Dial(testctx.New(t), h.l.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, `{"op":"fill","service":"a.test","agent":{"name":"claude","pid":42,"via":"made up"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	if !strings.Contains(string(b), `"status":"ok"`) {
		t.Fatalf("the forwarded fill got %s", b)
	}
	_, agents := h.local.ran()
	if len(agents) != 1 || agents[0].Name != "claude" || agents[0].PID != 42 || agents[0].Via != "" || h.local.peeks.Load() != 0 {
		t.Errorf("ran for %+v after %d peeks; want the named agent, its client dropped, unrouted", agents, h.local.peeks.Load())
	}
}
