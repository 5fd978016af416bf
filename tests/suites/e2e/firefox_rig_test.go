//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// firefox is one headless Firefox ESR with the extension that `fillgate
// install` unpacked, installed as a temporary add-on over WebDriver BiDi,
// the host Firefox started from the manifest install wrote into
// $HOME/.mozilla/native-messaging-hosts, and the login pages on two
// loopback origins. It is the Firefox counterpart of chromium.
type firefox struct {
	*rig
	ctx     context.Context
	ff      *browser.Firefox
	profile string
	origin1 string // http://127.0.0.1:port
	origin2 string // http://127.0.0.2:port, another site
	// lookalike is origin1's server under the name
	// http://github.com.localhost:port, which Firefox, like Chromium,
	// resolves to loopback itself.
	lookalike string
	host      agentsock.HostStatus // the host serving the extension now
	// uuid is the moz-extension:// host Firefox gave the temporary add-on
	// (random per install), for opening its popup page.
	uuid    string
	prompts *bidiPrompts
	secrets [][]byte // every scenario's secret, for the final scan
}

// startFirefox sets everything up in a new rig, starting Firefox with o
// (its Prefs and AllowSystemAccess; the profile and environment are the
// rig's). Stop it with finish, which also runs the leak scans that need
// the profile flushed.
func startFirefox(t testing.TB, ctx context.Context, o browser.FirefoxOptions) *firefox {
	t.Helper()
	r := newRig(t)
	r.install(t, ctx, filepath.Join(r.root, "home", ".mozilla", "native-messaging-hosts"), "--browser", "firefox")
	fx := &firefox{rig: r, ctx: ctx, profile: filepath.Join(r.root, "profile")}
	l1, o1 := listen(t, "127.0.0.1")
	l2, o2 := listen(t, "127.0.0.2")
	fx.origin1, fx.origin2 = o1, o2
	fx.lookalike = strings.Replace(o1, "127.0.0.1", "github.com.localhost", 1)
	startServer(t, l1, loginPages(o2))
	startServer(t, l2, loginPages(o1))

	if err := os.Mkdir(fx.profile, 0o700); err != nil {
		t.Fatal(err)
	}
	o.Profile, o.Env = fx.profile, r.env
	fx.ff = browser.StartFirefox(t, ctx, o)
	fx.prompts = watchFirefoxPrompts(t, ctx, fx.ff, func(url string) bool {
		return strings.HasPrefix(url, "http://127.0.0.1:") && !strings.HasPrefix(url, o1+"/")
	})
	fx.installExtension(t)
	fx.host = fx.nextHost(t, 0)
	fx.doctor(t)
	return fx
}

// installExtension installs the unpacked extension as a temporary add-on,
// as a person would from about:debugging, and finds the moz-extension
// UUID it got.
func (fx *firefox) installExtension(t testing.TB) {
	t.Helper()
	var installed struct {
		Extension string `json:"extension"`
	}
	if err := fx.ff.Call(fx.ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": fx.extensionDir},
	}, &installed); err != nil {
		t.Fatalf("install the extension as a temporary add-on: %v", err)
	}
	if installed.Extension != manifest.FirefoxID {
		t.Fatalf("installed as %q; want %q", installed.Extension, manifest.FirefoxID)
	}
	fx.uuid = fx.addonUUID(t)
}

// uuidsPref is the line of prefs.js where Firefox keeps each add-on's
// moz-extension UUID, a JSON object in a string.
var uuidsPref = regexp.MustCompile(`(?m)^user_pref\("extensions\.webextensions\.uuids", ("(?:[^"\\]|\\.)*")\);$`)

