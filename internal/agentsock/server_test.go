package agentsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

func TestStatusRoundTrip(t *testing.T) {
	dir := sockDir(t)
	want := HostStatus{
		Version: "0.1.0", PID: 4242, Browser: "chromium", Caller: "chrome-extension://abc/",
		Extension: ExtensionStatus{Connected: true, Version: "0.1.0", UserAgent: "UA"},
	}
	h := startHost(t, dir, os.Getpid(), &fakeHandler{status: want})
	got, err := Status(testctx.New(t), dir)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	want.Socket = h.l.Path() // filled in by Serve
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("Status = %+v, want [%+v]", got, want)
	}
}

func TestFillRoundTrip(t *testing.T) {
	dir := sockDir(t)
	var gotReq fill.Request
	var gotPeer int
	h := &fakeHandler{fillFn: func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		gotReq, gotPeer = req, peerPID
		return fill.Result{Status: fill.StatusOK, Service: req.Service, Origin: "https://github.com", Field: req.Field, Via: fill.ViaExtension, Detail: "inserted"}
	}}
	startHost(t, dir, os.Getpid(), h)

	tab, frame := int64(12), int64(0)
	res, err := Fill(testctx.New(t), dir, fill.Request{Service: "github.com", Field: "otp", Timeout: 1500 * time.Millisecond, Tab: &tab, Frame: &frame}, "fillgate fill", nil)
	if err != nil {
		t.Fatalf("Fill: %v", err)
	}
	want := fill.Result{Status: fill.StatusOK, Service: "github.com", Origin: "https://github.com", Field: fill.FieldOTP, Via: fill.ViaExtension, Detail: "inserted"}
	if res != want {
		t.Errorf("result = %+v, want %+v", res, want)
	}
	if gotReq.Service != "github.com" || gotReq.Field != fill.FieldOTP || gotReq.Timeout != 1500*time.Millisecond ||
		gotReq.Tab == nil || *gotReq.Tab != 12 || gotReq.Frame == nil || *gotReq.Frame != 0 {
		t.Errorf("the handler got %+v", gotReq)
	}
	// The peer is this test process (the agent behind it is
	// internal/agentid's to find).
	if gotPeer != os.Getpid() {
		t.Errorf("peer pid = %d, want this process %d", gotPeer, os.Getpid())
	}
}

// TestPeekRoundTrip: a peek gets the host's status (with its endpoint)
// and what its browser's active tab has focused.
func TestPeekRoundTrip(t *testing.T) {
	dir := sockDir(t)
	active := &ActiveTab{Origin: "https://a.test", Field: fill.FieldPassword}
	h := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 7}, active: active})
	m, err := Peek(testctx.New(t), h.l.Path())
	if err != nil || m.Type != TypePeek || m.Status.PID != 7 || m.Status.Socket != h.l.Path() || m.Active == nil || *m.Active != *active {
		t.Fatalf("Peek = %+v, %v", m, err)
	}
	if h.h.peeks.Load() != 1 {
		t.Errorf("peeks = %d, want 1", h.h.peeks.Load())
	}
}

func TestFillDefaults(t *testing.T) {
	dir := sockDir(t)
	var gotReq fill.Request
	h := &fakeHandler{fillFn: func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		gotReq = req
		return fill.Result{Status: fill.StatusRefused, Service: req.Service}
	}}
	hs := startHost(t, dir, os.Getpid(), h)
	msgs := exchange(t, hs.l.Path(), []byte(`{"op":"fill","service":"example.com","timeout_ms":9223372036854775807}`+"\n"))
	if len(msgs) != 1 || msgs[0].Type != TypeResult || msgs[0].Result.Status != fill.StatusRefused {
		t.Fatalf("got %+v", msgs)
	}
	if gotReq.Field != fill.FieldPassword || gotReq.Tab != nil || gotReq.Frame != nil || gotReq.Timeout <= 0 {
		t.Errorf("defaults: %+v", gotReq)
	}
}

