package bridge

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/fillgate/fillgate/internal/fill"
)

// window is a prompt window the extension opened.
type window struct {
	b      *Bridge
	id     int64
	closed chan struct{} // closed when the human closed it
	once   sync.Once     // guards closed
	mu     sync.Mutex
	shut   bool // Close was called
}

var _ fill.PromptWindow = (*window)(nil)

// OpenPrompt asks the extension to show url in a small popup window. The
// window's Closed fires when the extension reports prompt_closed for it.
// If the extension disconnects, Closed does not fire: the window may still
// be open and answerable, and the insert that follows will fail instead.
func (b *Bridge) OpenPrompt(ctx context.Context, url string) (fill.PromptWindow, error) {
	var reply promptOpenedReply
	err := b.call(ctx, "open_prompt", openPromptRequest{"open_prompt", url}, "prompt_opened", &reply)
	if err != nil {
		return nil, err
	}
	if reply.Window == nil {
		return nil, errors.New("extension: prompt_opened without a window id")
	}
	w := &window{b: b, id: *reply.Window, closed: make(chan struct{})}
	b.mu.Lock()
	b.windows[w.id] = w
	// prompt_closed may have overtaken us: it is dispatched on the port's
	// goroutine while this one was still waking up.
	if i := slices.Index(b.early, w.id); i >= 0 {
		b.early = slices.Delete(b.early, i, i+1)
		delete(b.windows, w.id)
		w.markClosed()
	}
	b.mu.Unlock()
	return w, nil
}

// windowClosed handles prompt_closed.
func (b *Bridge) windowClosed(id int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.windows[id]
	if !ok {
		if len(b.early) == maxEarly {
			b.early = b.early[1:]
		}
		b.early = append(b.early, id)
		return
	}
	delete(b.windows, id)
	w.markClosed()
}

func (w *window) markClosed() { w.once.Do(func() { close(w.closed) }) }

// Closed is closed when the human closes the window.
func (w *window) Closed() <-chan struct{} { return w.closed }

// Close asks the extension to close the window. It does nothing when the
// window is already closed or Close was called before.
func (w *window) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.shut {
		w.mu.Unlock()
		return nil
	}
	w.shut = true
	w.mu.Unlock()
	select {
	case <-w.closed:
		return nil
	default:
	}
	var reply typeOnly
	err := w.b.call(ctx, "close_prompt", closePromptRequest{"close_prompt", w.id}, "ok", &reply)
	w.b.mu.Lock()
	delete(w.b.windows, w.id)
	w.b.mu.Unlock()
	select {
	case <-w.closed:
		return nil // the human closed it meanwhile
	default:
	}
	return err
}
