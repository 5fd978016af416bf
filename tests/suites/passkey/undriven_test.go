//go:build linux

package passkey

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
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/fill"
	webauthn "github.com/fillgate/fillgate/internal/passkey"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/pagestream"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// TestUndrivenPasskeys: lease and approval none, which fillgate never
// applies in a browser a program drives, where nothing drives the
// browser: Chromium as a person starts it (headed, on the person's
// private X display, with no remote debugging), with the extension and
// host manifest of `fillgate install`. The test never drives it: it
// reaches the site's page only through the page's own script (pageProxy),
// and the person's dialog through the X display. The agent asks with
// --no-wait, as an agent that cannot click while a command runs does:
// fillgate answers "armed" once the tab is armed, then the page's button
// is pressed, and the outcome is the audit log's.
//
// The agents' passkey for the site is added first, in a browser the test
// drives over CDP under driven = "in-page" (adding one in the undriven
// browser would need to see its tab armed, which only a program driving
// the browser could), and that browser is stopped; the undriven one
// shares the keyring, fillgate's files and the site. There, under the
// person's default driven setting (which applies only to a browser a
// program drives): each (the dialog), lease (the dialog once, then a
// notice and no dialog), none (a notice), a discoverable sign-in under
// none; with user verification required, lease and none are refused
// (only the dialog verifies the person) and each is answered. The site
// verifies every assertion and its count; the private key is nowhere but
// in its keyring item.
func TestUndrivenPasskeys(t *testing.T) {
	s := startUndriven(t)
	ours := s.site.Registrations()[0].CredentialID

	// signIn has the agent sign in, approved in the dialog when prompt,
	// and checks the page, the site's count, the UV flag (set only by
	// the dialog) and how the audit log says the use was approved.
	signIn := func(t *testing.T, prompt bool, how string) {
		t.Helper()
		count := s.site.SignCount(ours) + 1
		mark := s.audits(t)
		if got := s.pressNoWait(t, prompt); got != "welcome ada" {
			t.Fatalf("sign-in: the page says %q", got)
		}
		e := s.outcome(t, mark)
		if e.Status != fill.StatusOK || e.How != how || e.Field != fill.FieldPasskey || e.Origin != s.origin {
			t.Fatalf("the audit log says %+v; want ok, %s, on %s", e, how, s.origin)
		}
		last, n := s.lastLogin(t, ours)
		if !bytes.Equal(last.CredentialID, ours) || n != count || last.UserVerified != prompt || last.Discoverable {
			t.Fatalf("the site's last login %+v, count %d; want ours named in allowCredentials with count %d, UV %v", last, n, count, prompt)
		}
		if !prompt && s.person.Visible(s.ctx, "^[Pp]inentry") {
			t.Error("a native dialog is open for a use with no prompt")
		}
	}
	t.Run("each", func(t *testing.T) {
		s.policy("each")
		signIn(t, true, fill.HowApproved)
	})
	t.Run("lease", func(t *testing.T) {
		s.policy("lease")
		signIn(t, true, fill.HowApproved)
		signIn(t, false, fill.HowLease) // the lease: a notice, no dialog, no UV
	})
	t.Run("none", func(t *testing.T) {
		s.policy("none")
		signIn(t, false, fill.HowNone)
	})
	t.Run("discoverable, approval none", func(t *testing.T) {
		count := s.site.SignCount(ours)
		s.policy("none")
		s.setUser("")
		defer s.setUser("ada")
		mark := s.audits(t)
		if got := s.pressNoWait(t, false); got != "welcome ada" {
			t.Fatalf("discoverable sign-in: the page says %q", got)
		}
		if e := s.outcome(t, mark); e.Status != fill.StatusOK || e.How != fill.HowNone {
			t.Fatalf("the audit log says %+v; want ok, none", e)
		}
		last, n := s.lastLogin(t, ours)
		if !last.Discoverable || !bytes.Equal(last.CredentialID, ours) || last.User != "ada" || n != count+1 {
			t.Fatalf("the site's last login %+v, count %d; want ada's discoverable login with ours at %d", last, n, count+1)
		}
	})
	t.Run("user verification required", func(t *testing.T) {
		count := s.site.SignCount(ours)
		s.tab.open(s.origin + "/?uv=required")
		defer s.tab.open(s.origin + "/")
		for _, approval := range []string{"lease", "none"} {
			s.policy(approval)
			logins := len(s.site.Logins())
			mark := s.audits(t)
			if got := s.pressNoWait(t, false); got != refusedByFillgate {
				t.Fatalf("UV required under %s: the page says %q", approval, got)
			}
			if e := s.outcome(t, mark); e.Status != fill.StatusRefused || !strings.Contains(e.Detail, webauthn.ErrUVRequired.Error()) {
				t.Fatalf("UV required under %s: the audit log says %+v; want refused: %v", approval, e, webauthn.ErrUVRequired)
			}
			if len(s.site.Logins()) != logins || s.site.SignCount(ours) != count {
				t.Fatalf("UV required under %s: the site let someone in, or the count moved", approval)
			}
		}
		s.policy("each")
		signIn(t, true, fill.HowApproved)
		if last, _ := s.lastLogin(t, ours); !last.UVRequired {
			t.Fatalf("the site's last login %+v; want it under UV required", last)
		}
	})
	if n := s.site.SignCount(ours); n != 6 {
		t.Errorf("the site counts %d for the agents' passkey after six sign-ins", n)
	}
	s.leakScan(t)
}

