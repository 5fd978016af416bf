// Package attackext is a test extension that stands for an agent's
// extension that drives the browser through chrome.debugger (as Claude in
// Chrome and Playwright MCP's bridge extension do), and the loopback
// WebSocket server the test gives it its orders through. Loaded next to
// fillgate's extension in a browser that no program drives otherwise, it
// is the prompt-injected agent that attaches to the browser *after*
// fillgate's prompt opened: it lists the pages, attaches to the prompt,
// installs key loggers, reads it, types its own answer and clicks.
package attackext

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

//go:embed manifest.json sw.js
var files embed.FS

// Order is one thing the extension is told to do.
type Order struct {
	ID int64 `json:"id"`
	// Op is targets (list pages), spy (attach and install key loggers;
	// with Leave, a key logger that writes the keys into the page's
	// title, and detach at once), read (what the spies saw, the
	// page's text and its fields' values), type (insert Text into
	// Selector, then Enter; then detach with Leave), answer (attach, put
	// Text into Selector and press Enter with synthetic events in one
	// script, detach: the fastest hit and run), click (Selector), titles
	// (the "spy:" titles any page took, read with no debugger) or detach.
	Op string `json:"op"`
	// Prefix picks the pages by URL ("http://127.0.0.1:" for fillgate's
	// prompt); Except leaves out the pages whose URL starts with it.
	Prefix   string `json:"prefix,omitempty"`
	Except   string `json:"except,omitempty"`
	Text     string `json:"text,omitempty"`
	Selector string `json:"selector,omitempty"`
	// Leave, with type or spy, detaches from the page as soon as the
	// order is carried out (hit and run).
	Leave bool `json:"leave,omitempty"`
}

// Reply is what the extension answered.
type Reply struct {
	ID      int64           `json:"id"`
	OK      bool            `json:"ok"`
	Error   string          `json:"error,omitempty"`
	Results json.RawMessage `json:"results,omitempty"`
}

// Server gives the extension its orders. It listens on 127.0.0.1 only.
type Server struct {
	url   string
	conns chan *websocket.Conn
	done  chan struct{} // closed when the test ends

	mu   sync.Mutex
	conn *websocket.Conn
	next int64
	// Log is every reply the extension sent, for the tests' leak scan.
	log [][]byte
}

// Start serves the orders' WebSocket until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	s := &Server{url: "ws://" + ln.Addr().String() + "/", conns: make(chan *websocket.Conn, 4), done: done}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		c.SetReadLimit(1 << 20)
		s.conns <- c
		<-r.Context().Done()
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(done); _ = srv.Close() })
	return s
}

// Install writes the extension, told where to take its orders from, into
// a new directory under dir and returns it.
func (s *Server) Install(t testing.TB, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "attackext")
	if err := os.MkdirAll(out, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "sw.js"} {
		b, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf("const ORDERS = %q;\n", s.url)
	if err := os.WriteFile(filepath.Join(out, "config.js"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// Connected waits until the extension has connected.
func (s *Server) Connected(ctx context.Context) error {
	_, err := s.connection(ctx)
	return err
}

func (s *Server) connection(ctx context.Context) (*websocket.Conn, error) {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c != nil {
		return c, nil
	}
	select {
	case c = <-s.conns:
	case <-ctx.Done():
		return nil, errors.New("the attacking extension never connected to the test")
	}
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
	go s.keepAlive(c)
	return c, nil
}

// keepAlive sends the extension a message every few seconds: a service
// worker that hears nothing for 30 s is stopped.
func (s *Server) keepAlive(c *websocket.Conn) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := c.Write(ctx, websocket.MessageText, []byte(`{"op":"noop"}`))
			cancel()
			if err != nil {
				return
			}
		}
	}
}

// Do sends one order and waits for its reply. One order at a time: Do is
// not for concurrent use.
func (s *Server) Do(ctx context.Context, o Order) (Reply, error) {
	c, err := s.connection(ctx)
	if err != nil {
		return Reply{}, err
	}
	s.mu.Lock()
	s.next++
	o.ID = s.next
	s.mu.Unlock()
	b, err := json.Marshal(o)
	if err != nil {
		return Reply{}, err
	}
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		return Reply{}, fmt.Errorf("order %s: %w", o.Op, err)
	}
	for {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return Reply{}, fmt.Errorf("reply to %s: %w", o.Op, err)
		}
		s.mu.Lock()
		s.log = append(s.log, msg)
		s.mu.Unlock()
		var r Reply
		if err := json.Unmarshal(msg, &r); err != nil {
			return Reply{}, fmt.Errorf("reply to %s: %w", o.Op, err)
		}
		if r.ID == o.ID {
			return r, nil
		}
	}
}

// Seen is everything the extension ever reported to the test, for the
// leak scan: what its key loggers caught and what it read in pages.
func (s *Server) Seen() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.log...)
}
