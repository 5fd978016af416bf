package agentsock

import (
	"net"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// TestAThousandConnectionsAtOnce opens a thousand connections that never
// send a request: each gets its bounded answer (bad_request at the read
// deadline), and meanwhile other clients are served at once. More than
// maxConns at once are told the host is busy. Afterwards nothing is left.
func TestAThousandConnectionsAtOnce(t *testing.T) {
	dir := sockDir(t)
	h := &fakeHandler{status: HostStatus{PID: 7}}
	hs := startHostWith(t, dir, listenConfig{id: os.Getpid(), claimEvery: time.Hour}, 2*time.Second, h)
	before := runtime.NumGoroutine()

	const n = 1000
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := dialEndpoint(testctx.New(t), hs.l.Path())
		if err != nil {
			t.Fatalf("connection %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	// While they hang, another client is served.
	start := time.Now()
	if pid := statusPID(t, hs.l.Path()); pid != 7 {
		t.Fatalf("status during the flood answered as pid %d", pid)
	}
	if res, err := Fill(testctx.New(t), dir, fill.Request{Service: "a.test"}, "test", nil); err != nil || res.Status != fill.StatusOK {
		t.Fatalf("a fill during the flood: %+v, %v", res, err)
	}
	t.Logf("status and a fill during the flood took %v", time.Since(start).Round(time.Millisecond))

	// Every silent connection gets its answer, and only that.
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for _, c := range conns {
		wg.Go(func() {
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			msgs := readMessages(t, c)
			if len(msgs) != 1 || msgs[0].Type != TypeError || msgs[0].Error != CodeBadRequest {
				errs <- "a silent connection got something else than one bad_request"
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if h.fills.Load() != 1 {
		t.Errorf("the handler ran %d fills, want 1", h.fills.Load())
	}
	waitGoroutines(t, before)
}

// TestBusyBeyondTheCap fills every slot with silent connections: the next
// one is told the host is busy at once, and once a slot frees up clients
// are served again.
func TestBusyBeyondTheCap(t *testing.T) {
	dir := sockDir(t)
	hs := startHostWith(t, dir, listenConfig{id: os.Getpid(), claimEvery: time.Hour}, time.Minute, &fakeHandler{status: HostStatus{PID: 7}})
	before := runtime.NumGoroutine()
	conns := make([]net.Conn, 0, maxConns)
	for range maxConns {
		conns = append(conns, dialRaw(t, hs.l.Path()))
	}
	// The slots are taken in accept order; one more is busy.
	c := dialRaw(t, hs.l.Path())
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	wantError(t, readMessages(t, c), CodeBusy)
	c.Close()
	for _, c := range conns {
		c.Close()
	}
	// The host serves again once the silent ones are gone.
	ctx := testctx.New(t)
	for {
		if _, err := StatusAt(ctx, hs.l.Path()); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the host did not serve again after the flood")
		case <-time.After(10 * time.Millisecond):
		}
	}
	waitGoroutines(t, before)
}

// waitGoroutines waits until no more goroutines run than before (the
// server's per-connection goroutines end with their connections).
func waitGoroutines(t *testing.T, before int) {
	t.Helper()
	ctx := testctx.New(t)
	for runtime.NumGoroutine() > before {
		select {
		case <-ctx.Done():
			t.Fatalf("%d goroutines run, %d before", runtime.NumGoroutine(), before)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
