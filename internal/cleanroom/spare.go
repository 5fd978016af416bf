package cleanroom

import (
	"context"
	"sync"
	"time"
)

// spareIdle is how long a spare waits for a request before it is ended
// (it costs memory while it waits).
const spareIdle = 10 * time.Minute

// Spare keeps one clean room's browser started ahead of the request that
// will use it, for a host whose browser a program drives: starting a
// browser is most of what a clean room costs. A spare holds no page, no
// cookie and no value; the request that takes it has it for itself
// alone, and it dies with that request as any room does. The next spare
// starts when that request ended. A spare dies with its host (the ctx
// given to NewSpare), or after waiting spareIdle for a request.
type Spare struct {
	ctx context.Context
	cfg Config

	mu     sync.Mutex
	next   *warming
	idle   *time.Timer
	closed bool
}

// NewSpare returns a Spare for rooms made with cfg; it starts nothing yet.
func NewSpare(ctx context.Context, cfg Config) *Spare {
	return &Spare{ctx: ctx, cfg: cfg}
}

// Close ends the spare, and no other starts.
func (s *Spare) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.closed = true
	if s.idle != nil {
		s.idle.Stop()
	}
	s.mu.Unlock()
	s.drop()
}

// Keep starts a spare, unless one is there or the host is ending.
func (s *Spare) Keep() {
	if s == nil || s.ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next != nil || s.closed {
		return
	}
	exe, err := (&Rooms{cfg: s.cfg}).browser()
	if err != nil {
		return
	}
	sctx, cancel := context.WithCancel(s.ctx)
	w := &warming{done: make(chan struct{}), cancel: cancel, exe: exe}
	s.next = w
	go func() {
		defer close(w.done)
		t0 := time.Now()
		w.r, w.err = start(sctx, s.cfg, exe)
		if w.err == nil {
			context.AfterFunc(s.ctx, w.r.Close)
			w.r.lap("spare_up", &t0)
		}
	}()
	if s.idle == nil {
		s.idle = time.AfterFunc(spareIdle, s.drop)
	} else {
		s.idle.Reset(spareIdle)
	}
}

// take hands over the spare (started, or on its way), if there is one.
func (s *Spare) take() *warming {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.next
	s.next = nil
	return w
}

// drop ends a spare nobody took.
func (s *Spare) drop() {
	if w := s.take(); w != nil {
		w.end()
	}
}