func TestBadRequests(t *testing.T) {
	dir := sockDir(t)
	h := &fakeHandler{}
	hs := startHost(t, dir, os.Getpid(), h)
	for name, line := range map[string]string{
		"malformed":       `{"op":"status"`,
		"not an object":   `[1,2]`,
		"two objects":     `{"op":"status"} {"op":"status"}`,
		"unknown op":      `{"op":"steal"}`,
		"no op":           `{"service":"github.com"}`,
		"null":            `null`,
		"no service":      `{"op":"fill"}`,
		"unknown field":   `{"op":"fill","service":"github.com","field":"credit-card"}`,
		"negative budget": `{"op":"fill","service":"github.com","timeout_ms":-1}`,
		"wrong type":      `{"op":"fill","service":"github.com","tab":"twelve"}`,
		"empty line":      ``,
	} {
		t.Run(name, func(t *testing.T) {
			msgs := exchange(t, hs.l.Path(), []byte(line+"\n"))
			wantError(t, msgs, CodeBadRequest)
			if msgs[0].Detail == "" {
				t.Error("no detail")
			}
		})
	}
	if h.calls() != 0 {
		t.Errorf("the handler was called %d times for bad requests", h.calls())
	}
}

func TestUnknownRequestFieldsIgnored(t *testing.T) {
	dir := sockDir(t)
	hs := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 7}})
	msgs := exchange(t, hs.l.Path(), []byte(`{"op":"status","from_the_future":{"x":1}}`+"\n"))
	if len(msgs) != 1 || msgs[0].Type != TypeStatus || msgs[0].Status.PID != 7 {
		t.Fatalf("got %+v", msgs)
	}
}

func TestRequestWithoutNewline(t *testing.T) {
	unixOnly(t, "a byte-mode pipe has no half-close: a client that stops sending has hung up")
	dir := sockDir(t)
	h := &fakeHandler{}
	hs := startHost(t, dir, os.Getpid(), h)
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: hs.l.Path(), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(`{"op":"status"}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	wantError(t, readMessages(t, c), CodeBadRequest)
	if h.calls() != 0 {
		t.Error("the handler was called")
	}
}

func TestRequestSizeLimit(t *testing.T) {
	dir := sockDir(t)
	h := &fakeHandler{status: HostStatus{PID: 7}}
	hs := startHost(t, dir, os.Getpid(), h)

	// pad builds a status request of exactly n bytes, newline included.
	pad := func(n int) []byte {
		head, tail := `{"op":"status","pad":"`, `"}`+"\n"
		return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
	}
	msgs := exchange(t, hs.l.Path(), pad(MaxRequest))
	if len(msgs) != 1 || msgs[0].Type != TypeStatus {
		t.Fatalf("a request of exactly %d bytes: got %+v", MaxRequest, msgs)
	}
	if h.calls() != 1 {
		t.Fatalf("handler calls = %d, want 1", h.calls())
	}

	wantError(t, exchange(t, hs.l.Path(), pad(MaxRequest+1)), CodeBadRequest)
	// No newline at all: refused as soon as the limit passes, without
	// waiting for the client to stop.
	wantError(t, exchange(t, hs.l.Path(), []byte(strings.Repeat("x", 70_000))), CodeBadRequest)
	if h.calls() != 1 {
		t.Errorf("the handler was called for an oversized request")
	}
}

func TestSlowClientHitsDeadline(t *testing.T) {
	dir := sockDir(t)
	h := &fakeHandler{}
	hs := startHostWith(t, dir, listenConfig{id: os.Getpid(), claimEvery: time.Hour}, 100*time.Millisecond, h)
	for name, partial := range map[string]string{"silent": "", "half a request": `{"op":"sta`} {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, hs.l.Path())
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			if _, err := c.Write([]byte(partial)); err != nil {
				t.Fatal(err)
			}
			// The client never finishes; the host gives up and hangs up.
			msgs := readMessages(t, c)
			wantError(t, msgs, CodeBadRequest)
			if !strings.Contains(msgs[0].Detail, "within") {
				t.Errorf("detail %q does not name the deadline", msgs[0].Detail)
			}
		})
	}
	if h.calls() != 0 {
		t.Error("the handler was called")
	}
}

