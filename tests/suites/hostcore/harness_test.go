package hostcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/logfile"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/internal/nmhost"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// callerArg is what Chromium passes to the native host it starts for
// fillgate's extension.
const callerArg = "chrome-extension://eibglhghnpiamfbahofmkedefkffabnh/"

// scenarioBudget bounds one scenario, whatever goes wrong in it.
const scenarioBudget = 45 * time.Second

// tree is one scenario's home and XDG directories. Everything fillgate
// writes in the scenario lands under root.
type tree struct {
	root, home, run, state, config, data, cache, tmp string
	extra                                            map[string]string // more variables (a session bus)
}

func newTree(t testing.TB, root string) tree {
	t.Helper()
	d := tree{
		root:   root,
		home:   filepath.Join(root, "home"),
		run:    filepath.Join(root, "run"),
		state:  filepath.Join(root, "state"),
		config: filepath.Join(root, "config"),
		data:   filepath.Join(root, "data"),
		cache:  filepath.Join(root, "cache"),
		tmp:    filepath.Join(root, "tmp"),
	}
	for _, p := range []string{d.home, d.run, d.state, d.config, d.data, d.cache, d.tmp} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// vars is the environment fillgate reads its directories from.
func (d tree) vars() map[string]string {
	m := map[string]string{
		"HOME":            d.home,
		"XDG_RUNTIME_DIR": d.run,
		"XDG_STATE_HOME":  d.state,
		"XDG_CONFIG_HOME": d.config,
		"XDG_DATA_HOME":   d.data,
		"XDG_CACHE_HOME":  d.cache,
		"TMPDIR":          d.tmp,
	}
	for k, v := range d.extra {
		m[k] = v
	}
	return m
}

// getenv is the scenario's environment as a dirs.Env, for an in-process
// host.
func (d tree) getenv(k string) string { return d.vars()[k] }

// environ is the whole environment of the processes a scenario starts:
// nothing of the test's own environment leaks into them.
func (d tree) environ() []string {
	env := []string{"PATH=/usr/bin:/bin", "GORACE=exitcode=66 atexit_sleep_ms=50"}
	for k, v := range d.vars() {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return env
}

// socketDir is where hosts listen: $XDG_RUNTIME_DIR/fillgate.
func (d tree) socketDir(t testing.TB) string { return d.resolve(t, dirs.Runtime) }

// stateDir is $XDG_STATE_HOME/fillgate: the audit log and the host log.
func (d tree) stateDir(t testing.TB) string { return d.resolve(t, dirs.State) }

// resolve is fillgate's directory dir in the scenario's environment.
func (d tree) resolve(t testing.TB, dir func(dirs.Env) (string, error)) string {
	t.Helper()
	p, err := dir(d.getenv)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// shortTempDir is a new directory removed when the test ends. Its path is
// short, unlike t.TempDir's, so socket paths under it stay within the
// 107 bytes of sun_path.
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hostcore-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// browserKind is what drives the fake extension's browser, and what the
// person's policy says about it.
type browserKind int

const (
	// drivenInPage: a browser a program could drive, as the host sees
	// it (its parent is this test, not a browser, so its probe cannot
	// rule out remote debugging), where the person lets fillgate type
	// into the page (driven = "in-page"): the person types every value,
	// and the prompt says the program can read it. The suites' default:
	// they test the host's prompt and insert, which this is.
	drivenInPage browserKind = iota
	// drivenCleanRoom: the same browser under the product's default
	// (no driven key: "clean-room"), where fillgate never types into the
	// page. The fake extension knows no clean room (tab_info, cookies,
	// handover), so only what is refused before one opens can be tested.
	drivenCleanRoom
	// undriven: the person's own browser, which nothing but the person
	// drives: the host is started by a stand-in whose command line is a
	// Chromium's with no debugging switch (browserStandIn), and the fake
	// extension sees no debugger, automation or other extension. Saved
	// values, leases and approval = "none" go into its page. Only the
	// host binary can run so.
	undriven
)

// setup describes a scenario.
type setup struct {
	browser   browserKind       // what drives the browser; drivenInPage by default
	page      fakeext.Page      // what the fake extension shows
	paused    bool              // the extension's pause switch at start
	inProcess bool              // nmhost.Run in this process instead of the binary
	noHost    bool              // no host and no extension at all
	policy    string            // the policy file's text; "" means no file
	root      string            // the scenario's directory; "" means t.TempDir()
	env       map[string]string // more variables for the host and the clients (a session bus)
	budget    time.Duration     // bounds the whole scenario; 0 means scenarioBudget
	instance  string            // the extension's instance id in its hello; "" for none
}

// loginPage is a login page on origin with its password field focused.
func loginPage(origin string) fakeext.Page {
	return fakeext.Page{
		Tab:     7,
		Frame:   0,
		Origins: []string{origin},
		Field:   fill.FieldInfo{Kind: fill.FieldPassword},
		Element: "password-input",
	}
}

// prompted is a prompt window the fake extension opened.
type prompted struct {
	url    string
	window int64
}

// human is what the person at the prompt does. It runs on its own
// goroutine when the fake extension opens a prompt window.
type human func(ctx context.Context, r *rig, at prompted) error

// output is something a process printed, kept for the leak scan.
type output struct {
	name string
	data []byte
}

// rig is one scenario: its directories, a fresh secret, a fake extension
// and the host it talks to, the `fillgate fill` runs, and the leak scan of
// all of it when the scenario ends.
type rig struct {
	t       testing.TB
	ctx     context.Context
	dirs    tree
	browser browserKind
	secret  []byte // the value the human types
	ext     *fakeext.Ext
	extFrom int // how many messages the fake extension got before the scenario began (the rig's own checks')

	hostPID    int             // the host process (this one when in-process)
	hostOut    *frameTap       // the host binary's stdout
	hostIn     *hostStdin      // the host binary's stdin, which tests may also write raw bytes to
	hostStdout io.Closer       // the read end of the host binary's stdout
	hostErr    *syncbuf.Buffer // the host binary's stderr
	hostDone   chan error      // nmhost.Run's or the binary's end
	hostCmd    *exec.Cmd       // the host binary, or nil
	hostKind   string          // "binary" or "in-process", for messages
	hooks      sync.WaitGroup  // running human goroutines

	mu        sync.Mutex
	closing   bool
	secrets   [][]byte // every value typed or sent in the scenario
	who       human
	pages     []*fakehuman.Page // every prompt page the human opened
	prompts   []prompted
	outputs   []output
	clients   map[int]string // running client processes: pid → name
	procReads int            // /proc files the scan read
}

// newRig starts a scenario: a host (unless s.noHost) with the fake
// extension connected, ready for agents. The leak scan and every check on
// the host's own output run when the test ends.
func newRig(t testing.TB, s setup) *rig {
	t.Helper()
	root := s.root
	if root == "" {
		root = shortTempDir(t)
	}
	budget := s.budget
	if budget == 0 {
		budget = scenarioBudget
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	r := &rig{t: t, ctx: ctx, dirs: newTree(t, root), browser: s.browser, clients: map[int]string{}}
	r.dirs.extra = s.env
	if s.browser == undriven && s.inProcess {
		t.Fatal("an in-process host's parent is not a browser: only the host binary runs in an undriven browser")
	}
	r.secret = r.newSecret()
	r.writePolicy(s.policy)
	t.Cleanup(func() {
		r.teardown()
		cancel()
	})
	if s.noHost {
		return r
	}
	opts := fakeext.Options{Page: s.page, Paused: s.paused, Instance: s.instance, OnOpenPrompt: r.onOpenPrompt}
	if s.inProcess {
		r.startInProcess(opts)
	} else {
		r.startBinary(opts)
	}
	ready := make(chan error, 1)
	go func() {
		_, err := r.ext.Wait(ctx, fakeext.OfType("host"))
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("the %s host never answered the extension's hello: %v", r.hostKind, err)
		}
	case err := <-r.hostDone:
		r.hostDone <- err // for teardown
		msg := ""
		if r.hostErr != nil {
			msg = r.safe(string(r.hostErr.Bytes()))
		}
		t.Fatalf("the %s host ended before it answered the extension's hello: %v %s", r.hostKind, err, msg)
	}
	if s.browser == undriven {
		r.expectUndriven()
	}
	r.extFrom = len(r.ext.Received())
	r.scanProcs()
	return r
}

// expectUndriven checks the premise of an undriven scenario: the host,
// asked for its status, says nothing but the person drives the browser.
// A status gives the extension a second to answer, and counts it as
// driven when it does not (a loaded machine): it is asked up to three
// times; a browser a program drives is driven every time.
func (r *rig) expectUndriven() {
	r.t.Helper()
	var reasons []string
	for range 3 {
		hs, err := agentsock.Status(r.ctx, r.dirs.socketDir(r.t))
		if err != nil || len(hs) != 1 || hs[0].Drive == nil {
			r.t.Fatalf("the host's status: %+v, %v", hs, err)
		}
		if !hs[0].Drive.Driven {
			return
		}
		reasons = hs[0].Drive.Reasons
	}
	r.t.Fatalf("the host takes the stand-in browser for one a program drives: %s", strings.Join(reasons, "; "))
}

// startInProcess runs nmhost.Run in this process on in-memory pipes.
func (r *rig) startInProcess(opts fakeext.Options) {
	caller, err := manifest.ParseCaller([]string{callerArg}, manifest.Listed())
	if err != nil {
		r.t.Fatal(err)
	}
	ext, hostR, hostW := fakeext.Connect(r.ctx, opts)
	r.ext, r.hostPID, r.hostKind = ext, os.Getpid(), "in-process"
	r.hostDone = make(chan error, 1)
	go func() {
		r.hostDone <- nmhost.Run(r.ctx, nmhost.Config{Caller: caller, Stdin: hostR, Stdout: hostW, Env: r.dirs.getenv})
	}()
}

// startBinary starts the fillgate binary as Chromium starts a native
// host, with the fake extension on its stdin and stdout. In an undriven
// scenario a browser stand-in starts it (browserStandIn), and hostPID is
// the host's, not the stand-in's.
func (r *rig) startBinary(opts fakeext.Options) {
	cmd := exec.Command(fillgateBin(), callerArg)
	cmd.Env = r.dirs.environ()
	cmd.Dir = r.dirs.home
	var pids *os.File // the stand-in tells the host's pid on it
	if r.browser == undriven {
		pids = r.standIn(cmd)
	}
	// The host's stdout is a pipe it writes to itself, as a browser's is,
	// so that closing its read end (hostStdout) is the browser hanging up.
	stdin, stdout := child.Pipes(r.t, cmd)
	pr, pw := io.Pipe()
	r.hostOut = &frameTap{fwd: pw}
	r.hostErr = &syncbuf.Buffer{}
	r.hostIn = &hostStdin{w: stdin}
	r.hostStdout = stdout
	cmd.Stderr = r.hostErr
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start the host: %v", err)
	}
	r.hostCmd, r.hostPID, r.hostKind = cmd, cmd.Process.Pid, "binary"
	if pids != nil {
		r.hostPID, r.hostKind = r.standInChild(pids), "binary (started by a browser stand-in)"
	}
	r.hostDone = make(chan error, 1)
	go func() {
		_, _ = io.Copy(r.hostOut, stdout) // until the host exits, or the test closes stdout
		err := cmd.Wait()
		_ = pw.Close()
		r.hostDone <- err
	}()
	r.ext = fakeext.New(pr, r.hostIn, opts)
	go func() { _ = r.ext.Run(r.ctx) }()
}

// standIn makes cmd, the host as Chromium would start it, a browser
// stand-in that starts it (browserStandIn): this test binary, as an
// executable named chromium (standInBin), run with
// "--user-data-dir=<the scenario's profile>", so that the host's look at
// its parent finds a browser no program drives. It returns the pipe the
// stand-in tells the host's pid on.
func (r *rig) standIn(cmd *exec.Cmd) *os.File {
	r.t.Helper()
	profile := filepath.Join(r.dirs.root, "profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		r.t.Fatal(err)
	}
	cmd.Path, cmd.Args = standInBin(), []string{standInBin(), "--user-data-dir=" + profile}
	cmd.Env = append(cmd.Env, standInHostEnv+"="+fillgateBin(), standInCallerEnv+"="+callerArg)
	pr, pw, err := os.Pipe()
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{pw}
	r.t.Cleanup(func() { _ = pr.Close(); _ = pw.Close() })
	return pr
}

// standInChild reads the host's pid from the stand-in's pipe pids. Its
// write end in this process is closed first: the read ends if the
// stand-in dies without telling.
func (r *rig) standInChild(pids *os.File) int {
	r.t.Helper()
	_ = r.hostCmd.ExtraFiles[0].Close()
	var pid int
	if _, err := fmt.Fscan(pids, &pid); err != nil || pid <= 0 {
		r.t.Fatalf("the browser stand-in did not tell the host's pid: %v", err)
	}
	return pid
}

// newSecret returns a fresh random value that the scenario's leak scan
// looks for.
func (r *rig) newSecret() []byte {
	s := leakscan.NewSecret(r.t)
	r.mu.Lock()
	r.secrets = append(r.secrets, s)
	r.mu.Unlock()
	return s
}

func (r *rig) allSecrets() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.secrets)
}

