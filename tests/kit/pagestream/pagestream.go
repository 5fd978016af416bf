// Package pagestream sends a test's orders to a page through the page's
// own script: the page opens a stream of server-sent events, and each
// order arrives on it as one JSON event. So a test steers a page of a
// browser that nothing drives, with nothing a site's own script could not
// do. The newest stream that takes orders gets them. Proxy puts the
// test's script into a site's pages.
package pagestream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// Stream hands orders of type T to the newest stream that takes them. The zero
// value has no page yet and is ready to use.
type Stream[T any] struct {
	mu     sync.Mutex
	orders chan T        // the newest taking stream's orders, nil when none
	opened chan struct{} // closed when a stream takes orders
}

// Serve answers a page's request for its stream and sends it each order
// given to it until the request ends. With take, the stream becomes the
// one that takes orders; without, it only stays open (a page the test
// does not steer).
func (s *Stream[T]) Serve(w http.ResponseWriter, r *http.Request, take bool) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "no streaming", http.StatusInternalServerError)
		return
	}
	orders := make(chan T, 4)
	if take {
		s.mu.Lock()
		s.orders = orders
		if s.opened != nil {
			close(s.opened)
			s.opened = nil
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			if s.orders == orders {
				s.orders = nil
			}
			s.mu.Unlock()
		}()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case o := <-orders:
			b, err := json.Marshal(o)
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			flusher.Flush()
		}
	}
}

// Send gives the newest taking stream the order, waiting (within ctx)
// for a page to open one. An order handed to a stream whose page then
// goes is lost: the caller waits for the page's answer, not for Send.
func (s *Stream[T]) Send(ctx context.Context, o T) error {
	for {
		s.mu.Lock()
		orders := s.orders
		if orders == nil && s.opened == nil {
			s.opened = make(chan struct{})
		}
		opened := s.opened
		s.mu.Unlock()
		if orders != nil {
			select {
			case orders <- o:
				return nil
			case <-ctx.Done():
				return fmt.Errorf("no page took the order: %w", ctx.Err())
			}
		}
		select {
		case <-opened:
		case <-ctx.Done():
			return fmt.Errorf("no page is open for the order: %w", ctx.Err())
		}
	}
}
