// Package promptwatch records the prompt windows a real browser opens,
// from the browser's own events: Chromium's CDP target events or
// Firefox's WebDriver BiDi browsing-context events. A test waits on it
// for the nth prompt to open, load and close, and asks it whether any
// prompt opened at all, without polling the browser.
package promptwatch

import (
	"context"
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"time"
)

// Watch is the record of one browser's prompt windows, in the order they
// opened. Its methods may be called from any goroutine.
type Watch struct {
	mu       sync.Mutex
	isPrompt func(url string) bool
	opened   []string           // window ids, in the order they opened
	prompts  map[string]*Window // by window id
	changed  chan struct{}      // closed and replaced on every change
}

// Window is what the browser reported of one prompt window.
type Window struct {
	URL string // the last prompt URL the browser reported
	// Origin is the scheme and host of the first (http://127.0.0.1:port):
	// never the URL itself, which holds the prompt's nonce.
	Origin string
	At     time.Time // when the browser first reported it at a prompt URL
	Loaded bool      // BiDi only
	Closed bool
}

// New makes an empty record in which a window is a prompt once the
// browser reports it at a URL isPrompt accepts. Feed it with Saw, Loaded
// and Closed (CDP and BiDi do).
func New(isPrompt func(url string) bool) *Watch {
	return &Watch{isPrompt: isPrompt, prompts: map[string]*Window{}, changed: make(chan struct{})}
}

// OnLoopbackBut accepts the URLs of fillgate's loopback prompt: a page
// on 127.0.0.1 that is not under site (the origin of a login site there,
// such as http://127.0.0.1:port).
func OnLoopbackBut(site string) func(url string) bool {
	return func(url string) bool {
		return strings.HasPrefix(url, "http://127.0.0.1:") && !strings.HasPrefix(url, site+"/")
	}
}

// IsPrompt reports whether url is a prompt's.
func (w *Watch) IsPrompt(url string) bool { return w.isPrompt(url) }

// Saw records that the browser reports the top-level window id (a page
// target, a top-level browsing context) at url: a prompt from the first
// time url is a prompt's.
func (w *Watch) Saw(id, url string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saw(id, url)
}

// saw must be called with w.mu held.
func (w *Watch) saw(id, url string) {
	if !w.isPrompt(url) {
		return
	}
	p, ok := w.prompts[id]
	if !ok {
		p = &Window{At: time.Now()}
		if u, err := neturl.Parse(url); err == nil {
			p.Origin = u.Scheme + "://" + u.Host
		}
		w.prompts[id] = p
		w.opened = append(w.opened, id)
	}
	p.URL = url
	w.notify()
}

// Loaded records that the top-level window id finished loading url.
func (w *Watch) Loaded(id, url string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saw(id, url)
	if p := w.prompts[id]; p != nil && w.isPrompt(url) {
		p.Loaded = true
		w.notify()
	}
}

// Closed records that the window id is gone.
func (w *Watch) Closed(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.prompts[id]; p != nil {
		p.Closed = true
		w.notify()
	}
}

// notify must be called with w.mu held.
func (w *Watch) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Count is how many prompts have opened so far.
func (w *Watch) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.opened)
}

// await waits until cond, called with w.mu held, holds, or until done
// (which may be nil) is closed: it reports which.
func (w *Watch) await(ctx context.Context, done <-chan struct{}, what string, cond func() bool) (bool, error) {
	for {
		w.mu.Lock()
		ok, changed := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("%s: %w", what, ctx.Err())
		case <-done:
			return false, nil
		case <-changed:
		}
	}
}

// Next waits for prompt number n (0-based) to open and returns its
// window id.
func (w *Watch) Next(ctx context.Context, n int) (string, error) {
	if _, err := w.await(ctx, nil, "no prompt opened", func() bool { return len(w.opened) > n }); err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opened[n], nil
}

// OpenedOrDone waits until prompt number n (0-based) opens, and reports
// true, or until done is closed first, and reports false.
func (w *Watch) OpenedOrDone(ctx context.Context, n int, done <-chan struct{}) (bool, error) {
	return w.await(ctx, done, "no prompt opened", func() bool { return len(w.opened) > n })
}

// WaitLoaded waits for prompt id's page to load (or the window to close).
// Only BiDi reports loads.
func (w *Watch) WaitLoaded(ctx context.Context, id string) error {
	_, err := w.await(ctx, nil, "the prompt never loaded", func() bool {
		p := w.prompts[id]
		return p != nil && (p.Loaded || p.Closed)
	})
	return err
}

// WaitClosed waits for prompt id to close.
func (w *Watch) WaitClosed(ctx context.Context, id string) error {
	_, err := w.await(ctx, nil, "the prompt stayed open", func() bool {
		p := w.prompts[id]
		return p != nil && p.Closed
	})
	return err
}

// Window is what the browser reported of prompt id (the zero Window for
// an id that is no prompt's).
func (w *Watch) Window(id string) Window {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.prompts[id]; p != nil {
		return *p
	}
	return Window{}
}
