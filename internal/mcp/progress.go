package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// progressEvery is how often progress goes to the client while the prompt
// waits for the human: well within 10 s, so a client whose request timeout
// is reset on progress keeps waiting.
const progressEvery = 5 * time.Second

// progress reports a request's phases, and while the prompt is open a
// countdown every p.every, as MCP progress notifications with an
// increasing progress value. Nothing is sent once the request's context
// has ended or stop returned.
type progress struct {
	ctx   context.Context
	every time.Duration
	send  func(ctx context.Context, n float64, msg string)

	mu sync.Mutex // held while sending, so n increases in the order sent
	n  float64

	cmu     sync.Mutex
	waiting context.CancelFunc // ends the countdown of the open prompt
	done    chan struct{}      // closed when that countdown has ended
}

// newProgress reports through send, with a countdown every every.
func newProgress(ctx context.Context, every time.Duration, send func(ctx context.Context, n float64, msg string)) *progress {
	return &progress{ctx: ctx, every: every, send: send}
}

// notify sends one notification unless the request has ended.
func (p *progress) notify(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return
	}
	p.n++
	p.send(p.ctx, p.n, msg)
}

// phase hears one phase of the request.
func (p *progress) phase(ph fill.Progress) {
	p.stop()
	if ph.Phase != fill.PhaseWaiting {
		p.notify(ph.Phase)
		return
	}
	p.notify(waitingMessage(ph))
	ctx, cancel := context.WithCancel(p.ctx)
	done := make(chan struct{})
	p.cmu.Lock()
	p.waiting, p.done = cancel, done
	p.cmu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.notify(waitingMessage(ph))
			}
		}
	}()
}

// stop ends the countdown, if one runs, and waits for it; no countdown
// notification is sent after it returns.
func (p *progress) stop() {
	p.cmu.Lock()
	cancel, done := p.waiting, p.done
	p.waiting, p.done = nil, nil
	p.cmu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// waitingMessage says whom the request waits for, where, and how long.
func waitingMessage(ph fill.Progress) string {
	msg := "waiting for the human to answer the fillgate prompt " + whereWords(ph.Where)
	if ph.Deadline.IsZero() {
		return msg
	}
	left := max(time.Until(ph.Deadline).Round(time.Second), 0)
	return fmt.Sprintf("%s: %d s left", msg, int(left/time.Second))
}

// whereWords says where the person answers.
func whereWords(where string) string {
	if where == fill.WhereDesktop {
		return "in a dialog on their desktop"
	}
	return "in the browser"
}
