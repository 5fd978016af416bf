package promptwatch

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const site = "http://127.0.0.1:4000"
	w := New(OnLoopbackBut(site))

	// Login pages, other hosts and blank windows are no prompts.
	w.Saw("login", site+"/password")
	w.Saw("other", "http://127.0.0.2:5000/")
	w.Saw("blank", "about:blank")
	w.Closed("login")
	if n := w.Count(); n != 0 || w.Window("login") != (Window{}) {
		t.Fatalf("%d prompts after no prompt opened", n)
	}

	// A window becomes a prompt when it gets to a prompt's URL; the
	// waiter hears of it.
	got := make(chan string, 1)
	go func() {
		id, err := w.Next(ctx, 0)
		if err != nil {
			t.Error(err)
		}
		got <- id
	}()
	w.Saw("blank", "http://127.0.0.1:4001/?n=nonce")
	if id := <-got; id != "blank" {
		t.Fatalf("prompt 0 is %q, want blank", id)
	}
	w.Saw("blank", "http://127.0.0.1:4001/?n=nonce#again")
	if got := w.Window("blank"); w.Count() != 1 || got.Origin != "http://127.0.0.1:4001" || got.URL != "http://127.0.0.1:4001/?n=nonce#again" ||
		got.At.IsZero() || got.Loaded || got.Closed {
		t.Errorf("after a second report: %d prompts, %+v", w.Count(), got)
	}

	// Loaded and closed, each once reported.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if err := w.WaitLoaded(short, "blank"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitLoaded before the load: %v", err)
	}
	w.Loaded("blank", "http://127.0.0.1:4001/?n=nonce")
	if err := w.WaitLoaded(ctx, "blank"); err != nil {
		t.Error(err)
	}
	if w.Window("blank").Closed {
		t.Error("closed before it closed")
	}
	w.Closed("blank")
	if err := w.WaitClosed(ctx, "blank"); err != nil || !w.Window("blank").Closed {
		t.Errorf("WaitClosed: %v", err)
	}

	// OpenedOrDone: done first, then opened.
	done := make(chan struct{})
	close(done)
	if opened, err := w.OpenedOrDone(ctx, 1, done); opened || err != nil {
		t.Errorf("OpenedOrDone with done closed: %v, %v", opened, err)
	}
	w.Saw("second", "http://127.0.0.1:4002/")
	if opened, err := w.OpenedOrDone(ctx, 1, nil); !opened || err != nil {
		t.Errorf("OpenedOrDone after the second prompt: %v, %v", opened, err)
	}
	if _, err := w.Next(short, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Next for a third prompt: %v", err)
	}
}