func TestProbeIsSilent(t *testing.T) {
	unixOnly(t, "a byte-mode pipe has no half-close, so a probe cannot hang up and still read (TestSecondListenerFails probes a host's pipe)")
	dir := sockDir(t)
	h := &fakeHandler{status: HostStatus{PID: 7}}
	hs := startHost(t, dir, os.Getpid(), h)
	c, err := net.Dial("unix", hs.l.Path())
	if err != nil {
		t.Fatal(err)
	}
	c.(*net.UnixConn).CloseWrite()
	if msgs := readMessages(t, c); len(msgs) != 0 {
		t.Errorf("a connect-and-hang-up got %+v", msgs)
	}
	c.Close()
	if pid := statusPID(t, hs.l.Path()); pid != 7 || h.calls() != 1 {
		t.Errorf("after a probe: pid %d, calls %d", pid, h.calls())
	}
}

func TestProgressIsWrittenAsItComes(t *testing.T) {
	dir := sockDir(t)
	seen := make(chan fill.Progress, 3)
	deadline := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	h := &fakeHandler{fillFn: func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		// Each step waits until the client has seen the one before: if
		// progress were held back until the result, this would never end.
		for _, p := range []fill.Progress{{Phase: fill.PhaseInspecting}, {Phase: fill.PhaseWaiting, Deadline: deadline}, {Phase: fill.PhaseInserting}} {
			progress(p)
			select {
			case got := <-seen:
				if got.Phase != p.Phase || !got.Deadline.Equal(p.Deadline) {
					return fill.Result{Status: fill.StatusFailed, Detail: fmt.Sprintf("client saw %+v, want %+v", got, p)}
				}
			case <-ctx.Done():
				return fill.Result{Status: fill.StatusFailed, Detail: "progress never reached the client"}
			}
		}
		return fill.Result{Status: fill.StatusOK, Service: req.Service}
	}}
	startHost(t, dir, os.Getpid(), h)
	res, err := Fill(testctx.New(t), dir, fill.Request{Service: "github.com"}, "test", func(p fill.Progress) { seen <- p })
	if err != nil {
		t.Fatalf("Fill: %v", err)
	}
	if res.Status != fill.StatusOK {
		t.Errorf("result %+v", res)
	}
}

func TestProgressAfterResultIsDropped(t *testing.T) {
	dir := sockDir(t)
	lateCh := make(chan func(fill.Progress), 1)
	h := &fakeHandler{fillFn: func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		lateCh <- progress
		return fill.Result{Status: fill.StatusOK, Service: req.Service}
	}}
	hs := startHost(t, dir, os.Getpid(), h)
	c := dialRaw(t, hs.l.Path())
	defer c.Close()
	if _, err := c.Write([]byte(`{"op":"fill","service":"a.test"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	// Read until the host hangs up, then report late progress: it must
	// neither panic nor write.
	msgs := readMessages(t, c)
	late := <-lateCh
	late(fill.Progress{Phase: fill.PhaseInserting})
	if len(msgs) != 1 || msgs[0].Type != TypeResult {
		t.Errorf("got %+v", msgs)
	}
}

// An early answer (a passkey arm that does not wait) is the client's
// result: the client returns with it and hangs up, and the fill goes on
// with its context ended by the hang-up (cause fill.ErrAgentGone), its
// own result dropped.
func TestEarlyAnswer(t *testing.T) {
	dir := sockDir(t)
	cause := make(chan error, 1)
	h := &fakeHandler{fillFn: func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		if !req.NoWait {
			return fill.Result{Status: fill.StatusFailed, Detail: "no_wait did not cross the wire"}
		}
		progress(fill.Progress{Phase: fill.PhaseInserting})
		early := fill.Result{Status: fill.StatusArmed, Service: req.Service}
		progress(fill.Progress{Phase: fill.PhaseArmed, Result: &early})
		progress(fill.Progress{Phase: fill.PhaseInserting}) // dropped
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return fill.Result{Status: fill.StatusOK, Service: req.Service}
	}}
	startHost(t, dir, os.Getpid(), h)
	var phases []string
	res, err := Fill(testctx.New(t), dir, fill.Request{Service: "a.test", Field: fill.FieldPasskey, NoWait: true}, "test", func(p fill.Progress) { phases = append(phases, p.Phase) })
	if err != nil || res.Status != fill.StatusArmed {
		t.Fatalf("Fill = %+v, %v; want the early answer", res, err)
	}
	if len(phases) != 1 || phases[0] != fill.PhaseInserting {
		t.Errorf("progress %v; want one inserting before the answer", phases)
	}
	if c := <-cause; !errors.Is(c, fill.ErrAgentGone) {
		t.Errorf("the fill's context ended with %v; want the agent's hang-up", c)
	}
}

// blockingFill waits for its context to end, reporting that it started and
// how it ended.
func blockingFill(started chan<- struct{}, ended chan<- error) func(context.Context, fill.Request, int, func(fill.Progress)) fill.Result {
	return func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return fill.Result{Status: fill.StatusCancelled, Service: req.Service, Detail: "the request was cancelled"}
	}
}

func TestClientHangupCancelsFill(t *testing.T) {
	dir := sockDir(t)
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	hs := startHost(t, dir, os.Getpid(), &fakeHandler{fillFn: blockingFill(started, ended)})
	c := dialRaw(t, hs.l.Path())
	if _, err := c.Write([]byte(`{"op":"fill","service":"a.test"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	ctx := testctx.New(t)
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the fill never started")
	}
	c.Close()
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the fill's context ended with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("hanging up did not cancel the fill")
	}
}