// safe returns s for a failure message, unless it holds one of the
// scenario's secrets: then only that fact.
func (r *rig) safe(s string) string {
	for _, sec := range r.allSecrets() {
		if leakscan.Contains([]byte(s), sec) {
			return "[withheld: it holds a secret]"
		}
	}
	return s
}

// writePolicy writes the policy file. Unless text names where the person
// answers, the prompt is the loopback page (prompt = "browser"): the fake
// extension's browser stands for one a program could drive (unless the
// scenario's is undriven), and these suites answer the page; the native
// dialog has suites of its own. In a drivenInPage scenario the person
// lets fillgate type into that browser's page (driven = "in-page", a
// top-level key, so it goes first).
func (r *rig) writePolicy(text string) {
	if !strings.Contains(text, "prompt =") {
		text = "prompt = \"browser\"\n" + text
	}
	if r.browser == drivenInPage {
		text = "driven = \"in-page\"\n" + text
	}
	p, err := dirs.PolicyFile(r.dirs.getenv)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// behave sets what the human does at the next prompts.
func (r *rig) behave(h human) {
	r.mu.Lock()
	r.who = h
	r.mu.Unlock()
}

// onOpenPrompt is the fake extension's open_prompt hook.
func (r *rig) onOpenPrompt(url string, window int64) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return // the scenario is over; its checks have run
	}
	r.hooks.Add(1)
	defer r.hooks.Done()
	h := r.who
	r.prompts = append(r.prompts, prompted{url, window})
	r.mu.Unlock()

	r.scanProcs() // the host and the waiting client are running now
	if h == nil {
		return // nobody is at the browser
	}
	if err := h(r.ctx, r, prompted{url, window}); err != nil {
		r.t.Errorf("the fake human: %s", r.safe(err.Error()))
	}
}

