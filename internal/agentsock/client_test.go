package agentsock

import (
	"errors"
	"os"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

func TestClientNoHost(t *testing.T) {
	ctx := testctx.New(t)
	missing := sockDir(t)
	if _, err := Fill(ctx, missing, fill.Request{Service: "a.test"}, "test", nil); !errors.Is(err, ErrNoHost) {
		t.Errorf("Fill on a missing dir = %v, want ErrNoHost", err)
	}
	if _, err := Status(ctx, missing); !errors.Is(err, ErrNoHost) {
		t.Errorf("Status on a missing dir = %v, want ErrNoHost", err)
	}

	// Only what hosts that are gone left behind.
	dir := sockDir(t)
	leaveDeadHost(t, dir, 12345)
	if _, err := Fill(ctx, dir, fill.Request{Service: "a.test"}, "test", nil); !errors.Is(err, ErrNoHost) {
		t.Errorf("Fill with stale sockets = %v, want ErrNoHost", err)
	}
	if _, err := Status(ctx, dir); !errors.Is(err, ErrNoHost) {
		t.Errorf("Status with stale sockets = %v, want ErrNoHost", err)
	}
}

func TestClientFallsBackToHostSockets(t *testing.T) {
	unixOnly(t, "a pipe cannot be left by a dead host; TestClientRefusesASquatter falls back from a pipe that is not a host's")
	dir := sockDir(t)
	h := &fakeHandler{}
	startHost(t, dir, os.Getpid(), h)
	// agent.sock is left by a dead host; the live one is under hosts/.
	if err := os.Remove(SocketPath(dir)); err != nil {
		t.Fatal(err)
	}
	makeStale(t, SocketPath(dir))
	res, err := Fill(testctx.New(t), dir, fill.Request{Service: "a.test"}, "test", nil)
	if err != nil || res.Status != fill.StatusOK {
		t.Fatalf("Fill = %+v, %v", res, err)
	}
	if h.fills.Load() != 1 {
		t.Errorf("fills = %d, want 1", h.fills.Load())
	}
}

func TestClientGetsHostError(t *testing.T) {
	dir := sockDir(t)
	h := &fakeHandler{}
	startHost(t, dir, os.Getpid(), h)
	_, err := Fill(testctx.New(t), dir, fill.Request{Service: ""}, "test", nil)
	var he *HostError
	if !errors.As(err, &he) || he.Code != CodeBadRequest {
		t.Fatalf("Fill without a service = %v, want a bad_request HostError", err)
	}
	if h.calls() != 0 {
		t.Error("the handler was called")
	}
}

func TestNewFillRequest(t *testing.T) {
	tab := int64(3)
	for _, tc := range []struct {
		in   fill.Request
		want int64
	}{
		{fill.Request{Service: "a.test"}, 0},
		{fill.Request{Service: "a.test", Timeout: 1}, 1}, // never rounds to "no limit"
		{fill.Request{Service: "a.test", Timeout: 2500 * 1e6, Tab: &tab}, 2500},
	} {
		w := newFillRequest(tc.in, "c")
		if w.Op != OpFill || w.TimeoutMS != tc.want || w.Tab != tc.in.Tab || w.Client != "c" {
			t.Errorf("newFillRequest(%+v) = %+v", tc.in, w)
		}
	}
}