// startUndriven starts the set of TestUndrivenPasskeys: the site behind
// its page proxy, the agents' passkey added for it in a browser the test
// drives, then stopped, and the browser nothing drives on the site's
// page, its host connected and saying that nothing drives it.
func startUndriven(t testing.TB) *set {
	s := newSet(t, "fgpku-")
	px := startPageProxy(t, s.site.URL)
	if err := s.site.AcceptOrigins(px.URL); err != nil {
		t.Fatal(err)
	}
	s.origin, s.svc = px.URL, serviceOf(t, px.URL)

	// The passkey, added in a browser the test drives, where the person
	// lets fillgate use it (driven = "in-page").
	s.driven = inPage
	s.policy("each")
	c, ct := s.startChromium(t, "driven", px.URL+"/")
	s.tab = ct
	s.enrol()
	c.Stop()
	var hs []agentsock.HostStatus
	if err := poll.Until(s.ctx, 100*time.Millisecond, func() (bool, error) {
		var err error
		hs, err = agentsock.Status(s.ctx, s.root.RunDir)
		if errors.Is(err, agentsock.ErrNoHost) {
			return true, nil
		}
		return false, err
	}); err != nil {
		t.Fatalf("the driven browser's host still runs: %v; last status %+v", err, hs)
	}

	// The browser nothing drives, on the site's page, under the person's
	// default driven setting.
	s.driven = ""
	s.policy("each")
	profile := filepath.Join(s.root.Dir, "profile")
	ext := s.install("--browser", "chromium", "--user-data-dir", profile)
	from := px.loads()
	u := browser.StartChromium(t, s.ctx, browser.ChromiumOptions{UserDataDir: profile, Extensions: []string{ext}, Env: s.env,
		Headed: true, Undriven: true, Args: []string{"--ozone-platform=x11", px.URL + "/"}})
	pt := &pageTab{t: t, ctx: s.ctx, px: px}
	if err := px.waitLoad(s.ctx, from, px.URL+"/"); err != nil {
		t.Fatalf("the site's page did not load in the browser: %v; the browser said:\n%s", err, u.Output())
	}
	undriven := func(h agentsock.HostStatus) bool {
		return h.Extension.Connected && h.Drive != nil && !h.Drive.Driven && h.ActiveTab != nil && h.ActiveTab.Origin == px.URL
	}
	if hs, err := hostwait.Until(s.ctx, s.root.RunDir, hostwait.One(undriven)); err != nil {
		b, _ := json.Marshal(hs)
		t.Fatalf("want one host, its extension connected, nothing driving the browser and the site's tab active: %v; last status %s", err, b)
	}
	s.tab = pt
	return s
}