// open loads the prompt page as the human's browser does, and checks that
// a page that asks says where the value goes (promptNote).
func (r *rig) open(ctx context.Context, at prompted) (*fakehuman.Page, error) {
	p, err := fakehuman.Open(ctx, at.url)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.pages = append(r.pages, p)
	r.outputs = append(r.outputs, output{fmt.Sprintf("prompt page %d as loaded", len(r.pages)), []byte(p.HTML())})
	r.mu.Unlock()
	if p.HasForm() {
		if err := r.promptNote(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// promptNote checks the note of a prompt page against the scenario's
// browser: where the program driving the browser can read what goes into
// the page (drivenInPage), the prompt says so (the note inpage); in the
// person's own browser it gives neither that warning nor the clean room's
// note.
func (r *rig) promptNote(p *fakehuman.Page) error {
	has := func(id string) bool { return strings.Contains(p.HTML(), `id="`+id+`"`) }
	switch {
	case r.browser == drivenInPage && (!has("inpage") || has("cleanroom")):
		return fmt.Errorf("the prompt of a fill into a driven browser's page does not warn that the program driving it can read the value (in-page note %v, clean-room note %v)", has("inpage"), has("cleanroom"))
	case r.browser == undriven && (has("inpage") || has("cleanroom") || has("watched")):
		return errors.New("the prompt in the person's own browser warns of a program driving it, or speaks of a clean room")
	}
	return nil
}

// lastPage is the prompt page the human opened last.
func (r *rig) lastPage() *fakehuman.Page {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pages) == 0 {
		r.t.Fatal("the human never opened a prompt page")
	}
	return r.pages[len(r.pages)-1]
}

// promptCount is how many prompt windows the fake extension opened.
func (r *rig) promptCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.prompts)
}

