package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// TestProgressCountdown: phases go out at once, the countdown repeats
// while the prompt is open and stops with the next phase, every progress
// value is larger than the one before, and nothing is sent after stop or
// once the request has ended.
func TestProgressCountdown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type note struct {
		n   float64
		msg string
	}
	sent := make(chan note, 64)
	p := newProgress(ctx, 5*time.Millisecond, func(_ context.Context, n float64, msg string) { sent <- note{n, msg} })
	next := func() note {
		select {
		case n := <-sent:
			return n
		case <-time.After(10 * time.Second):
			t.Fatal("no progress notification")
		}
		return note{}
	}
	last := 0.0
	check := func(n note, prefix string) {
		t.Helper()
		if n.n <= last || !strings.HasPrefix(n.msg, prefix) {
			t.Errorf("progress %v %q after %v; want more, saying %q", n.n, n.msg, last, prefix)
		}
		last = n.n
	}
	p.phase(fill.Progress{Phase: fill.PhaseInspecting})
	check(next(), "inspecting")
	p.phase(fill.Progress{Phase: fill.PhaseWaiting, Deadline: time.Now().Add(time.Minute)})
	for range 3 { // the phase itself, then at least two countdown ticks
		check(next(), "waiting for the human to answer the fillgate prompt in the browser: ")
	}
	p.phase(fill.Progress{Phase: fill.PhaseInserting})
	for n := next(); !strings.HasPrefix(n.msg, "inserting"); n = next() {
		check(n, "waiting") // ticks sent before the phase changed
	}
	if len(sent) != 0 {
		t.Errorf("the countdown went on after the prompt closed")
	}
	p.phase(fill.Progress{Phase: fill.PhaseWaiting})
	check(next(), "waiting")
	p.stop()
	for len(sent) > 0 {
		check(<-sent, "waiting") // ticks sent before stop returned
	}
	cancel()
	p.notify("after the end")
	if len(sent) != 0 {
		t.Errorf("progress after stop or after the request ended")
	}
}