// pressNoWait starts the agent's sign-in with --no-wait, approves it in
// the native dialog when prompt, waits for the run's "armed" and presses
// the page's sign-in button: it returns what the page then says.
func (s *set) pressNoWait(t testing.TB, prompt bool) string {
	t.Helper()
	r := s.run(t, "fill", "--service", s.svc, "--field", "passkey", "--no-wait", "--json")
	if prompt {
		s.approve(t, r)
	}
	s.armed(t, r)
	return s.click("signin")
}

// audits is how many entries the audit log holds now.
func (s *set) audits(t testing.TB) int {
	t.Helper()
	es, err := audit.Open(s.root.StateDir).Recent(0)
	if err != nil {
		t.Fatal(err)
	}
	return len(es)
}

// outcome waits until the audit log holds an outcome after its first
// mark entries (the host records it when the request ends, after its
// early answer "armed") and returns the newest.
func (s *set) outcome(t testing.TB, mark int) fill.AuditEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
	defer cancel()
	var es []fill.AuditEntry
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		var err error
		es, err = audit.Open(s.root.StateDir).Recent(0)
		return len(es) > mark && es[len(es)-1].Status != fill.StatusArmed, err
	}); err != nil {
		t.Fatalf("the audit log holds no outcome after entry %d: %v (%+v)", mark, err, es)
	}
	if len(es) != mark+1 {
		t.Errorf("the audit log holds %d new entries; want the one outcome: %+v", len(es)-mark, es[mark:])
	}
	return es[len(es)-1]
}

// pageTab is the site's tab in a browser nothing drives, reached only
// through the page's own script (pageProxy).
type pageTab struct {
	t   testing.TB
	ctx context.Context
	px  *pageProxy
}

func (p *pageTab) eval(expr string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	v, err := p.px.eval(ctx, expr)
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

func (p *pageTab) open(url string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	from := p.px.loads()
	if err := p.px.stream.Send(ctx, pageOrder{Goto: url}); err != nil {
		p.t.Fatal(err)
	}
	if err := p.px.waitLoad(ctx, from, url); err != nil {
		p.t.Fatal(err)
	}
}

// armed waits for the --no-wait run r to answer "armed" (exit 0): the
// tab is armed. Nothing else tells a program that does not drive the
// browser.
func (p *pageTab) armed(t testing.TB, r *fgrun.Run) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	res, code, err := r.Result(ctx)
	if err != nil || res.Status != fill.StatusArmed || code != 0 {
		t.Fatalf("fill --no-wait: %+v, exit %d, %v; want armed, exit 0; it printed %s%s", res, code, err, r.Stdout(), r.Stderr())
	}
}

// pageProxy serves the site's pages on an origin of its own,
// http://localhost:port, through a reverse proxy that adds a control
// script to each page: the page's own script, as a site's script is,
// which runs in the page what the test sends it and posts back the
// result, and goes to another page of the site when told to. It can do
// nothing a site's own script cannot: nothing of it drives the browser.
// The newest page's control stream takes the orders.
type pageProxy struct {
	URL string
	// mux serves the proxy's own paths; a test may add pages of its own.
	mux *http.ServeMux

	stream pagestream.Stream[pageOrder] // the pages' control streams

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each report
	replies map[int]pageReply
	loaded  []string // the pages that opened their control stream, in turn
	nextID  int
}

// pageOrder is what the page's control script is told: evaluate Expr
// (and reply with ID), or go to Goto.
type pageOrder struct {
	ID   int    `json:"id,omitempty"`
	Expr string `json:"expr,omitempty"`
	Goto string `json:"goto,omitempty"`
}