// atPage is a human who loads the prompt page and then does act on it.
func atPage(act func(ctx context.Context, r *rig, p *fakehuman.Page) error) human {
	return func(ctx context.Context, r *rig, at prompted) error {
		p, err := r.open(ctx, at)
		if err != nil {
			return err
		}
		return act(ctx, r, p)
	}
}

// shows checks that the prompt page shows its end page: end is "Sent.",
// "Cancelled." or "Approved.".
func shows(p *fakehuman.Page, end string) error {
	if !strings.Contains(p.HTML(), end) {
		return fmt.Errorf("the prompt did not show its %s page", strings.TrimSuffix(end, "."))
	}
	return nil
}

// answers types value into the prompt and presses Enter.
func answers(value []byte) human {
	return atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		return submitOn(ctx, p, value)
	})
}

// submitOn types value into the prompt page the human already has open
// and presses Enter. (Loading the prompt again from a second client would
// burn it: the prompt binds itself to the first browser that loads it.)
func submitOn(ctx context.Context, p *fakehuman.Page, value []byte) error {
	if err := p.Submit(ctx, value); err != nil {
		return err
	}
	return shows(p, "Sent.")
}

// cancels types typed (nothing when nil) and presses Cancel: a browser
// sends what is in the field with any button.
func cancels(typed []byte) human {
	return atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if err := p.CancelTyped(ctx, typed); err != nil {
			return err
		}
		return shows(p, "Cancelled.")
	})
}

