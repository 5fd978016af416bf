//go:build linux

package undriven

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/loginserver"
	"github.com/fillgate/fillgate/tests/kit/pagestream"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// site is the login site in the person's browser: tests/kit/loginserver's
// pages (which record every request they get, and check the password),
// served on an origin of their own through a proxy that adds what a test
// with no DevTools connection needs. The password field gets autofocus,
// and every page gets a small script of its own (the site's, not the
// test's browser tools) that reports, in booleans and ids only, where the
// page is, what has the focus and whether its password field is empty,
// and that goes to another page of the site when told to. Nothing in it
// can read or drive the browser: it is the page's own script, and it
// never reads a field's value.
//
// The site's pages run in another browser too: fillgate's clean room,
// where a browser a program drives is logged in to, loads the agent's
// page again in a headless browser the host starts, and the script runs
// there as a site's script does. Only the person's browser's pages are
// the open page: a page's control stream says which page it is, and the
// site asks the system which process holds the stream's connection
// (connFromBrowser). Another browser's pages get no order, and what they
// report is kept apart (foreign).
type site struct {
	// URL is the site's origin, http://127.0.0.1:port; the service is
	// its host and port.
	URL string
	// Login is the login server behind the proxy.
	Login *loginserver.Server

	addr string // the proxy's listening address, ip:port

	stream pagestream.Stream[order] // the pages' control streams

	mu      sync.Mutex
	browser func(client string) (bool, error) // whether a connection is the person's browser's; nil until it runs
	pages   map[string]bool                   // the pages that opened a control stream: whether each is the person's browser's
	reports []pageState
	foreign []pageState   // what pages of another browser reported
	changed chan struct{} // closed and replaced at each report
	nextID  int
}

// order is what the site's page script is told: report its state (with
// ID), or go to URL.
type order struct {
	Op  string `json:"op"`
	ID  int    `json:"id,omitempty"`
	URL string `json:"url,omitempty"`
}

// pageState is what the page script reports.
type pageState struct {
	// Page is the page's own random id, which its control stream gives
	// too.
	Page string `json:"page"`
	// Why is "load" (the page just connected) or the order's id.
	Why string `json:"why"`
	// Path and Query are the page's location.
	Path  string `json:"path"`
	Query string `json:"query"`
	// Focused is the id of the focused element ("" for none).
	Focused string `json:"focused"`
	// Left: the page has no password field (id pw), or it is empty.
	Left bool `json:"left"`
}

// controlScript is the site's own script, added to every page: it keeps
// a control stream open, reports its state once that is open and
// whenever asked, and follows goto orders. A page closes its stream as it
// is left: one kept in the back/forward cache would hold one of the six
// connections Chromium opens to a host (tests/suites/passkey's pages
// ran out of them).
const controlScript = `<script>
(() => {
  const page = Math.random().toString(36).slice(2) + Date.now().toString(36);
  const report = (why) => fetch("/__site/report", { method: "POST", keepalive: true,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ page, why, path: location.pathname, query: location.search,
      focused: document.activeElement?.id ?? "", left: window.fg.left("pw") }) }).catch(() => {});
  const control = new EventSource("/__site/control?page=" + page);
  addEventListener("pagehide", () => control.close());
  let opened = false;
  control.onopen = () => { if (!opened) { opened = true; report("load"); } };
  control.onmessage = (m) => {
    const o = JSON.parse(m.data);
    if (o.op === "report") report(String(o.id));
    if (o.op === "goto") { control.close(); location.href = o.url; }
  };
})();
</script>`

// startSite starts a login server and the site's proxy in front of it,
// both on 127.0.0.1, until the test ends.
func startSite(t testing.TB) *site {
	t.Helper()
	s := &site{Login: loginserver.Start(t, "127.0.0.1"), changed: make(chan struct{}), pages: map[string]bool{}}
	target, err := url.Parse(s.Login.URL)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /__site/control", s.control)
	mux.HandleFunc("POST /__site/report", s.report)
	mux.Handle("/", pagestream.Proxy(target, addScript))
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Not httptest's server: its Close waits for every request to end,
	// and a page's control stream ends only when the page goes.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.addr = l.Addr().String()
	s.URL = "http://" + s.addr
	return s
}

// inBrowser has the site tell the person's browser, the process
// browserPID, from another by its connections: its pages are the open
// page from then on.
func (s *site) inBrowser(browserPID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.browser = func(client string) (bool, error) { return connFromBrowser(client, s.addr, browserPID) }
}

