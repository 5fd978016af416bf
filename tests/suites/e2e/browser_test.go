//go:build linux

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/loopback"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
)

// testBrowser is one real browser with the extension and the host it
// started, as the scenarios drive it: Chromium over CDP (chromium) and
// Firefox ESR over WebDriver BiDi (firefox). What the two share is in
// their session.
type testBrowser interface {
	// session is the part both browsers share.
	session() *browserSession
	// open opens url in a new tab in front and waits for it to load; the
	// tab closes when the test ends.
	open(t testing.TB, url string) page
	// awaitPrompt waits for prompt number n (0-based) to open and be ready
	// for typing, with its field focused.
	awaitPrompt(t testing.TB, n int) prompt
	// closeWindow closes the window id (a prompt's), as the person
	// closing it would.
	closeWindow(t testing.TB, id string)
	// pageURLs lists the URLs of the browser's open top-level pages.
	pageURLs(t testing.TB) []string
	// setPaused flips the pause switch in the extension's toolbar popup,
	// as the person would, and waits until the host has heard of it.
	setPaused(t *testing.T, paused bool)
	// stop stops the browser, which flushes its profile, and returns what
	// it printed.
	stop() (output string)
}

// page is a page the person has open (a tab, or a frame in it).
type page interface {
	// eval evaluates a boolean expression in the page's own world.
	eval(expr string) bool
	// holds reports whether fn, a function declaration run in the page's
	// own world, returns true for the secret. The comparison happens in
	// the page; only the boolean comes back.
	holds(fn string, secret []byte) bool
	// focus focuses the element expr evaluates to, as a click into it
	// would, once the page shows it.
	focus(expr string)
	// navigate loads url in the page, as the person would, and waits for
	// it to load.
	navigate(url string)
	// waitFor waits until the boolean expression expr holds in the page,
	// which may be loading meanwhile.
	waitFor(expr string)
	// goBack goes back in the tab's history, as the person pressing Back
	// would, and waits until the page with field id shows again.
	goBack(id string)
	// frame is the frame (of any depth, from the same site or another)
	// whose URL starts with prefix.
	frame(prefix string) page
	// click clicks the left mouse button at (x, y) of the page's viewport.
	click(x, y float64)
}

// prompt is the prompt popup, as the person sees it.
type prompt interface {
	// windowID is the prompt window's id in the prompt watch.
	windowID() string
	// says checks that the prompt's text holds each of texts.
	says(texts ...string)
	// looksRight checks the prompt, still empty, at the popup's size: the
	// person sees all of it.
	looksRight(t testing.TB)
	// typeSecret types the secret into the prompt's focused field, key by
	// key.
	typeSecret(secret []byte)
	// enter presses Enter in the prompt.
	enter()
	// send types the secret and presses Enter, as the person would.
	send(secret []byte)
	// clickCancel clicks the prompt's Cancel button with the mouse.
	clickCancel()
}

// browserSession is what both browsers share: the rig, the login pages on two
// loopback origins, the host serving the extension, the prompt watch and
// every scenario's secret.
type browserSession struct {
	*rig
	ctx        context.Context
	browserPID int
	origin1    string // http://127.0.0.1:port
	origin2    string // http://127.0.0.2:port, another site
	// lookalike is origin1's server under the name
	// http://github.com.localhost:port, which both browsers resolve to
	// loopback themselves.
	lookalike string
	host      agentsock.HostStatus // the host serving the extension now
	prompts   *promptwatch.Watch
	secrets   []scanned // every scenario's secret, for the final scan
	// hostKilled: a test killed a host of this browser. Its clean rooms'
	// browsers died with it, and their profiles stay for the next room
	// to sweep (finish).
	hostKilled bool
}

// scanned is a secret the finish scan looks for.
type scanned struct {
	value       []byte
	owner       string // the test that made it, named by a leak
	inTextField bool   // left in a text field: see leftInTextField
}

// newSession serves the login pages on two loopback origins, each framing
// the other's in /frame-other, for a browser in the rig r.
func newSession(t testing.TB, ctx context.Context, r *rig) *browserSession {
	t.Helper()
	s := &browserSession{rig: r, ctx: ctx}
	l1, o1 := loopback.Listen(t, "127.0.0.1")
	l2, o2 := loopback.Listen(t, "127.0.0.2")
	s.origin1, s.origin2 = o1, o2
	s.lookalike = strings.Replace(o1, "127.0.0.1", "github.com.localhost", 1)
	loopback.Serve(t, l1, loginPages(o2))
	loopback.Serve(t, l2, loginPages(o1))
	return s
}