// pageReply is what the control script posts: a page that loaded (its
// location), or the value of an order's expression (or why it threw).
type pageReply struct {
	Load  string `json:"load"`
	ID    int    `json:"id"`
	Value string `json:"value"`
	Error string `json:"error"`
}

// pageControl is the control script: evaluated expressions are awaited
// and turned into strings, as the flow's tab.eval wants them. A page
// closes its control stream as it is left: a page kept in the
// back/forward cache would hold its stream open, and Chromium opens at
// most six connections to one host, so after a few rounds the next page's
// stream waited for a free one and the page was never seen to load.
const pageControl = `<script>
(() => {
  const reply = (m) => fetch("/__test/reply", { method: "POST", keepalive: true,
    headers: { "Content-Type": "application/json" }, body: JSON.stringify(m) }).catch(() => {});
  const control = new EventSource("/__test/control");
  addEventListener("pagehide", () => control.close());
  let opened = false;
  control.onopen = () => { if (!opened) { opened = true; reply({ load: location.href }); } };
  control.onmessage = async (m) => {
    const o = JSON.parse(m.data);
    if (o.goto) { control.close(); location.href = o.goto; return; }
    try { reply({ id: o.id, value: String(await (0, eval)(o.expr)) }); }
    catch (e) { reply({ id: o.id, error: String(e) }); }
  };
})();
</script>`

// startPageProxy serves the site at origin through the proxy until the
// test ends.
func startPageProxy(t testing.TB, origin string) *pageProxy {
	t.Helper()
	target, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	p := &pageProxy{changed: make(chan struct{}), replies: map[int]pageReply{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /__test/control", func(w http.ResponseWriter, r *http.Request) { p.stream.Serve(w, r, true) })
	mux.HandleFunc("POST /__test/reply", p.reply)
	mux.Handle("/", pagestream.Proxy(target, func(body []byte) []byte {
		return bytes.Replace(body, []byte("</body>"), []byte(pageControl+"</body>"), 1)
	}))
	p.mux = mux
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	p.URL = fmt.Sprintf("http://localhost:%d", l.Addr().(*net.TCPAddr).Port)
	return p
}

// reply keeps what a page posted.
func (p *pageProxy) reply(w http.ResponseWriter, r *http.Request) {
	var m pageReply
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m); err != nil {
		http.Error(w, "bad reply", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	if m.Load != "" {
		p.loaded = append(p.loaded, m.Load)
	} else {
		p.replies[m.ID] = m
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// eval has the newest page evaluate expr and returns the result.
func (p *pageProxy) eval(ctx context.Context, expr string) (string, error) {
	p.mu.Lock()
	p.nextID++
	id := p.nextID
	p.mu.Unlock()
	if err := p.stream.Send(ctx, pageOrder{ID: id, Expr: expr}); err != nil {
		return "", err
	}
	for {
		p.mu.Lock()
		m, ok := p.replies[id]
		changed := p.changed
		p.mu.Unlock()
		if ok {
			if m.Error != "" {
				return "", fmt.Errorf("the page's script threw evaluating %s: %s", expr, m.Error)
			}
			return m.Value, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", fmt.Errorf("the page did not answer %s: %w", expr, ctx.Err())
		}
	}
}

// loads is how many pages have opened their control stream so far.
func (p *pageProxy) loads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.loaded)
}

// waitLoad waits for a page at url to open its control stream, the
// from-th or a later one.
func (p *pageProxy) waitLoad(ctx context.Context, from int, url string) error {
	for {
		p.mu.Lock()
		loaded, changed := p.loaded[from:], p.changed
		p.mu.Unlock()
		for _, l := range loaded {
			if l == url {
				return nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("no page at %s loaded (pages since: %v): %w", url, loaded, ctx.Err())
		}
	}
}