func TestClientContextCancelsFill(t *testing.T) {
	dir := sockDir(t)
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	startHost(t, dir, os.Getpid(), &fakeHandler{fillFn: blockingFill(started, ended)})
	ctx, cancel := context.WithCancel(testctx.New(t))
	go func() {
		<-started
		cancel()
	}()
	_, err := Fill(ctx, dir, fill.Request{Service: "a.test"}, "test", nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Fill = %v, want context.Canceled", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the fill's context ended with %v", err)
		}
	case <-testctx.New(t).Done():
		t.Fatal("cancelling the client did not cancel the fill")
	}
}

func TestServeContextCancelsFill(t *testing.T) {
	dir := sockDir(t)
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	l, err := listen(dir, listenConfig{id: os.Getpid(), claimEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, l, (&fakeHandler{fillFn: blockingFill(started, ended)}).serve) }()

	type answer struct {
		res fill.Result
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := Fill(testctx.New(t), dir, fill.Request{Service: "a.test"}, "test", nil)
		answered <- answer{res, err}
	}()
	<-started
	cancel()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the fill's context ended with %v", err)
	}
	// The client still gets the handler's result, and Serve returns
	// after it.
	a := <-answered
	if a.err != nil || a.res.Status != fill.StatusCancelled {
		t.Errorf("client got %+v, %v", a.res, a.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil after its context ended", err)
	}
}

func TestServeEndsWhenListenerCloses(t *testing.T) {
	l, err := listen(sockDir(t), listenConfig{id: os.Getpid(), claimEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- Serve(testctx.New(t), l, (&fakeHandler{}).serve) }()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, net.ErrClosed) {
		t.Errorf("Serve = %v, want net.ErrClosed", err)
	}
}

func TestConcurrentRequests(t *testing.T) {
	// Every fill waits until all of them are under way: served one at a
	// time, they would never finish.
	const n = 8
	dir := sockDir(t)
	var arrived sync.WaitGroup
	arrived.Add(n)
	all := make(chan struct{})
	go func() { arrived.Wait(); close(all) }()
	h := &fakeHandler{fillFn: func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result {
		arrived.Done()
		select {
		case <-all:
			return fill.Result{Status: fill.StatusOK, Service: req.Service}
		case <-ctx.Done():
			return fill.Result{Status: fill.StatusFailed, Service: req.Service}
		}
	}}
	startHost(t, dir, os.Getpid(), h)
	ctx := testctx.New(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			svc := fmt.Sprintf("s%d.test", i)
			res, err := Fill(ctx, dir, fill.Request{Service: svc}, "test", nil)
			if err == nil && (res.Status != fill.StatusOK || res.Service != svc) {
				err = fmt.Errorf("%s got %+v", svc, res)
			}
			errs <- err
		})
	}
	// Status is answered while the fills wait.
	if _, err := Status(ctx, dir); err != nil {
		t.Errorf("Status during fills: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}