// isPrompt is the prompt watch's test: a page on 127.0.0.1 that is not a
// login page of this session.
func (s *browserSession) isPrompt() func(url string) bool {
	return promptwatch.OnLoopbackBut(s.origin1)
}

// secret makes the random secret of one scenario; finish scans for it.
func (s *browserSession) secret(t testing.TB) []byte {
	sec := leakscan.NewSecret(t)
	s.secrets = append(s.secrets, scanned{value: sec, owner: t.Name()})
	return sec
}

// leftInTextField marks the secret the scenario made last as one it
// leaves in a text field with --then none, as the agent asked. Chromium
// keeps a text field's value (not a password field's) in the page state
// it saves for session restore, as it keeps anything typed there: within
// about a second of the insert, in the profile's Sessions/ files. That is
// the browser's, documented in docs/security.md ("Then none"), so the
// finish scan passes over Chromium's Sessions/ for such a secret, and
// only for it; every other file, and every file of fillgate, is scanned.
func (s *browserSession) leftInTextField() {
	s.secrets[len(s.secrets)-1].inTextField = true
}

// codeSecret is a random one-time code of n letters and digits, the
// secret of one scenario.
func (s *browserSession) codeSecret(t testing.TB, n int) []byte {
	t.Helper()
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	code := make([]byte, n)
	for i := range code {
		code[i] = alphabet[randIndex(t, len(alphabet))]
	}
	s.secrets = append(s.secrets, scanned{value: code, owner: t.Name()})
	return code
}

// randIndex is a uniformly random index below n.
func randIndex(t testing.TB, n int) int {
	t.Helper()
	var b [1]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		if int(b[0]) < 256/n*n {
			return int(b[0]) % n
		}
	}
}

// request runs `fillgate fill --json` with args as the agent. It returns
// the run and how many prompts had opened before it, for awaitPrompt and
// noPrompt.
func (s *browserSession) request(t testing.TB, args ...string) (*agent, int) {
	t.Helper()
	n := s.prompts.Count()
	return s.fill(t, s.ctx, args...), n
}

// loginFocused opens the password page of the first origin in b with its
// password field focused, as the person has it when the agent asks.
func loginFocused(t testing.TB, b testBrowser) page {
	t.Helper()
	tb := b.open(t, b.session().origin1+"/password")
	tb.focus(pw)
	return tb
}

// ask runs `fillgate fill --json` with args as the agent and waits for
// the prompt it opens in b.
func ask(t testing.TB, b testBrowser, args ...string) (*agent, prompt) {
	t.Helper()
	a, n := b.session().request(t, args...)
	return a, b.awaitPrompt(t, n)
}

// outcome waits for the request a to end and returns its result and exit
// code, once the checks every request shares (check) have run.
func (s *browserSession) outcome(t *testing.T, secret []byte, a *agent) (fill.Result, int) {
	t.Helper()
	res, code := a.result(t, s.ctx)
	s.check(t, secret, a, res)
	return res, code
}

// check runs the checks every scenario shares: the agent side holds no
// trace of the secret (nor does any of the browser's processes' command
// line or environment), the host is the one serving since the browser
// started (or since the last restart a scenario made), and the audit
// log's newest entry is this request's outcome.
func (s *browserSession) check(t *testing.T, secret []byte, a *agent, res fill.Result) {
	t.Helper()
	st := s.hostStatus(t, s.ctx)
	if st.PID != s.host.PID {
		t.Errorf("the host restarted: pid %d, was %d", st.PID, s.host.PID)
	}
	s.scan(t, secret, a, st.PID)
	s.audited(t, res)
}

// scan looks for the secret in everything the agent side of one request
// produced (rig.scanAgentSide; the host's process only while it runs:
// hostPID not 0) and in the command line and environment of every
// process of the browser.
func (s *browserSession) scan(t *testing.T, secret []byte, a *agent, hostPID int) {
	t.Helper()
	if hostPID != 0 {
		s.scanAgentSide(t, secret, a, hostPID, s.browserPID)
	} else {
		s.scanAgentOutput(t, secret, a)
		leakscan.Process(t, secret, os.Getpid())
	}
	for _, p := range descendants(s.browserPID) {
		leakscan.Process(t, secret, p)
	}
}

// audited checks that the audit log's newest entry is res's outcome.
func (s *browserSession) audited(t *testing.T, res fill.Result) {
	t.Helper()
	if e := s.lastAudit(t); e.Status != res.Status || e.Service != res.Service || e.Origin != res.Origin || e.Detail != res.Detail {
		t.Errorf("the audit log's last entry %+v does not match the result %+v", e, res)
	}
}

