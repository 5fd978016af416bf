package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/nativemsg"
)

// heldPeer is an extension that counts the peeks it gets and answers each
// only when the test releases it.
type heldPeer struct {
	peeks   chan int64 // the id of each peek, as it arrives
	release chan struct{}
}

func startHeldPeer(t *testing.T, opts ...Option) (*Bridge, *heldPeer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hostR, peerW := io.Pipe()
	peerR, hostW := io.Pipe()
	t.Cleanup(func() { cancel(); peerW.Close(); hostW.Close() })
	port := nativemsg.NewPort(hostR, hostW, nil)
	b := New(port, opts...)
	go func() { _ = port.Run(ctx) }()
	p := &heldPeer{peeks: make(chan int64, 100), release: make(chan struct{}, 100)}
	go func() {
		for {
			body, err := nativemsg.ReadFrame(peerR)
			if err != nil {
				return
			}
			var req struct{ ID int64 }
			_ = json.Unmarshal(body, &req)
			p.peeks <- req.ID
			go func() {
				<-p.release
				_ = nativemsg.WriteFrame(peerW, []byte(`{"id":`+strconv.FormatInt(req.ID, 10)+`,"type":"peeked","origin":"https://a.test","field":{"kind":"password"}}`))
			}()
		}
	}()
	return b, p
}

// waiting waits until n callers wait for the peek under way.
func (b *Bridge) waiting(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		b.mu.Lock()
		got := 0
		if b.peeking != nil {
			got = b.peeking.waiters
		}
		b.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers wait for the peek, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

const wait = 30 * time.Second

// frozen is a clock that stands still.
func frozen() time.Time { return time.Unix(1000, 0) }

// TestConcurrentPeeksShareOne: fifty peeks made while one is on its way
// to the extension all get its answer, and the extension gets one peek.
// A peek made after that answer asks afresh.
func TestConcurrentPeeksShareOne(t *testing.T) {
	b, p := startHeldPeer(t, WithClock(frozen)) // however slow the machine, the peek stays joinable
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			f, err := b.Peek(ctx)
			if err == nil && (f.Origin != "https://a.test" || f.Field.Kind != "password") {
				err = errors.New("a peek got another answer: " + f.Origin)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	b.waiting(t, n)
	p.release <- struct{}{}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := len(p.peeks); got != 1 {
		t.Errorf("the extension got %d peeks for %d callers, want 1", got, n)
	}
	<-p.peeks
	p.release <- struct{}{}
	if _, err := b.Peek(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(p.peeks); got != 1 {
		t.Errorf("a peek after the shared one's answer sent %d peeks, want 1", got)
	}
}

// TestPeekCallerLeaves: a caller whose context ends gets its error at
// once while the others keep waiting; when the last one leaves, the
// shared peek is dropped, and the next caller asks afresh.
func TestPeekCallerLeaves(t *testing.T) {
	b, p := startHeldPeer(t, WithClock(frozen))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	gone, leave := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { _, err := b.Peek(gone); left <- err }()
	<-p.peeks
	stays := make(chan error, 1)
	go func() { _, err := b.Peek(ctx); stays <- err }()
	b.waiting(t, 2)
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the caller that left got %v", err)
	}
	p.release <- struct{}{}
	if err := <-stays; err != nil {
		t.Fatalf("the caller that stayed got %v", err)
	}

	// Alone, and gone: the peek is dropped; the next one is new.
	alone, leaveAlone := context.WithCancel(ctx)
	go func() { _, err := b.Peek(alone); left <- err }()
	<-p.peeks
	b.waiting(t, 1)
	leaveAlone()
	<-left
	b.mu.Lock()
	dropped := b.peeking == nil
	b.mu.Unlock()
	if !dropped {
		t.Error("a peek nobody waits for is still shared")
	}
	go func() { p.release <- struct{}{}; p.release <- struct{}{} }()
	if _, err := b.Peek(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(p.peeks); got != 1 {
		t.Errorf("the next peek sent %d requests, want 1", got)
	}
}

// TestStuckPeekIsNotJoined: a peek the extension has not answered for
// longer than peekShare is not joined: the next caller asks afresh, and
// each gets the answer to its own peek.
func TestStuckPeekIsNotJoined(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b, p := startHeldPeer(t, WithClock(clock))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	first := make(chan error, 1)
	go func() { _, err := b.Peek(ctx); first <- err }()
	<-p.peeks
	mu.Lock()
	now = now.Add(peekShare + time.Millisecond)
	mu.Unlock()
	second := make(chan error, 1)
	go func() { _, err := b.Peek(ctx); second <- err }()
	<-p.peeks // a second peek went out: the stuck one was not joined
	p.release <- struct{}{}
	p.release <- struct{}{}
	for _, c := range []chan error{first, second} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}
