package pagestream

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type order struct {
	ID int `json:"id"`
}

// open opens a page's stream on srv and returns its events, one line each.
func open(t *testing.T, ctx context.Context, url string) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- l
			}
		}
		close(lines)
	}()
	return lines
}

func TestTheNewestTakingStreamGetsTheOrder(t *testing.T) {
	var s Stream[order]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Serve(w, r, r.URL.Query().Get("take") == "1")
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	// Sent before any page is open: it waits for one.
	sent := make(chan error, 1)
	go func() { sent <- s.Send(ctx, order{ID: 1}) }()
	first := open(t, ctx, srv.URL+"?take=1")
	if got := <-first; got != `{"id":1}` {
		t.Fatalf("the first page got %q", got)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	idle := open(t, ctx, srv.URL+"?take=0")
	newest := open(t, ctx, srv.URL+"?take=1")
	// Each stream takes over before its response starts.
	if err := s.Send(ctx, order{ID: 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-newest:
		if got != `{"id":2}` {
			t.Fatalf("the newest page got %q", got)
		}
	case got := <-first:
		t.Fatalf("an older page got %q", got)
	case got := <-idle:
		t.Fatalf("a page that takes no orders got %q", got)
	case <-ctx.Done():
		t.Fatal("no page got the order")
	}
}

func TestSendEndsWithContext(t *testing.T) {
	var s Stream[order]
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.Send(ctx, order{}); err == nil {
		t.Fatal("Send with no page open returned no error")
	}
}