// closesWindow looks at the prompt and closes its window.
func closesWindow() human {
	return func(ctx context.Context, r *rig, at prompted) error {
		if _, err := r.open(ctx, at); err != nil {
			return err
		}
		return r.ext.CloseWindow(at.window)
	}
}

// looksAway opens the prompt and never answers.
func looksAway() human {
	return func(ctx context.Context, r *rig, at prompted) error {
		_, err := r.open(ctx, at)
		return err
	}
}

// neverLooks is nobody at the browser: the prompt window opens and its
// page is never loaded.
func neverLooks() human {
	return func(context.Context, *rig, prompted) error { return nil }
}

// then runs each step in turn, stopping at the first error.
func then(steps ...human) human {
	return func(ctx context.Context, r *rig, at prompted) error {
		for _, s := range steps {
			if err := s(ctx, r, at); err != nil {
				return err
			}
		}
		return nil
	}
}

// run is one finished `fillgate fill`.
type run struct {
	res    fill.Result
	exit   int
	stdout []byte
	pid    int
}

// running is a `fillgate fill` (or another client) under way. It is
// killed if it still runs when the scenario's budget ends (finish says
// so), so that a request nothing answers fails its test instead of
// hanging the package.
type running struct {
	r              *rig
	name           string
	cmd            *exec.Cmd
	stdout, stderr syncbuf.Buffer
	stop           func() bool // stops the kill at the budget's end
}

// startFill starts `fillgate fill --json --via extension --service
// service` with extra arguments, as a child of the test: the test process
// is the agent.
func (r *rig) startFill(service string, extra ...string) *running {
	args := append([]string{"fill", "--json", "--via", "extension", "--service", service}, extra...)
	return r.start("fillgate fill", exec.Command(fillgateBin(), args...), r.dirs.environ())
}

// start starts cmd with env as a client of the scenario.
func (r *rig) start(name string, cmd *exec.Cmd, env []string) *running {
	r.t.Helper()
	p := &running{r: r, name: name, cmd: cmd}
	cmd.Env = env
	cmd.Dir = r.dirs.home
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("start %s: %v", name, err)
	}
	p.stop = context.AfterFunc(r.ctx, func() { _ = cmd.Process.Kill() })
	r.mu.Lock()
	r.clients[cmd.Process.Pid] = name
	r.mu.Unlock()
	r.scanProcs()
	return p
}

// fill runs `fillgate fill` to the end.
func (r *rig) fill(service string, extra ...string) run {
	r.t.Helper()
	return r.startFill(service, extra...).wait()
}