// addonUUID waits until Firefox has saved the add-on's UUID to the
// profile's prefs.js (it saves changed prefs within a moment) and returns
// it.
func (fx *firefox) addonUUID(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(fx.ctx, 30*time.Second)
	defer cancel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	for {
		data, _ := os.ReadFile(filepath.Join(fx.profile, "prefs.js"))
		if m := uuidsPref.FindSubmatch(data); m != nil {
			var obj string
			ids := map[string]string{}
			if json.Unmarshal(m[1], &obj) == nil && json.Unmarshal([]byte(obj), &ids) == nil && uuid.MatchString(ids[manifest.FirefoxID]) {
				return ids[manifest.FirefoxID]
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Firefox never saved the add-on's UUID to prefs.js: %v", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// nextHost waits for a host that the browser started, with the extension
// connected, other than the host whose pid is old (0: any), checks it
// and returns its status.
func (fx *firefox) nextHost(t testing.TB, old int) agentsock.HostStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(fx.ctx, 60*time.Second)
	defer cancel()
	pid := fx.ff.Cmd.Process.Pid
	host := func() *agentsock.HostStatus {
		for {
			hs, err := agentsock.Status(ctx, fx.runDir)
			for _, h := range hs {
				if h.PID != old && h.Extension.Connected && descends(h.PID, pid) {
					return &h
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("no new host of firefox (pid %d) with the extension connected (%v); last status %+v, %v", pid, ctx.Err(), hs, err)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	if host.Browser != "firefox" || host.BrowserName != "firefox" || host.Profile != fx.profile ||
		host.Caller != manifest.FirefoxID || host.Extension.Paused || host.Extension.Instance == "" {
		t.Fatalf("host status %+v; want firefox with profile %s, called by %s, not paused, with an instance id", host, fx.profile, manifest.FirefoxID)
	}
	fx.checkHostProcess(t, *host, pid)
	return *host
}

// doctor runs `fillgate doctor --json --browser firefox` as a person would
// and checks that it sees the manifest and the running host with the
// extension connected.
func (fx *firefox) doctor(t testing.TB) {
	t.Helper()
	out, errOut, _ := fx.cli(t, fx.ctx, "doctor", "--json", "--browser", "firefox")
	var rep struct {
		Checks []struct{ Name, Status, Detail string } `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("fillgate doctor --json printed %s%s: %v", out, errOut, err)
	}
	want := map[string]bool{"firefox": false, fmt.Sprintf("host %d", fx.host.PID): false, "extension": false}
	for _, c := range rep.Checks {
		if _, ok := want[c.Name]; ok {
			want[c.Name] = c.Status == "ok"
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("fillgate doctor's %s check is not ok: %s", name, out)
		}
	}
}

// finish stops the browser (which flushes its profile), checks that the
// host exited with it, and scans the browser's output and every file
// under the temp root (the Firefox profile, HOME and the XDG dirs) for
// every scenario's secret.
func (fx *firefox) finish(t testing.TB) {
	t.Helper()
	fx.ff.Stop()
	waitGone(t, fx.ctx, fx.host.PID, "the host")
	for _, secret := range fx.secrets {
		leakscan.Bytes(t, secret, "the browser's output", []byte(fx.ff.Output()))
		if n := leakscan.Dirs(t, secret, fx.root); n < 20 {
			t.Errorf("the leak scan read only %d files under %s", n, fx.root)
		}
		clear(secret)
	}
}

// secret makes the random secret of one scenario; finish scans for it.
func (fx *firefox) secret(t testing.TB) []byte {
	s := leakscan.NewSecret(t)
	fx.secrets = append(fx.secrets, s)
	return s
}

// codeSecret is a random one-time code of n letters and digits, the
// secret of one scenario.
func (fx *firefox) codeSecret(t *testing.T, n int) []byte {
	t.Helper()
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
	s := make([]byte, n)
	for i := range s {
		s[i] = alphabet[randIndex(t, len(alphabet))]
	}
	fx.secrets = append(fx.secrets, s)
	return s
}

// open opens url in a new tab in front of the browser window and waits
// for it to load; the tab closes when the test ends.
func (fx *firefox) open(t testing.TB, url string) bidiTab {
	t.Helper()
	var created struct {
		Context string `json:"context"`
	}
	if err := fx.ff.Call(fx.ctx, "browsingContext.create", map[string]any{"type": "tab"}, &created); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	tb := bidiTab{t: t, ctx: fx.ctx, ff: fx.ff, id: created.Context}
	t.Cleanup(func() {
		// The tab may be gone already (the test closed it).
		_ = fx.ff.Call(fx.ctx, "browsingContext.close", map[string]any{"context": tb.id}, nil)
	})
	tb.navigate(url)
	if err := fx.ff.Call(fx.ctx, "browsingContext.activate", map[string]any{"context": tb.id}, nil); err != nil {
		t.Fatalf("bring %s to the front: %v", url, err)
	}
	return tb
}

// request runs `fillgate fill --json` with args as the agent. It returns
// the run and how many prompts had opened before it, for awaitPrompt and
// noPrompt.
func (fx *firefox) request(t testing.TB, args ...string) (*agent, int) {
	t.Helper()
	n := fx.prompts.count()
	return fx.fill(t, fx.ctx, args...), n
}

// awaitPrompt waits for prompt number n to open and load, and puts the
// focus into its field: Firefox never reports focus in headless mode, so
// autofocus may not apply, and the human clicks into the field.
func (fx *firefox) awaitPrompt(t testing.TB, n int) bidiTab {
	t.Helper()
	ctx, cancel := context.WithTimeout(fx.ctx, 30*time.Second)
	defer cancel()
	id, err := fx.prompts.next(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := fx.prompts.waitLoaded(ctx, id); err != nil {
		t.Fatal(err)
	}
	p := bidiTab{t: t, ctx: fx.ctx, ff: fx.ff, id: id}
	if !p.call(`function () { const f = document.getElementById("value"); f.focus(); return document.activeElement === f; }`) {
		t.Fatal("could not focus the prompt's field")
	}
	return p
}

// check runs the checks every scenario shares: the agent side holds no
// trace of the secret (nor does any of the browser's processes' command
// line or environment), the host is the one serving since the last
// restart the scenarios made, and the audit log's newest entry is this
// request's outcome.
func (fx *firefox) check(t *testing.T, secret []byte, a *agent, res fill.Result) {
	t.Helper()
	st := fx.hostStatus(t, fx.ctx)
	if st.PID != fx.host.PID {
		t.Errorf("the host restarted: pid %d, was %d", st.PID, fx.host.PID)
	}
	fx.scan(t, secret, a, st.PID)
	fx.audited(t, res)
}

// scan looks for the secret in everything the agent side of one request
// produced (rig.scanAgentSide; the host's process only while it runs:
// hostPID not 0) and in the command line and environment of every
// process of the browser.
func (fx *firefox) scan(t *testing.T, secret []byte, a *agent, hostPID int) {
	t.Helper()
	if hostPID != 0 {
		fx.scanAgentSide(t, secret, a, hostPID, fx.ff.Cmd.Process.Pid)
	} else {
		leakscan.Bytes(t, secret, "the agent's stdout (the result)", a.stdout.Bytes())
		leakscan.Bytes(t, secret, "the agent's stderr", a.stderr.Bytes())
		for _, name := range []string{"fillgate.log", audit.FileName} {
			data, err := os.ReadFile(filepath.Join(fx.stateDir, name))
			if err != nil {
				t.Errorf("read %s: %v", name, err)
			}
			leakscan.Bytes(t, secret, name, data)
		}
		leakscan.Process(t, secret, os.Getpid())
	}
	for _, p := range descendants(fx.ff.Cmd.Process.Pid) {
		leakscan.Process(t, secret, p)
	}
}

// audited checks that the audit log's newest entry is res's outcome.
func (fx *firefox) audited(t *testing.T, res fill.Result) {
	t.Helper()
	if e := fx.lastAudit(t); e.Status != res.Status || e.Service != res.Service || e.Origin != res.Origin || e.Detail != res.Detail {
		t.Errorf("the audit log's last entry %+v does not match the result %+v", e, res)
	}
}

// isolatedProcesses counts the browser's "Isolated Web Content"
// processes: with Fission, each site's documents (a cross-site frame's
// too) run in one of their own; without it, pages share "Web Content"
// processes.
func (fx *firefox) isolatedProcesses() int {
	n := 0
	for _, p := range descendants(fx.ff.Cmd.Process.Pid) {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/comm")
		if strings.TrimSpace(string(comm)) == "Isolated Web Co" { // the name is cut at 15 bytes
			n++
		}
	}
	return n
}

// descendants lists the processes that descend from pid (Firefox's
// content, GPU and socket processes, and the native hosts) and pid itself.
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

// refusedAtOnce opens url, focuses the element focus evaluates to, asks
// for a password for service, and expects a refusal whose detail holds
// detail, with no prompt and nothing typed into the page. It returns the
// result.
func (fx *firefox) refusedAtOnce(t *testing.T, url, focus, service, detail string) fill.Result {
	t.Helper()
	secret := fx.secret(t)
	tb := fx.open(t, url)
	tb.focus(focus)
	a, n := fx.request(t, "--service", service)
	res, code := a.result(t, fx.ctx)
	fx.check(t, secret, a, res)
	wantResult(t, res, code, fill.StatusRefused, service, fill.FieldPassword, detail)
	fx.noPrompt(t, n)
	tb.untouched()
	return res
}

// closed checks that the prompt window is gone once the request ended.
func (fx *firefox) closed(t *testing.T, p bidiTab) {
	t.Helper()
	ctx, cancel := context.WithTimeout(fx.ctx, 10*time.Second)
	defer cancel()
	if err := fx.prompts.waitClosed(ctx, p.id); err != nil {
		t.Error(err)
	}
}

// noPrompt checks that no prompt opened since there were n, neither in
// the browsing-context events so far nor among the open contexts.
func (fx *firefox) noPrompt(t *testing.T, n int) {
	t.Helper()
	for _, c := range contexts(t, fx.ctx, fx.ff) {
		if fx.prompts.isPrompt(c.URL) {
			t.Errorf("a prompt is open: %s", c.URL)
		}
	}
	if got := fx.prompts.count(); got != n {
		t.Errorf("%d prompt(s) opened; want none", got-n)
	}
}

// setPaused flips the pause switch in the extension's toolbar popup, as
// the user would: its page, moz-extension://<uuid>/popup.html, opened as
// a tab. It waits until the host has heard of it.
func (fx *firefox) setPaused(t *testing.T, paused bool) {
	t.Helper()
	pop := fx.open(t, "moz-extension://"+fx.uuid+"/popup.html")
	defer func() {
		if err := fx.ff.Call(fx.ctx, "browsingContext.close", map[string]any{"context": pop.id}, nil); err != nil {
			t.Errorf("close the popup page: %v", err)
		}
	}()
	// The popup asks the worker for the state as it loads; wait for the
	// answer to show, without polling from here.
	if !pop.call(`function () {
		const c = document.getElementById("conn");
		return c.className === "ok" || new Promise((r) => new MutationObserver(() => { if (c.className === "ok") r(true); })
			.observe(c, { attributes: true }));
	}`) {
		t.Fatal("the popup does not show the host connected")
	}
	if !pop.call(`function (want) {
		const s = document.getElementById("pause");
		if (s.checked !== (want === "true")) s.click();
		return s.checked === (want === "true");
	}`, strconv.FormatBool(paused)) {
		t.Fatal("flip the pause switch")
	}
	deadline, stop := context.WithTimeout(fx.ctx, 10*time.Second)
	defer stop()
	for fx.hostStatus(t, deadline).Extension.Paused != paused {
		select {
		case <-deadline.Done():
			t.Fatalf("the host never heard that fills are paused=%v", paused)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// bidiPrompts records every prompt window the browser opens (a top-level
// browsing context that navigates to a 127.0.0.1 origin that is not a
// login page), from the browser's browsingContext events, and which of
// them loaded and closed.
type bidiPrompts struct {
	mu       sync.Mutex
	isPrompt func(url string) bool
	top      map[string]bool // top-level contexts, from their creation
	opened   []string
	known    map[string]bool
	origins  map[string]string
	openedAt map[string]time.Time // when the browser reported its URL
	loaded   map[string]bool
	closed   map[string]bool
	changed  chan struct{} // closed and replaced on every change
}

// watchFirefoxPrompts subscribes to the browser's browsing-context events
// and records the prompts among them.
func watchFirefoxPrompts(t testing.TB, ctx context.Context, ff *browser.Firefox, isPrompt func(string) bool) *bidiPrompts {
	t.Helper()
	w := &bidiPrompts{isPrompt: isPrompt, top: map[string]bool{}, known: map[string]bool{}, origins: map[string]string{},
		openedAt: map[string]time.Time{}, loaded: map[string]bool{}, closed: map[string]bool{}, changed: make(chan struct{})}
	ff.Listen(w.event)
	if err := ff.Subscribe(ctx, "browsingContext.contextCreated", "browsingContext.contextDestroyed",
		"browsingContext.navigationStarted", "browsingContext.load"); err != nil {
		t.Fatalf("subscribe to the browser's browsing contexts: %v", err)
	}
	return w
}

func (w *bidiPrompts) event(e browser.Event) {
	var p struct {
		Context string           `json:"context"`
		URL     string           `json:"url"`
		Parent  *json.RawMessage `json:"parent"`
	}
	if json.Unmarshal(e.Params, &p) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e.Method {
	case "browsingContext.contextCreated":
		if p.Parent == nil || string(*p.Parent) == "null" {
			w.top[p.Context] = true
			w.saw(p.Context, p.URL)
		}
	case "browsingContext.navigationStarted":
		w.saw(p.Context, p.URL)
	case "browsingContext.load":
		w.saw(p.Context, p.URL)
		if w.known[p.Context] && w.isPrompt(p.URL) {
			w.loaded[p.Context] = true
			w.notify()
		}
	case "browsingContext.contextDestroyed":
		if w.known[p.Context] {
			w.closed[p.Context] = true
			w.notify()
		}
	}
}

// saw must be called with w.mu held.
func (w *bidiPrompts) saw(id, url string) {
	if !w.top[id] || w.known[id] || !w.isPrompt(url) {
		return
	}
	w.known[id] = true
	w.openedAt[id] = time.Now()
	if u, err := neturl.Parse(url); err == nil {
		w.origins[id] = u.Scheme + "://" + u.Host
	}
	w.opened = append(w.opened, id)
	w.notify()
}

// notify must be called with w.mu held.
func (w *bidiPrompts) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// count is how many prompts have opened so far.
func (w *bidiPrompts) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.opened)
}

// await waits until cond holds.
func (w *bidiPrompts) await(ctx context.Context, what string, cond func() bool) error {
	for {
		w.mu.Lock()
		ok, changed := cond(), w.changed
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-changed:
		}
	}
}

// next waits for prompt number n (0-based) to open.
func (w *bidiPrompts) next(ctx context.Context, n int) (string, error) {
	if err := w.await(ctx, "no prompt opened", func() bool { return len(w.opened) > n }); err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opened[n], nil
}

// waitLoaded waits for prompt id's page to load.
func (w *bidiPrompts) waitLoaded(ctx context.Context, id string) error {
	return w.await(ctx, "the prompt never loaded", func() bool { return w.loaded[id] || w.closed[id] })
}

// waitClosed waits for prompt id to close.
func (w *bidiPrompts) waitClosed(ctx context.Context, id string) error {
	return w.await(ctx, "the prompt stayed open", func() bool { return w.closed[id] })
}

// when is when the browser reported prompt id with its URL.
func (w *bidiPrompts) when(id string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.openedAt[id]
}

// origin is the origin of prompt id (http://127.0.0.1:port), as the
// browser reported its URL: never the URL itself, which holds its nonce.
func (w *bidiPrompts) origin(id string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.origins[id]
}

// bidiContext is a browsing context in browsingContext.getTree.
type bidiContext struct {
	Context  string        `json:"context"`
	URL      string        `json:"url"`
	Children []bidiContext `json:"children"`
}

// contexts lists Firefox's top-level browsing contexts (tabs and popup
// windows).
func contexts(t testing.TB, ctx context.Context, ff *browser.Firefox) []bidiContext {
	t.Helper()
	var tree struct {
		Contexts []bidiContext `json:"contexts"`
	}
	if err := ff.Call(ctx, "browsingContext.getTree", map[string]any{"maxDepth": 0}, &tree); err != nil {
		t.Fatalf("firefox's browsing contexts: %v", err)
	}
	return tree.Contexts
}

// bidiTab is a browsing context (a tab, a popup window or a frame) driven
// over WebDriver BiDi.
type bidiTab struct {
	t   testing.TB
	ctx context.Context
	ff  *browser.Firefox
	id  string
}

// bidiRemote is a WebDriver BiDi remote value.
type bidiRemote struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// run calls the function declaration fn with string arguments in the
// page's own world, awaiting a promise it returns, and returns the
// result. An error never quotes the arguments.
func (b bidiTab) run(fn string, args ...string) (bidiRemote, error) {
	var bidiArgs []map[string]string
	for _, a := range args {
		bidiArgs = append(bidiArgs, map[string]string{"type": "string", "value": a})
	}
	var res struct {
		Type   string     `json:"type"`
		Result bidiRemote `json:"result"`
	}
	err := b.ff.Call(b.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "arguments": bidiArgs, "awaitPromise": true,
		"target": map[string]string{"context": b.id},
	}, &res)
	if err != nil && len(args) == 0 {
		return bidiRemote{}, fmt.Errorf("call in the page: %w", err)
	}
	if err != nil {
		return bidiRemote{}, errors.New("call in the page failed") // the error might quote an argument
	}
	if res.Type != "success" {
		return bidiRemote{}, fmt.Errorf("call in the page: %s", res.Type)
	}
	return res.Result, nil
}

// try is run for a function that returns a boolean.
func (b bidiTab) try(fn string, args ...string) (bool, error) {
	v, err := b.run(fn, args...)
	if err != nil {
		return false, err
	}
	if v.Type != "boolean" {
		return false, fmt.Errorf("call in the page: returned a %s", v.Type)
	}
	return string(v.Value) == "true", nil
}

// call is try that fails the test on an error.
func (b bidiTab) call(fn string, args ...string) bool {
	b.t.Helper()
	ok, err := b.try(fn, args...)
	if err != nil {
		b.t.Fatal(err)
	}
	return ok
}

// eval evaluates a boolean expression in the page's own world.
func (b bidiTab) eval(expr string) bool {
	b.t.Helper()
	return b.call("function () { return (" + expr + "); }")
}

// holds reports whether fn, a function declaration run in the page's own
// world, returns true for the secret. The comparison happens in the page;
// only the boolean comes back.
func (b bidiTab) holds(fn string, secret []byte) bool {
	b.t.Helper()
	return b.call(fn, string(secret))
}

// untouched checks that the page saw no input, change or submit event and
// that all its inputs are empty.
func (b bidiTab) untouched() {
	b.t.Helper()
	if !b.eval(untouched) {
		b.t.Errorf("the page saw input or holds a value")
	}
}

// focus focuses the element expr evaluates to, as a click into it would.
func (b bidiTab) focus(expr string) {
	b.t.Helper()
	if !b.eval(`(() => { const el = ` + expr + `; el.focus(); return el.getRootNode().activeElement === el; })()`) {
		b.t.Fatalf("could not focus %s", expr)
	}
}

// navigate loads url in the context and waits for it to load.
func (b bidiTab) navigate(url string) {
	b.t.Helper()
	if err := b.ff.Call(b.ctx, "browsingContext.navigate", map[string]any{"context": b.id, "url": url, "wait": "complete"}, nil); err != nil {
		b.t.Fatalf("open %s: %v", url, err)
	}
}

// says checks that the page's text holds each of texts.
func (b bidiTab) says(texts ...string) {
	b.t.Helper()
	v, err := b.run(`function () { return document.body.innerText; }`)
	var body string
	if err != nil || v.Type != "string" || json.Unmarshal(v.Value, &body) != nil {
		b.t.Fatalf("read the page's text: %v (%s)", err, v.Type)
	}
	for _, s := range texts {
		if !strings.Contains(body, s) {
			b.t.Errorf("the page does not say %q; it says %q", s, body)
		}
	}
}

// fitsPopup checks that the prompt is a popup window of the size the
// extension asks for (sw.js) and that the person sees its field and its
// buttons (Send and Cancel) without scrolling.
func (b bidiTab) fitsPopup() {
	b.t.Helper()
	v, err := b.run(`function () {
		const seen = (el) => { const r = el.getBoundingClientRect();
			return r.width > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; };
		const field = document.getElementById("value");
		const els = [field, document.getElementById("send"), document.getElementById("cancel")];
		return JSON.stringify({ w: outerWidth, h: outerHeight, seen: els.length >= 3 && els.every(seen) });
	}`)
	var raw string
	var got struct {
		W, H int
		Seen bool
	}
	if err != nil || json.Unmarshal(v.Value, &raw) != nil || json.Unmarshal([]byte(raw), &got) != nil {
		b.t.Fatalf("measure the prompt: %v", err)
	}
	if got.W != popupWidth || got.H != popupHeight || !got.Seen {
		b.t.Errorf("the prompt window is %dx%d (want %dx%d) and shows its field and buttons: %v", got.W, got.H, popupWidth, popupHeight, got.Seen)
	}
}

// frame returns the child browsing context (of any depth) whose URL
// starts with prefix: a frame from the same or another site, in this
// process or another.
func (b bidiTab) frame(prefix string) bidiTab {
	b.t.Helper()
	var tree struct {
		Contexts []bidiContext `json:"contexts"`
	}
	if err := b.ff.Call(b.ctx, "browsingContext.getTree", map[string]any{"root": b.id}, &tree); err != nil {
		b.t.Fatalf("the page's frames: %v", err)
	}
	var find func([]bidiContext) string
	find = func(cs []bidiContext) string {
		for _, c := range cs {
			if c.Context != b.id && strings.HasPrefix(c.URL, prefix) {
				return c.Context
			}
			if id := find(c.Children); id != "" {
				return id
			}
		}
		return ""
	}
	id := find(tree.Contexts)
	if id == "" {
		b.t.Fatalf("no frame at %s in %+v", prefix, tree.Contexts)
	}
	return bidiTab{t: b.t, ctx: b.ctx, ff: b.ff, id: id}
}

// click clicks the left mouse button at (x, y) of the viewport, through
// WebDriver BiDi input actions.
func (b bidiTab) click(x, y float64) {
	b.t.Helper()
	err := b.ff.Call(b.ctx, "input.performActions", map[string]any{
		"context": b.id,
		"actions": []map[string]any{{"type": "pointer", "id": "mouse", "parameters": map[string]string{"pointerType": "mouse"},
			"actions": []map[string]any{
				{"type": "pointerMove", "x": int(math.Round(x)), "y": int(math.Round(y)), "origin": "viewport"},
				{"type": "pointerDown", "button": 0},
				{"type": "pointerUp", "button": 0},
			}}},
	}, nil)
	if err != nil {
		b.t.Fatalf("click at %v,%v: %v", x, y, err)
	}
}

// clickCancel clicks the prompt's Cancel button with the mouse.
func (b bidiTab) clickCancel() {
	b.t.Helper()
	v, err := b.run(`function () {
		const r = document.getElementById("cancel").getBoundingClientRect();
		return JSON.stringify({ X: r.left + r.width / 2, Y: r.top + r.height / 2 });
	}`)
	var raw string
	var at struct{ X, Y float64 }
	if err != nil || json.Unmarshal(v.Value, &raw) != nil || json.Unmarshal([]byte(raw), &at) != nil {
		b.t.Fatalf("find the Cancel button: %v", err)
	}
	b.click(at.X, at.Y)
}

// typeKeys types text into the focused element key by key, through
// WebDriver BiDi input actions. An error never quotes the text.
func (b bidiTab) typeKeys(text string) {
	b.t.Helper()
	var keys []map[string]string
	for _, r := range text {
		k := string(r)
		keys = append(keys, map[string]string{"type": "keyDown", "value": k}, map[string]string{"type": "keyUp", "value": k})
	}
	err := b.ff.Call(b.ctx, "input.performActions", map[string]any{
		"context": b.id,
		"actions": []map[string]any{{"type": "key", "id": "keyboard", "actions": keys}},
	}, nil)
	clear(keys)
	if err != nil {
		b.t.Fatalf("type into the page failed")
	}
}

// typeSecret types the secret into the prompt's focused field.
func (b bidiTab) typeSecret(secret []byte) {
	b.t.Helper()
	b.typeKeys(string(secret))
}

// send types the secret into the prompt's focused field and presses
// Enter, as the human would.
func (b bidiTab) send(secret []byte) {
	b.t.Helper()
	b.typeKeys(string(secret) + enterKey)
}

// enterKey is WebDriver's Enter key.
const enterKey = "\uE007"

// await calls fn (no arguments) in the page until it returns true; the
// page may be loading, so a failed call is tried again until the deadline.
func (b bidiTab) await(fn string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	for {
		ok, err := b.try(fn)
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			b.t.Fatalf("the page never got there (%v); last: %v", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// awaitFirefoxPrompt waits for the prompt window (a top-level context on a
// 127.0.0.1 origin that is not the login page's) and for its field to have
// focus.
func awaitFirefoxPrompt(t testing.TB, ctx context.Context, ff *browser.Firefox, login string) bidiTab {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		for _, c := range contexts(t, wait, ff) {
			if strings.HasPrefix(c.URL, "http://127.0.0.1:") && !strings.HasPrefix(c.URL, login+"/") {
				p := bidiTab{t: t, ctx: ctx, ff: ff, id: c.Context}
				// Firefox never reports focus in headless mode, so autofocus
				// may not apply: the human clicks into the field.
				ok, _ := p.try(`function () {
					if (document.readyState !== "complete") return false;
					const f = document.getElementById("value");
					f.focus();
					return document.activeElement === f;
				}`)
				if ok {
					return p
				}
			}
		}
		select {
		case <-wait.Done():
			t.Fatalf("no prompt window with its field focused: %v", wait.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitContextGone waits until browsing context id has closed.
func waitContextGone(t testing.TB, ctx context.Context, ff *browser.Firefox, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		open := false
		for _, c := range contexts(t, ctx, ff) {
			open = open || c.Context == id
		}
		if !open {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("the prompt window stayed open")
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}