// fromBrowser reports whether the connection from client is the person's
// browser's. It waits for the browser to run (inBrowser), and, within
// ctx, for the connection's process to show.
func (s *site) fromBrowser(ctx context.Context, client string) (bool, error) {
	for {
		s.mu.Lock()
		browser := s.browser
		s.mu.Unlock()
		if browser != nil {
			ours, err := browser(client)
			if !errors.Is(err, errNoOwner) {
				return ours, err
			}
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("whose is the connection from %s: %w", client, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Service is the service the agent names for the site: its host and port.
func (s *site) Service() string { return strings.TrimPrefix(s.URL, "http://") }

// addScript gives the password field autofocus and adds the control
// script to an HTML page.
func addScript(body []byte) []byte {
	body = bytes.Replace(body, []byte("<input id=pw "), []byte("<input id=pw autofocus "), 1)
	return bytes.Replace(body, []byte("</body>"), []byte(controlScript+"</body>"), 1)
}

// control is the page's control stream (server-sent events): the newest
// stream of a page of the person's browser is the one orders go to.
// Another browser's page keeps its stream, idle.
func (s *site) control(w http.ResponseWriter, r *http.Request) {
	wctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	ours, err := s.fromBrowser(wctx, r.RemoteAddr)
	cancel()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.pages[r.URL.Query().Get("page")] = ours
	s.mu.Unlock()
	s.stream.Serve(w, r, ours)
}

// report keeps what the page reported.
func (s *site) report(w http.ResponseWriter, r *http.Request) {
	var st pageState
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&st); err != nil {
		http.Error(w, "bad report", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	if !s.pages[st.Page] {
		s.foreign = append(s.foreign, st)
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.reports = append(s.reports, st)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// send gives the open page an order, waiting (within ctx) for a page to
// be open.
func (s *site) send(ctx context.Context, o order) error {
	if err := s.stream.Send(ctx, o); err != nil {
		return fmt.Errorf("the order %s: %w", o.Op, err)
	}
	return nil
}

// await waits for a report that ok accepts, among those from index from
// on, and returns it.
func (s *site) await(ctx context.Context, from int, ok func(pageState) bool) (pageState, error) {
	for {
		s.mu.Lock()
		reports, changed := s.reports[from:], s.changed
		s.mu.Unlock()
		for _, r := range reports {
			if ok(r) {
				return r, nil
			}
		}
		from += len(reports)
		select {
		case <-changed:
		case <-ctx.Done():
			return pageState{}, ctx.Err()
		}
	}
}

// since returns the reports from index from on.
func (s *site) since(from int) []pageState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pageState(nil), s.reports[from:]...)
}

// others returns what pages of another browser than the person's
// reported so far.
func (s *site) others() []pageState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]pageState(nil), s.foreign...)
}

// mark is the index the next report will have.
func (s *site) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reports)
}

// state asks the open page for its state now. An order can be lost to a
// page that is going away: the caller asks again.
func (s *site) state(ctx context.Context) (pageState, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	s.mu.Lock()
	s.nextID++
	n := s.nextID
	s.mu.Unlock()
	id := strconv.Itoa(n)
	from := s.mark()
	if err := s.send(ctx, order{Op: "report", ID: n}); err != nil {
		return pageState{}, err
	}
	st, err := s.await(ctx, from, func(p pageState) bool { return p.Why == id })
	if err != nil {
		return pageState{}, fmt.Errorf("the page did not report its state: %w", err)
	}
	return st, nil
}

// loginReady waits until the open page is the login page (query q, which
// tells a fresh load from the one before) with its password field focused
// and empty.
func (s *site) loginReady(ctx context.Context, q string) (pageState, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var last pageState
	err := poll.Until(ctx, 100*time.Millisecond, func() (bool, error) {
		st, err := s.state(ctx)
		if err == nil {
			last = st
		}
		return st.Path == "/classic" && st.Query == q && st.Focused == "pw" && st.Left, err
	})
	if err != nil {
		return last, fmt.Errorf("the login page is not ready (last state %+v): %w", last, err)
	}
	return last, nil
}

// openLogin has the open page go to a fresh login page and waits until
// its password field has the focus.
func (s *site) openLogin(ctx context.Context) error {
	s.mu.Lock()
	s.nextID++
	q := "?n=" + strconv.Itoa(s.nextID)
	s.mu.Unlock()
	if err := s.send(ctx, order{Op: "goto", URL: s.URL + "/classic" + q}); err != nil {
		return err
	}
	_, err := s.loginReady(ctx, q)
	return err
}