// finish waits for the process and keeps its output for the leak scan.
func (p *running) finish() (stdout []byte, exit int) {
	r := p.r
	err := p.cmd.Wait()
	if !p.stop() && r.ctx.Err() != nil && p.cmd.ProcessState.String() == "signal: killed" {
		r.t.Errorf("%s still ran when the scenario's budget ended, and was killed", p.name)
	}
	pid := p.cmd.Process.Pid
	r.mu.Lock()
	delete(r.clients, pid)
	r.mu.Unlock()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.t.Errorf("%s: %v", p.name, err)
	}
	stdout, stderr := p.stdout.Bytes(), p.stderr.Bytes()
	r.keep(fmt.Sprintf("%s (pid %d) stdout", p.name, pid), stdout)
	r.keep(fmt.Sprintf("%s (pid %d) stderr", p.name, pid), stderr)
	if bytes.Contains(stderr, []byte("DATA RACE")) {
		r.t.Errorf("%s: the race detector found a race (see its stderr)", p.name)
	}
	return stdout, p.cmd.ProcessState.ExitCode()
}

// wait waits for `fillgate fill` and reads its one JSON result.
func (p *running) wait() run {
	r := p.r
	stdout, exit := p.finish()
	got := run{exit: exit, stdout: stdout, pid: p.cmd.Process.Pid}
	lines := bytes.Split(bytes.TrimRight(stdout, "\n"), []byte("\n"))
	if len(lines) != 1 || json.Unmarshal(lines[0], &got.res) != nil {
		r.t.Errorf("%s printed %q, want one JSON result", p.name, r.safe(string(stdout)))
	}
	return got
}

// keep records a process's output for the leak scan.
func (r *rig) keep(name string, data []byte) {
	r.mu.Lock()
	r.outputs = append(r.outputs, output{name, bytes.Clone(data)})
	r.mu.Unlock()
}

// expect checks a result's status, the matching exit code and that its
// detail says detail.
func (r *rig) expect(got run, want fill.Status, detail string) {
	r.t.Helper()
	r.expectResult(got.res, want, detail)
	if got.exit != want.ExitCode() {
		r.t.Errorf("exit code %d, want %d for %s", got.exit, want.ExitCode(), want)
	}
}

// expectResult checks a result's status and that its detail says detail.
func (r *rig) expectResult(res fill.Result, want fill.Status, detail string) {
	r.t.Helper()
	if res.Status != want {
		r.t.Errorf("status %q, want %q (detail: %s)", res.Status, want, r.safe(res.Detail))
	}
	if !strings.Contains(res.Detail, detail) {
		r.t.Errorf("detail %q does not say %q", r.safe(res.Detail), detail)
	}
}

// expectWhere checks the rest of a result: service, origin, field, path.
func (r *rig) expectWhere(got run, service, origin, field string) {
	r.t.Helper()
	res := got.res
	if res.Service != service || res.Origin != origin || res.Field != field || res.Via != fill.ViaExtension {
		r.t.Errorf("result names service %q origin %q field %q via %q; want %q %q %q %q",
			res.Service, res.Origin, res.Field, res.Via, service, origin, field, fill.ViaExtension)
	}
}

// extSaw waits for the fake extension to have heard the outcome of n
// requests and returns the types of what it received from the host, in
// order, without the "host" notice that answers its hello and the drivable
// questions (extReceived).
func (r *rig) extSaw(n int) []string {
	r.t.Helper()
	count := 0
	_, err := r.ext.Wait(r.ctx, func(m fakeext.Message) bool {
		if m.Type == "outcome" {
			count++
		}
		return count >= n
	})
	if err != nil {
		r.t.Fatalf("the extension did not hear %d outcomes: %v", n, err)
	}
	return r.extReceived()
}

// expectExtSaw checks the sequence of messages the extension received for
// n requests. The prompt closes while the value goes in, so a close_prompt
// and the insert right after it may come either way round.
func (r *rig) expectExtSaw(n int, want ...string) {
	r.t.Helper()
	if got := concurrent(r.extSaw(n)); !slices.Equal(got, want) {
		r.t.Errorf("the extension received %v, want %v", got, want)
	}
}