// closed checks that the prompt window is gone once the request ended.
func (s *browserSession) closed(t *testing.T, p prompt) {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	if err := s.prompts.WaitClosed(ctx, p.windowID()); err != nil {
		t.Error(err)
	}
}

// noPrompt checks that no prompt opened in b since there were n, neither
// in the browser's events so far nor among its open pages.
func noPrompt(t *testing.T, b testBrowser, n int) {
	t.Helper()
	s := b.session()
	for _, url := range b.pageURLs(t) {
		if s.prompts.IsPrompt(url) {
			t.Errorf("a prompt is open: %s", url)
		}
	}
	if got := s.prompts.Count(); got != n {
		t.Errorf("%d prompt(s) opened; want none", got-n)
	}
}

// refusedAtOnce opens url in b, focuses the element focus evaluates to,
// asks for a password for service, and expects a refusal whose detail
// holds detail, with no prompt and nothing typed into the page. It
// returns the result.
func refusedAtOnce(t *testing.T, b testBrowser, url, focus, service, detail string) fill.Result {
	t.Helper()
	s := b.session()
	secret := s.secret(t)
	tb := b.open(t, url)
	tb.focus(focus)
	a, n := s.request(t, "--service", service)
	res, code := s.outcome(t, secret, a)
	wantResult(t, res, code, fill.StatusRefused, service, fill.FieldPassword, detail)
	noPrompt(t, b, n)
	untouched(t, tb)
	return res
}

// untouched checks that the page saw no input, change or submit event and
// that all its inputs are empty.
func untouched(t testing.TB, tb page) {
	t.Helper()
	if !tb.eval(untouchedExpr) {
		t.Errorf("the page saw input or holds a value")
	}
}

// finish stops b (which flushes its profile), checks that the host exited
// with it and that no clean room outlived it, and scans the browser's
// output and every file under the temp root (the profile, HOME and the XDG
// dirs, the clean rooms' profiles among them) for every scenario's secret.
func finish(t testing.TB, b testBrowser) {
	t.Helper()
	s := b.session()
	output := b.stop()
	waitGone(t, s.ctx, s.host.PID, "the host")
	s.noRoomLeft(t)
	_, inFirefox := b.(*firefox)
	for _, sec := range s.secrets {
		named := ownedBy{t, sec.owner} // a leak names the test whose secret it is
		leakscan.Bytes(named, sec.value, "the browser's output", []byte(output))
		skip := func(string) bool { return false }
		if sec.inTextField && !inFirefox {
			skip = chromiumSessionFile
		}
		if n := leakscan.DirsExcept(named, sec.value, skip, s.root); n < 20 {
			t.Errorf("the leak scan read only %d files under %s", n, s.root)
		}
		clear(sec.value)
	}
}

// noRoomLeft checks, once the host has gone, that no clean room's browser
// runs (a room dies with its request, and one kept ready with its host)
// and, unless a test killed a host (whose rooms' profiles the next room
// sweeps), that no room's profile is left in the runtime dir.
func (s *browserSession) noRoomLeft(t testing.TB) {
	t.Helper()
	rooms := filepath.Join(s.runDir, "rooms")
	flag := []byte("--user-data-dir=" + rooms + string(filepath.Separator))
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	var running []int
	if poll.Until(ctx, 100*time.Millisecond, func() (bool, error) {
		running = nil
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(cmdline, flag) {
				running = append(running, pid)
			}
		}
		return len(running) == 0, nil
	}) != nil {
		t.Errorf("clean rooms' browsers still run after the host exited: pids %v", running)
	}
	if s.hostKilled {
		return
	}
	if entries, err := os.ReadDir(rooms); err == nil && len(entries) > 0 {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		t.Errorf("clean rooms' profiles left behind in %s: %v", rooms, names)
	}
}

// chromiumSessionFile reports whether path is in a Chromium profile's
// Sessions/ folder (session and tab restore).
func chromiumSessionFile(path string) bool {
	return filepath.Base(filepath.Dir(path)) == "Sessions" && filepath.Base(filepath.Dir(filepath.Dir(path))) == "Default"
}

// ownedBy is a test whose errors say whose secret they are about.
type ownedBy struct {
	testing.TB
	owner string
}

func (o ownedBy) Errorf(format string, args ...any) {
	o.TB.Helper()
	o.TB.Errorf("%s (the secret of %s)", fmt.Sprintf(format, args...), o.owner)
}

// descendants lists the processes that descend from pid (the browser's
// content, GPU and utility processes, and the native hosts) and pid
// itself.
func descendants(pid int) []int {
	out := []int{pid}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if p, err := strconv.Atoi(e.Name()); err == nil && descends(p, pid) {
			out = append(out, p)
		}
	}
	return out
}