// concurrent puts what the host sends at once in one order: an insert
// that came just before its close_prompt goes after it.
func concurrent(seq []string) []string {
	out := slices.Clone(seq)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "insert" && out[i+1] == "close_prompt" {
			out[i], out[i+1] = out[i+1], out[i]
		}
	}
	return out
}

// expectNothingInserted checks that no value reached the page.
func (r *rig) expectNothingInserted() {
	r.t.Helper()
	if n := r.ext.Inserts(); n != 0 {
		r.t.Errorf("the extension inserted %d values, want none", n)
	}
	for _, s := range r.allSecrets() {
		if r.ext.ValueEquals(s) {
			r.t.Error("a secret of this scenario is in the page")
		}
	}
}

// expectInserted checks that exactly value, and only once, reached the
// page.
func (r *rig) expectInserted(value []byte) {
	r.t.Helper()
	if n := r.ext.Inserts(); n != 1 {
		r.t.Errorf("the extension inserted %d values, want 1", n)
	}
	if r.ext.ValueEquals(value) {
		r.t.Log("the field holds the value the human typed: value matched")
	} else {
		r.t.Error("the field does not hold the value the human typed: value differed")
	}
}

// auditEntries reads the audit log.
func (r *rig) auditEntries() []fill.AuditEntry {
	r.t.Helper()
	es, err := audit.Open(r.dirs.stateDir(r.t)).Recent(1000)
	if err != nil {
		r.t.Fatalf("read the audit log: %v", err)
	}
	return es
}

// scanProcs scans the command line and environment of the host and of
// every running client for the scenario's secrets.
func (r *rig) scanProcs() {
	r.mu.Lock()
	pids := []int{}
	if r.hostPID != 0 {
		pids = append(pids, r.hostPID)
	}
	for pid := range r.clients {
		pids = append(pids, pid)
	}
	r.mu.Unlock()
	secrets := r.allSecrets()
	for _, pid := range pids {
		for _, f := range []string{"cmdline", "environ"} {
			p := filepath.Join("/proc", strconv.Itoa(pid), f)
			data, err := os.ReadFile(p)
			if err != nil || len(data) == 0 {
				continue // it has exited
			}
			r.mu.Lock()
			r.procReads++
			r.mu.Unlock()
			for _, s := range secrets {
				leakscan.Bytes(r.t, s, p, data)
			}
		}
	}
}

// teardown stops the host, checks its output and exit, and scans
// everything the scenario produced for its secrets.
func (r *rig) teardown() {
	t := r.t
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.hooks.Wait()
	if r.ext != nil {
		r.ext.Disconnect() // the browser closes the pipe: the host must exit
		select {
		case err := <-r.hostDone:
			if err != nil {
				t.Errorf("the %s host ended with %v, want a clean exit when the browser hangs up", r.hostKind, err)
			}
		case <-r.ctx.Done():
			t.Errorf("the %s host did not exit after the browser hung up", r.hostKind)
			if r.hostCmd != nil {
				_ = r.hostCmd.Process.Kill()
				<-r.hostDone
			}
		}
	}
	if r.hostCmd != nil {
		r.checkHostOutput()
	}
	r.scanAll()
	for _, s := range r.allSecrets() {
		clear(s)
	}
	if r.hostOut != nil {
		r.hostOut.zero()
	}
}

// hostToExt are the messages a host may send to the extension.
var hostToExt = map[string]bool{
	"host": true, "outcome": true, "leases": true, // notices
	"inspect": true, "open_prompt": true, "close_prompt": true, "insert": true, "ping": true, "notify": true, "peek": true, "drivable": true,
	"tab_info": true, "cookies": true, "handover": true, // the clean room's (PROTOCOL.md section 2)
}

// checkHostOutput checks that the host binary's stdout is native-messaging
// frames and nothing else, each a message the extension knows, with a
// secret only in insert requests; and that its stderr is clean.
func (r *rig) checkHostOutput() {
	t := r.t
	out := r.hostOut.bytes()
	defer clear(out)
	checkFrames(t, out, r.allSecrets())
	stderr := r.hostErr.Bytes()
	if bytes.Contains(stderr, []byte("DATA RACE")) {
		t.Errorf("the race detector found a race in the host: %s", r.safe(string(stderr)))
	}
	r.keep("host stderr", stderr)
}

// checkFrames reads data as native-messaging frames to its very end.
func checkFrames(t testing.TB, data []byte, secrets [][]byte) {
	t.Helper()
	rd := bytes.NewReader(data)
	frames := 0
	for {
		body, err := nativemsg.ReadFrame(rd)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("host stdout: after %d frames, bytes that are not a whole frame: %v", frames, err)
			return
		}
		frames++
		var m struct {
			ID   *int64 `json:"id"`
			Type string `json:"type"`
		}
		switch {
		case json.Unmarshal(body, &m) != nil:
			t.Errorf("host stdout: frame %d is not a JSON object", frames)
		case !hostToExt[m.Type]:
			t.Errorf("host stdout: frame %d has type %q, which is no host message", frames, m.Type)
		case (m.Type == "host" || m.Type == "outcome" || m.Type == "leases") != (m.ID == nil):
			t.Errorf("host stdout: frame %d (%s) has the wrong kind of id", frames, m.Type)
		}
		if m.Type != "insert" {
			for _, s := range secrets {
				leakscan.Bytes(t, s, fmt.Sprintf("host stdout frame %d (%s)", frames, m.Type), body)
			}
		}
		clear(body)
	}
	if frames == 0 {
		t.Error("host stdout: no frames at all (not even the answer to hello)")
	}
	t.Logf("host stdout: %d whole frames and nothing else", frames)
}

// scanAll is the end-of-scenario leak scan: every output kept, what the
// fake extension recorded, the host's log and audit log, and every file
// under the scenario's directories.
func (r *rig) scanAll() {
	t := r.t
	r.mu.Lock()
	outputs := slices.Clone(r.outputs)
	procReads := r.procReads
	r.mu.Unlock()
	secrets := r.allSecrets()
	state := r.dirs.stateDir(t)
	var files []output
	scanned := 0
	if r.ext != nil {
		// A host ran: its log must exist, so the scan below cannot pass
		// by looking at nothing.
		for _, name := range []string{logfile.Name, audit.FileName} {
			data, err := os.ReadFile(filepath.Join(state, name))
			switch {
			case err == nil:
				files = append(files, output{name, data})
			case name == logfile.Name || !errors.Is(err, os.ErrNotExist):
				t.Errorf("leak scan: %s: %v", name, err)
			}
		}
		if procReads == 0 {
			t.Error("leak scan: no /proc command line or environment was read")
		}
	}
	r.mu.Lock()
	for i, p := range r.pages {
		// The prompt pages as the human's browser got them: a saved value
		// never reaches them, and what was typed only encrypted.
		files = append(files, output{fmt.Sprintf("prompt page %d at the end", i+1), []byte(p.HTML())})
	}
	r.mu.Unlock()
	for _, s := range secrets {
		for _, o := range append(outputs, files...) {
			leakscan.Bytes(t, s, o.name, o.data)
		}
		if r.ext != nil {
			for _, m := range r.ext.Received() {
				leakscan.Bytes(t, s, "the fake extension's record of "+m.Type, m.Raw)
			}
		}
		files := leakscan.Dirs(t, s, r.dirs.root)
		if r.ext != nil && files == 0 {
			t.Error("leak scan: no file under the scenario's directories")
		}
		scanned = files
	}
	t.Logf("leak scan: %d secrets in %d outputs, %d files, %d /proc reads",
		len(secrets), len(outputs), scanned, procReads)
}

// frameTap keeps everything the host binary writes to stdout and passes
// it on to the fake extension while it listens.
type frameTap struct {
	mu     sync.Mutex
	buf    []byte
	fwd    io.Writer
	broken bool
}

func (f *frameTap) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.buf = append(f.buf, p...)
	broken := f.broken
	f.mu.Unlock()
	if !broken {
		if _, err := f.fwd.Write(p); err != nil {
			f.mu.Lock()
			f.broken = true // the extension hung up; keep collecting
			f.mu.Unlock()
		}
	}
	return len(p), nil
}

func (f *frameTap) bytes() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.buf)
}

func (f *frameTap) zero() {
	f.mu.Lock()
	clear(f.buf)
	f.mu.Unlock()
}
