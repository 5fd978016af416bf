package cdpe2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
)

// fillgateBin is the fillgate binary TestMain builds once for the CLI
// scenarios; it is set before any test runs and never changed.
var fillgateBin string

// openerName is the system opener's file name on this OS.
func openerName() string {
	if runtime.GOOS == "darwin" {
		return "open"
	}
	return "xdg-open"
}

// fakeOpenerScript is the system opener the CLI scenarios' fillgate runs
// (linked in as its only opener directory): it appends its arguments to
// $HOME/opened.txt and writes its environment to $HOME/opener.env, so each
// scenario, with a HOME of its own, sees what its fillgate opened. The
// environment goes first, whole (renamed into place), so a test that sees
// the page in opened.txt finds the environment complete. With
// $HOME/opener.fail present it fails as xdg-open does on a machine with no
// way to open a page (exit 3).
const fakeOpenerScript = `#!/bin/sh
env > "$HOME/opener.env.tmp" && mv "$HOME/opener.env.tmp" "$HOME/opener.env"
if [ -e "$HOME/opener.fail" ]; then echo "xdg-open: no method available for opening it" >&2; exit 3; fi
printf '%s\n' "$*" >> "$HOME/opened.txt"
`

func TestMain(m *testing.M) { os.Exit(runWithBinary(m)) }

// runWithBinary builds the fillgate binary into a temp dir, runs the
// tests and removes the dir.
func runWithBinary(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fillgate-cdpe2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "temp dir for the fillgate binary: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintf(os.Stderr, "the CLI tests build fillgate and need the go command in PATH: %v\n", err)
		return 1
	}
	fillgateBin = filepath.Join(dir, "fillgate")
	if runtime.GOOS == "windows" {
		fillgateBin += ".exe"
	}
	// fillgate runs the system opener only from fixed system directories;
	// the test build gets one directory of its own, with the fake.
	openerDir := filepath.Join(dir, "opener")
	if err := os.Mkdir(openerDir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "opener dir: %v\n", err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(openerDir, openerName()), []byte(fakeOpenerScript), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "fake opener: %v\n", err)
		return 1
	}
	out, err := exec.Command(goTool, "build", "-o", fillgateBin,
		"-ldflags=-X github.com/fillgate/fillgate/internal/opener.dirOverride="+openerDir,
		"github.com/fillgate/fillgate").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build fillgate: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// scene is one CLI scenario on the browser TestCLI shares. It has its own
// temp dir for fillgate's HOME and XDG dirs (state, logs, audit and
// cool-downs never meet another scenario's), a fake system opener, and
// the tabs it opens as the user. When it ends, every one of those tabs
// must still be open on the page it was opened on, no tab fillgate opened
// may be left, and no file under its dir may hold one of its secrets; then
// it closes its tabs for the next scenario.
//
// A browser reached over CDP is one a program drives, so by default
// fillgate logs in for it in a clean room and navigates the tab to where
// the login ended. The scenarios test fillgate typing into the driven
// page itself, which the person allows with driven = "in-page" (their
// consent that the program can read what they type): that is the
// policy's default here, unless the scenario asks for the clean room
// (cleanRoom).
type scene struct {
	*env             // the shared browser, with the scenario's t and tabs; up scans the profile at the end
	dir       string // fillgate's HOME and XDG dirs
	vars      map[string]string
	opened    string   // the file the fake opener appends each page path to
	decoy     string   // the file the opener in the agent's PATH would write
	output    [][]byte // everything fillgate printed, for the final scan
	cleanRoom bool     // the policy keeps the product's default, driven = "clean-room"
}

// scene starts a scenario in subtest t.
func (e *env) scene(t *testing.T) *scene {
	t.Helper()
	sc := &scene{env: e.fork(t), dir: t.TempDir(), vars: map[string]string{}}
	for _, kv := range browser.BaseEnv(sc.dir) {
		k, v, _ := strings.Cut(kv, "=")
		sc.vars[k] = v
	}
	bin := filepath.Join(sc.dir, "bin")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	sc.opened = filepath.Join(sc.vars["HOME"], "opened.txt")
	// An opener first in the agent's PATH, which fillgate must never run.
	sc.decoy = filepath.Join(sc.dir, "decoy.txt")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + sc.decoy + "'\n"
	if err := os.WriteFile(filepath.Join(bin, openerName()), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	sc.vars["PATH"] = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	sc.vars["FILLGATE_CDP_URL"] = sc.httpEndpoint()
	// A desktop session for the (fake) system opener: without a display
	// fillgate does not run it at all.
	sc.vars["DISPLAY"] = ":fillgate-test"
	sc.policy("") // the loopback page; a scenario may write another

	// Registered first, so it runs after the tabs' own cleanups.
	t.Cleanup(sc.finish)
	return sc
}

// finish checks the tabs, closes them and scans for the secrets. It
// reports rather than stops, so the scan always runs and the next
// scenario starts from the shared tabs alone.
func (sc *scene) finish() {
	t := sc.t
	sc.endTabs(func(target.ID) { t.Errorf("a tab fillgate opened (the prompt tab) is still open") })
	if _, err := os.Stat(sc.decoy); err == nil {
		t.Errorf("fillgate ran the opener in the agent's PATH")
	}
	if opened, err := os.ReadFile(sc.opened); err == nil && bytes.Contains(opened, []byte("127.0.0.1")) {
		t.Errorf("the system opener was given the prompt URL in its arguments")
	}
	for _, s := range sc.secrets {
		if n := leakscan.Dirs(t, s, sc.dir); n == 0 {
			t.Errorf("the leak scan read no files")
		}
		for _, out := range sc.output {
			leakscan.Bytes(t, s, "fillgate's output", out)
		}
		// The browser's and this test's argv and environment.
		leakscan.Process(t, s, sc.chrome.Cmd.Process.Pid)
		leakscan.Process(t, s, os.Getpid())
	}
	sc.up.secrets = append(sc.up.secrets, sc.secrets...)
}

// httpEndpoint is the shared browser's endpoint in its http:// form.
func (sc *scene) httpEndpoint() string {
	return fmt.Sprintf("http://127.0.0.1:%d", sc.chrome.Port)
}

// userTab opens url as the user and, when the scenario ends, checks the
// tab still shows that very document: same URL, and a mark the test left
// in it is still there (a reload or navigation would drop it).
func (sc *scene) userTab(rawURL string) *tab {
	sc.t.Helper()
	tb := sc.openTab(rawURL)
	mark := randomHex(sc.t)
	tb.eval(`window.__fillgateTestMark = ` + quote(mark) + `; true`)
	// Runs before openTab's cleanup detaches the harness from the tab.
	sc.t.Cleanup(func() {
		if sc.ctx.Err() != nil {
			return
		}
		same, err := chromedp.Run(tb.ctx, chromedp.Evaluate[bool](
			`window.__fillgateTestMark === `+quote(mark)+` && location.href === `+quote(rawURL)))
		if err != nil || !same {
			sc.t.Errorf("a user tab navigated, reloaded or closed (%v)", err)
		}
	})
	return tb
}

// passwordTab opens the password page of origin A as the user and clicks
// into its password field.
func (sc *scene) passwordTab() *tab {
	sc.t.Helper()
	tb := sc.userTab(sc.originA + "/password")
	tb.click(100, 95)
	return tb
}

// policy writes fillgate's policy file. Unless text names where the
// person answers, the prompt is the loopback page (prompt = "browser"),
// which these scenarios answer: the CDP path would otherwise always ask in
// the native dialog, which has scenarios of its own. Unless the scene is
// a clean-room one, the person lets fillgate type into the driven page
// (driven = "in-page", a top-level key, so it goes first).
func (sc *scene) policy(text string) {
	sc.t.Helper()
	if !strings.Contains(text, "prompt =") {
		text = "prompt = \"browser\"\n" + text
	}
	if !sc.cleanRoom {
		text = "driven = \"in-page\"\n" + text
	}
	dir := filepath.Join(sc.vars["XDG_CONFIG_HOME"], "fillgate")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		sc.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy"), []byte(text), 0o600); err != nil {
		sc.t.Fatal(err)
	}
}

// stateDir is fillgate's state dir in this scenario.
func (sc *scene) stateDir() string { return filepath.Join(sc.vars["XDG_STATE_HOME"], "fillgate") }

// fillRun is one `fillgate fill` process.
type fillRun struct {
	sc     *scene
	cmd    *exec.Cmd
	ctx    context.Context // the safety net: the process is killed when it ends
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
}

// fillgate starts `fillgate fill args...` with the scenario's environment.
// Without a --then in args it asks for --then none: these scenarios check
// the value in the field (the submit is TestCLISubmit's and the fill
// tests'). limit is a safety net: a run still going then is killed and
// fails the test.
func (sc *scene) fillgate(limit time.Duration, args ...string) *fillRun {
	sc.t.Helper()
	if !slices.Contains(args, "--then") {
		args = append(args, "--then", "none")
	}
	ctx, cancel := context.WithTimeout(sc.ctx, limit)
	r := &fillRun{sc: sc, ctx: ctx, done: make(chan struct{})}
	r.cmd = exec.CommandContext(ctx, fillgateBin, append([]string{"fill"}, args...)...)
	r.cmd.Env = make([]string, 0, len(sc.vars))
	for k, v := range sc.vars {
		r.cmd.Env = append(r.cmd.Env, k+"="+v)
	}
	r.cmd.Dir = sc.dir
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.cmd.WaitDelay = 5 * time.Second
	if err := r.cmd.Start(); err != nil {
		cancel()
		sc.t.Fatalf("start fillgate: %v", err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	sc.t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// fill starts a run with a generous safety net.
func (sc *scene) fill(args ...string) *fillRun { return sc.fillgate(2*time.Minute, args...) }

// outcome is what one run printed and how it exited.
type outcome struct {
	fill.Result
	code   int
	stdout []byte
	stderr []byte
}

// wait waits for the run, scans what it printed for the scenario's
// secrets, and parses the JSON result.
func (r *fillRun) wait() outcome {
	sc := r.sc
	sc.t.Helper()
	<-r.done
	o := outcome{code: r.cmd.ProcessState.ExitCode(), stdout: r.stdout.Bytes(), stderr: r.stderr.Bytes()}
	sc.output = append(sc.output, o.stdout, o.stderr)
	for _, s := range sc.secrets {
		leakscan.Bytes(sc.t, s, "fillgate's stdout", o.stdout)
		leakscan.Bytes(sc.t, s, "fillgate's stderr", o.stderr)
	}
	if r.ctx.Err() != nil {
		sc.t.Fatalf("fillgate fill did not finish before the test's safety net (%v); stderr: %s", r.ctx.Err(), sc.safe(o.stderr))
	}
	sc.t.Logf("fillgate %s → exit %d: %s", strings.Join(r.cmd.Args[1:], " "), o.code, sc.safe(bytes.TrimSpace(o.stdout)))
	if err := json.Unmarshal(o.stdout, &o.Result); err != nil {
		sc.t.Fatalf("stdout is not one JSON result: %s (stderr: %s)", sc.safe(o.stdout), sc.safe(o.stderr))
	}
	if want := o.Status.ExitCode(); o.code != want {
		sc.t.Errorf("exit code %d for status %s, want %d", o.code, o.Status, want)
	}
	return o
}

// safe returns b for a failure message, or a placeholder if it holds one
// of the scenario's secrets.
func (sc *scene) safe(b []byte) string {
	for _, s := range sc.secrets {
		if leakscan.Contains(b, s) {
			return "(withheld: it holds a secret)"
		}
	}
	return fmt.Sprintf("%q", b)
}

// want checks the status, that the run went through CDP, and that the
// detail says each of details.
func (o outcome) want(sc *scene, status fill.Status, details ...string) {
	sc.t.Helper()
	if o.Status != status || o.Via != fill.ViaCDP {
		sc.t.Fatalf("result %s, want status %s via cdp", sc.safe(o.stdout), status)
	}
	for _, d := range details {
		if !strings.Contains(o.Detail, d) {
			sc.t.Errorf("the detail does not say %q: %s", d, sc.safe([]byte(o.Detail)))
		}
	}
}

// scanProcess scans the running fillgate's argv and environment.
func (sc *scene) scanProcess(r *fillRun, secret []byte) {
	sc.t.Helper()
	select {
	case <-r.done:
		sc.t.Fatalf("fillgate exited before its argv and environment could be scanned")
	default:
	}
	leakscan.Process(sc.t, secret, r.cmd.Process.Pid)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/environ", r.cmd.Process.Pid)); err != nil {
		sc.t.Errorf("cannot read the running fillgate's environment: %v", err)
	}
}

// openedPages lists the pages the fake opener was given so far.
func (sc *scene) openedPages() []string {
	sc.t.Helper()
	data, err := os.ReadFile(sc.opened)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		sc.t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// promptURL waits until the fake opener got its n-th page (1-based) and
// returns the prompt URL the page leads to.
func (sc *scene) promptURL(r *fillRun, n int) string {
	sc.t.Helper()
	return sc.target(sc.promptPage(r, n))
}

// target is the prompt URL the opener's page leads to.
func (sc *scene) target(page string) string {
	sc.t.Helper()
	u, err := fakehuman.RedirectTarget(page)
	if err != nil {
		sc.t.Fatalf("the opener's page: %v", err)
	}
	return u
}

// promptPage waits until the fake opener got its n-th page (1-based) and
// returns its path. A clean-room fill opens the page in a browser of its
// own before it asks (within fillgate's 45 s for that): it is given
// longer.
func (sc *scene) promptPage(r *fillRun, n int) string {
	sc.t.Helper()
	wait := 30 * time.Second
	if sc.cleanRoom {
		wait = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(sc.ctx, wait)
	defer cancel()
	var pages []string
	if poll.Until(ctx, 25*time.Millisecond, func() (bool, error) {
		if pages = sc.openedPages(); len(pages) >= n {
			return true, nil
		}
		select {
		case <-r.done:
			sc.t.Fatalf("fillgate ended before opening the prompt: %s", sc.safe(r.wait().stdout))
		default:
		}
		return false, nil
	}) != nil {
		sc.t.Fatalf("the system opener was not called")
	}
	if len(pages) > n {
		sc.t.Fatalf("the opener got %d pages, want %d", len(pages), n)
	}
	return pages[n-1]
}

// wantOpened checks how many prompts the fake opener was given.
func (sc *scene) wantOpened(n int) {
	sc.t.Helper()
	if got := len(sc.openedPages()); got != n {
		sc.t.Errorf("the system opener was called %d times, want %d", got, n)
	}
}

// answer plays the human at the prompt whose page the system opener was
// given: it checks the prompt names origin, types secret and presses
// Enter.
func (sc *scene) answer(page, origin string, secret []byte) {
	sc.t.Helper()
	p := sc.openPrompt(page, origin)
	if err := p.Submit(sc.ctx, secret); err != nil {
		sc.t.Fatalf("submit the prompt: %v", err)
	}
	if !strings.Contains(p.HTML(), "Sent.") {
		sc.t.Fatalf("the prompt did not confirm the answer")
	}
}

// openPrompt opens the system opener's page as the human's browser
// would, follows it to the prompt, and checks the prompt names the exact
// origin the value is for and says where the value goes (sc.checkNote).
func (sc *scene) openPrompt(page, origin string) *fakehuman.Page {
	sc.t.Helper()
	p, err := fakehuman.OpenFile(sc.ctx, page)
	if err != nil {
		sc.t.Fatalf("open the prompt: %v", err)
	}
	if !strings.Contains(p.HTML(), origin) {
		sc.t.Errorf("the prompt does not name the origin %s", origin)
	}
	sc.checkNote(func(id string) bool { return strings.Contains(p.HTML(), `id="`+id+`"`) })
	return p
}

// checkNote checks, with has (whether the prompt has an element of that
// id), that the prompt tells the person where the value goes in this
// driven browser: into its page, which the program driving it can read
// (the note inpage), or into fillgate's clean room (cleanroom), never
// both.
func (sc *scene) checkNote(has func(id string) bool) {
	sc.t.Helper()
	inPage, cleanRoom := has("inpage"), has("cleanroom")
	switch {
	case sc.cleanRoom && (!cleanRoom || inPage):
		sc.t.Errorf("the prompt of a clean-room fill does not say the value goes into fillgate's clean room (cleanroom note %v, in-page note %v)", cleanRoom, inPage)
	case !sc.cleanRoom && (!inPage || cleanRoom):
		sc.t.Errorf("the prompt of an in-page fill in a driven browser does not warn that the program driving it can read the value (in-page note %v, cleanroom note %v)", inPage, cleanRoom)
	}
}

// promptTab waits for the tab fillgate opened in the browser for the
// prompt of run r, and returns it and its URL.
func (sc *scene) promptTab(r *fillRun) (target.ID, string) {
	sc.t.Helper()
	in := sc.promptTarget(r.done, func() string { return sc.safe(r.wait().stdout) })
	return in.TargetID, in.URL
}

// promptTarget waits for the tab fillgate opened in the browser for the
// prompt: a page target that is nobody's tab, on a loopback http URL. A
// run that ends (done closes) first fails the test, with what ended says.
func (sc *scene) promptTarget(done <-chan struct{}, ended func() string) *target.Info {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(sc.ctx, 30*time.Second)
	defer cancel()
	var found *target.Info
	if poll.Until(ctx, 25*time.Millisecond, func() (bool, error) {
		for _, in := range sc.targets("page") {
			if !sc.known(in.TargetID) && strings.HasPrefix(in.URL, "http://127.0.0.1:") {
				found = in
				return true, nil
			}
		}
		select {
		case <-done:
			sc.t.Fatalf("fillgate ended before opening the prompt tab: %s", ended())
		default:
		}
		return false, nil
	}) != nil {
		sc.t.Fatalf("no prompt tab appeared")
	}
	return found
}

// answerInTab plays the human at the prompt tab in the browser itself:
// it waits for the page to render, checks what it says, types secret and
// presses Enter.
func (sc *scene) answerInTab(id target.ID, promptURL string, secret []byte, mentions ...string) {
	sc.t.Helper()
	ctx, cancel, err := browser.AttachTarget(sc.ctx, sc.bctx, id)
	if err != nil {
		sc.t.Fatalf("attach to the prompt tab: %v", err)
	}
	defer cancel()
	prompt := &tab{e: sc.env, id: id, ctx: ctx}
	if !prompt.becomes(`location.href === ` + quote(promptURL) + ` && ` + promptwatch.Ready) {
		sc.t.Fatalf("the prompt tab did not get ready for an answer")
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		sc.t.Fatalf("read the prompt: %v", err)
	}
	for _, m := range mentions {
		if !strings.Contains(text, m) {
			sc.t.Errorf("the prompt does not mention %q", m)
		}
	}
	sc.checkNote(func(id string) bool {
		there, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById(`+quote(id)+`) !== null`))
		if err != nil {
			sc.t.Fatalf("read the prompt: %v", err)
		}
		return there
	})
	focused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement.id`))
	if err != nil || focused != "value" {
		sc.t.Fatalf("the prompt's field does not have focus (%q, %v)", focused, err)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(string(secret))); err != nil {
		sc.t.Fatalf("type into the prompt: %v", err)
	}
	// The answer goes on the key press, and fillgate may close the tab
	// before the key is released: a detached target is no failure.
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil && !errors.Is(err, chromedp.ErrTargetDetached) {
		sc.t.Fatalf("press Enter in the prompt: %v", err)
	}
}

// checkOpenerPage checks the page fillgate handed the system opener: a
// file only the user can read, in a directory of its own under
// fillgate's runtime dir, and that the opener ran with a trimmed
// environment that still reaches the user's desktop.
func (sc *scene) checkOpenerPage(page string) {
	sc.t.Helper()
	runtimeDir := filepath.Join(sc.vars["XDG_RUNTIME_DIR"], "fillgate", "open")
	if filepath.Dir(filepath.Dir(page)) != runtimeDir {
		sc.t.Errorf("the opener's page is not in a directory of its own under %s", runtimeDir)
	}
	if fi, err := os.Stat(page); err != nil || fi.Mode().Perm() != 0o600 {
		sc.t.Errorf("the opener's page is not 0600 (%v)", err)
	}
	if fi, err := os.Stat(filepath.Dir(page)); err != nil || fi.Mode().Perm() != 0o700 {
		sc.t.Errorf("the opener's page's directory is not 0700 (%v)", err)
	}
	env, err := os.ReadFile(filepath.Join(sc.vars["HOME"], "opener.env"))
	if err != nil {
		sc.t.Fatalf("the opener's environment: %v", err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	for _, k := range []string{"HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"} {
		if vars[k] != sc.vars[k] {
			sc.t.Errorf("the opener's %s is %q, want the caller's", k, vars[k])
		}
	}
	if strings.Contains(vars["PATH"], filepath.Join(sc.dir, "bin")) {
		sc.t.Errorf("the opener ran with the agent's PATH")
	}
	if _, ok := vars["FILLGATE_CDP_URL"]; ok {
		sc.t.Errorf("the opener got the agent's FILLGATE_CDP_URL")
	}
}

// noPromptURL checks the agent never saw the prompt URL.
func (o outcome) noPromptURL(sc *scene, promptURL string) {
	sc.t.Helper()
	u, err := url.Parse(promptURL)
	if err != nil || len(u.Path) < 8 {
		sc.t.Fatalf("the prompt URL has no nonce path")
	}
	for _, out := range [][]byte{o.stdout, o.stderr} {
		if bytes.Contains(out, []byte(u.Path)) || bytes.Contains(out, []byte(u.Host)) {
			sc.t.Errorf("fillgate's output names the prompt URL")
		}
	}
}

// deadEndpoint is a loopback http URL nothing listens on.
func deadEndpoint(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// withHost is the origin URL on host instead of the IP, same port.
func withHost(origin, host string) string {
	u, _ := url.Parse(origin)
	return "http://" + net.JoinHostPort(host, u.Port())
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// loopbackAlias finds a host name the hosts file maps to a loopback
// address, other than localhost: a name that is not loopback as written,
// yet reaches only this machine without asking DNS.
func loopbackAlias() string {
	data, err := os.ReadFile("/etc/hosts")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(data)) {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "127.") {
			continue
		}
		for _, name := range f[1:] {
			n := strings.ToLower(name)
			if n != "localhost" && !strings.HasSuffix(n, ".localhost") && !strings.Contains(n, "localhost.") {
				return n
			}
		}
	}
	return ""
}

// TestCLI drives the built `fillgate fill` through the CDP fallback
// against one real headless Chromium (debugging port, no extension),
// shared by scenarios that each start from the same open tabs. The test
// plays the user (opens tabs, clicks into fields), the human at the prompt
// and the agent (reads the JSON result and the exit code).
func TestCLI(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the CLI scenarios fake xdg-open and read /proc: Linux only")
	}
	e := newEnvWithin(t, 10*time.Minute)
	t.Cleanup(func() {
		for _, s := range e.secrets {
			leakscan.Bytes(t, s, "Chromium's output", []byte(e.chrome.Output()))
		}
	})

	t.Run("cdp-tab prompt, password, --via cdp", func(t *testing.T) {
		sc := e.scene(t)
		sc.policy("prompt_opener = \"cdp-tab\"\n")
		tb := sc.passwordTab()
		secret := sc.secret()
		r := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json")
		id, promptURL := sc.promptTab(r)
		sc.scanProcess(r, secret)
		sc.answerInTab(id, promptURL, secret, sc.originA, "127.0.0.1")
		leakscan.Process(t, secret, r.cmd.Process.Pid) // if it still runs
		o := r.wait()
		o.want(sc, fill.StatusOK, "inserted into the focused password field")
		if o.Origin != sc.originA || o.Field != fill.FieldPassword || o.Service != "127.0.0.1" || o.Fallback != "" {
			t.Errorf("result %s: wrong service, origin or field", sc.safe(o.stdout))
		}
		if !fieldIs(t, tb.ctx, "pw", secret) {
			t.Errorf("password field: value differed")
		}
		if !tb.evalBool(`window.trusted >= 1 && document.getElementById('user').value === ''`) {
			t.Errorf("the page saw no trusted input event, or another field changed")
		}
		o.noPromptURL(sc, promptURL)
		sc.wantOpened(0)
	})

	t.Run("system opener, one-time code, auto falls back to cdp", func(t *testing.T) {
		sc := e.scene(t)
		tb := sc.userTab(sc.originA + "/otp")
		tb.click(100, 95)
		before := len(sc.pageTargets())
		secret := sc.secret()
		// No policy file, no --via: auto, and no host is running.
		r := sc.fill("--service", "127.0.0.1", "--field", "otp", "--json")
		page := sc.promptPage(r, 1)
		promptURL := sc.target(page)
		sc.scanProcess(r, secret)
		if got := len(sc.pageTargets()); got != before {
			t.Errorf("the system opener path opened a tab in the CDP browser")
		}
		sc.checkOpenerPage(page)
		sc.answer(page, sc.originA, secret)
		o := r.wait()
		o.want(sc, fill.StatusOK, "one-time-code")
		if o.Origin != sc.originA || o.Field != fill.FieldOTP {
			t.Errorf("result %s: wrong origin or field", sc.safe(o.stdout))
		}
		if !takeField(t, tb.ctx, "otp", secret) {
			t.Errorf("one-time-code field: value differed")
		}
		o.noPromptURL(sc, promptURL)
		opened, err := os.ReadFile(sc.opened)
		if err != nil {
			t.Fatal(err)
		}
		leakscan.Bytes(t, secret, "the fake opener's file", opened)
		// The audit log and the log name the outcome, never the value.
		audit, err := os.ReadFile(filepath.Join(sc.stateDir(), "audit.jsonl"))
		if err != nil || !bytes.Contains(audit, []byte(`"status":"ok"`)) || !bytes.Contains(audit, []byte(`"via":"cdp"`)) {
			t.Errorf("the audit log does not record the fill (%v)", err)
		}
		if _, err := os.Stat(filepath.Join(sc.stateDir(), "fillgate.log")); err != nil {
			t.Errorf("no fillgate.log: %v", err)
		}
	})

	t.Run("neither a host nor a CDP browser", func(t *testing.T) {
		sc := e.scene(t)
		dead := deadEndpoint(t)
		sc.vars["FILLGATE_CDP_URL"] = dead
		o := sc.fillgate(30*time.Second, "--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusFailed,
			"no browser with the fillgate extension is running",
			"CDP endpoint "+dead+" (from FILLGATE_CDP_URL): connection refused",
			"to fix", "fillgate install", "--remote-debugging-port")
		if o.code != 6 {
			t.Errorf("exit code %d, want 6", o.code)
		}

		// --via extension does not fall back.
		o = sc.fillgate(30*time.Second, "--service", "127.0.0.1", "--via", "extension", "--json").wait()
		if o.Status != fill.StatusFailed || o.Via != fill.ViaExtension || !strings.Contains(o.Detail, "fillgate doctor") {
			t.Errorf("--via extension without a host: %s", sc.safe(o.stdout))
		}
		sc.wantOpened(0)
	})

	t.Run("endpoint resolution", func(t *testing.T) {
		sc := e.scene(t)
		sc.passwordTab()
		live := sc.httpEndpoint()
		dead0, dead1, dead2 := deadEndpoint(t), deadEndpoint(t), deadEndpoint(t)
		// Asking for a service no tab has is refused after inspecting the
		// live browser, naming its tab's origin; a dead endpoint fails
		// before. Either way the detail names the endpoint and its source.
		for _, c := range []struct {
			name                  string
			fillgate, brw, policy string
			status                fill.Status
			says                  string
		}{
			{"FILLGATE_CDP_URL first", live, dead1, dead2, fill.StatusRefused, live + " (from FILLGATE_CDP_URL)"},
			{"FILLGATE_CDP_URL even when dead", dead0, live, live, fill.StatusFailed, dead0 + " (from FILLGATE_CDP_URL): connection refused"},
			{"then BROWSER_CDP_URL", "", live, dead2, fill.StatusRefused, live + " (from BROWSER_CDP_URL)"},
			{"BROWSER_CDP_URL even when dead", "", dead1, live, fill.StatusFailed, dead1 + " (from BROWSER_CDP_URL): connection refused"},
			{"then the policy", "", "", live, fill.StatusRefused, live + " (from policy)"},
			{"ws:// form", strings.Replace(live, "http://", "ws://", 1), "", "", fill.StatusRefused, strings.Replace(live, "http://", "ws://", 1) + " (from FILLGATE_CDP_URL)"},
			{"browser WebSocket URL", sc.chrome.WebSocketURL, "", "", fill.StatusRefused, strings.Replace(live, "http://", "ws://", 1) + " (from FILLGATE_CDP_URL)"},
		} {
			sc.vars["FILLGATE_CDP_URL"], sc.vars["BROWSER_CDP_URL"] = c.fillgate, c.brw
			pol := "rate_limit = \"100/1m\"\n"
			if c.policy != "" {
				pol += "cdp_url = \"" + c.policy + "\"\n"
			}
			sc.policy(pol)
			o := sc.fillgate(time.Minute, "--service", "127.0.0.2", "--via", "cdp", "--json").wait()
			if o.Status != c.status || !strings.Contains(o.Detail, "CDP endpoint "+c.says) {
				t.Errorf("%s: got %s, want %s saying %q", c.name, sc.safe(o.stdout), c.status, c.says)
			}
			if c.status == fill.StatusRefused && !strings.Contains(o.Detail, sc.originA) {
				t.Errorf("%s: the refusal does not list the tab's origin: %s", c.name, sc.safe(o.stdout))
			}
			if strings.Contains(o.Detail, "/devtools/") || strings.Contains(o.Detail, "/password") {
				t.Errorf("%s: the detail quotes a path: %s", c.name, sc.safe(o.stdout))
			}
		}
		sc.wantOpened(0)
	})

	t.Run("non-loopback endpoint", func(t *testing.T) {
		sc := e.scene(t)
		sc.passwordTab()
		// 10.255.255.1 is not routed: a dial would hang for minutes (until
		// the kernel gives up on the SYN), long past the 20 s safety net. A
		// refusal inside it shows that no dial was made; it is not a
		// timing assertion.
		const remote = "http://10.255.255.1:9222"
		refused := func(name string) {
			t.Helper()
			o := sc.fillgate(20*time.Second, "--service", "127.0.0.1", "--via", "cdp", "--json").wait()
			if o.Status != fill.StatusRefused || !strings.Contains(o.Detail, "not loopback") {
				t.Errorf("%s: got %s, want refused as not loopback", name, sc.safe(o.stdout))
			}
		}
		sc.vars["FILLGATE_CDP_URL"] = remote
		refused("FILLGATE_CDP_URL")
		sc.vars["FILLGATE_CDP_URL"], sc.vars["BROWSER_CDP_URL"] = "", "ws://10.255.255.1:9222/devtools/browser/x"
		refused("BROWSER_CDP_URL")
		// The allow list names exact hosts: another one does not help.
		sc.vars["FILLGATE_CDP_URL"], sc.vars["BROWSER_CDP_URL"] = remote, ""
		sc.policy("cdp_allow_hosts = [\"10.255.255.2\", \"devbox.lan\"]\n")
		refused("another host allowed")

		// In the policy's cdp_url, without the allow list, the policy
		// itself is invalid.
		sc.vars["FILLGATE_CDP_URL"] = ""
		sc.policy("cdp_url = \"" + remote + "\"\n")
		o := sc.fillgate(20*time.Second, "--service", "127.0.0.1", "--via", "cdp", "--json").wait()
		if o.Status != fill.StatusRefused || !strings.Contains(o.Detail, "fillgate policy check") {
			t.Errorf("policy cdp_url off loopback: got %s, want refused with the policy check hint", sc.safe(o.stdout))
		}

		// cdp_allow_hosts is the way to allow a host. To show it without
		// sending a packet anywhere, use a name the hosts file maps to
		// loopback: as written it is not loopback, so it is refused until
		// the policy names it; then fillgate dials it (reaching this
		// Chromium, which answers only to IP or localhost Host headers).
		alias := loopbackAlias()
		if alias == "" {
			t.Log("no loopback alias in /etc/hosts: the allow-list half is not run")
			sc.wantOpened(0)
			return
		}
		aliased := withHost(sc.httpEndpoint(), alias)
		sc.vars["FILLGATE_CDP_URL"] = aliased
		sc.policy("")
		refused("a loopback alias, not allowed")
		// Allowed, a host off loopback is used only over TLS: over http it
		// is refused before anything is dialled, with the reason.
		sc.policy("cdp_allow_hosts = [\"" + alias + "\"]\n")
		o = sc.fillgate(time.Minute, "--service", "127.0.0.1", "--via", "cdp", "--json").wait()
		if o.Status != fill.StatusRefused || !strings.Contains(o.Detail, "must use wss:// or https://") {
			t.Errorf("an allowed host over http: got %s, want refused as not over TLS", sc.safe(o.stdout))
		}
		// Over https fillgate dials it (this Chromium speaks no TLS, so
		// the handshake fails): no refusal, and the detail names it.
		secure := strings.Replace(aliased, "http://", "https://", 1)
		sc.vars["FILLGATE_CDP_URL"] = secure
		o = sc.fillgate(time.Minute, "--service", "127.0.0.1", "--via", "cdp", "--json").wait()
		if o.Status != fill.StatusFailed || !strings.Contains(o.Detail, "CDP endpoint "+secure+" (from FILLGATE_CDP_URL)") {
			t.Errorf("an allowed host over https was not dialled: %s", sc.safe(o.stdout))
		}
		sc.wantOpened(0)
	})

	t.Run("no_response, cool-down across processes, another service", func(t *testing.T) {
		sc := e.scene(t)
		a := sc.passwordTab()
		b := sc.userTab(sc.originB + "/otp")
		b.click(100, 95)

		r := sc.fill("--service", "127.0.0.1", "--timeout", "2s", "--json")
		promptURL := sc.promptURL(r, 1)
		o := r.wait()
		o.want(sc, fill.StatusNoResponse, "nobody answered")
		if o.Fallback == "" {
			t.Errorf("no_response without a fallback hint")
		}
		o.noPromptURL(sc, promptURL)
		if p, err := fakehuman.Open(sc.ctx, promptURL); err == nil {
			t.Errorf("the prompt still answers after no_response (status %d)", p.StatusCode())
		}

		// A second process from the same agent, same service: refused at
		// once, no prompt.
		o = sc.fillgate(30*time.Second, "--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusRefused, "nobody answered the last prompt for 127.0.0.1", "will not ask again before")
		if o.Fallback == "" {
			t.Errorf("the refusal after no_response has no fallback hint")
		}
		sc.wantOpened(1)
		state, err := os.ReadFile(filepath.Join(sc.stateDir(), "cdp", "cdp-state.json"))
		if err != nil || !bytes.Contains(state, []byte(`"127.0.0.1"`)) {
			t.Errorf("the cool-down is not in the state dir (%v)", err)
		}

		// Another service still works.
		secret := sc.secret()
		r = sc.fill("--service", "127.0.0.2", "--field", "otp", "--json")
		page := sc.promptPage(r, 2)
		promptURL = sc.target(page)
		sc.scanProcess(r, secret)
		sc.answer(page, sc.originB, secret)
		o = r.wait()
		o.want(sc, fill.StatusOK)
		if o.Origin != sc.originB {
			t.Errorf("result %s: wrong origin", sc.safe(o.stdout))
		}
		if !fieldIs(t, b.ctx, "otp", secret) {
			t.Errorf("one-time-code field of the other service: value differed")
		}
		if !allEmpty(t, a.ctx) {
			t.Errorf("the cooling-down service's tab was filled")
		}
	})

	t.Run("one prompt per service across processes", func(t *testing.T) {
		sc := e.scene(t)
		tb := sc.passwordTab()
		secret := sc.secret()
		first := sc.fill("--service", "127.0.0.1", "--json")
		page := sc.promptPage(first, 1)
		sc.scanProcess(first, secret)

		o := sc.fillgate(30*time.Second, "--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusRefused, "already open")
		sc.wantOpened(1)

		sc.answer(page, sc.originA, secret)
		o = first.wait()
		o.want(sc, fill.StatusOK)
		if !fieldIs(t, tb.ctx, "pw", secret) {
			t.Errorf("password field: value differed")
		}

		// A process that dies with its prompt open leaves no claim behind:
		// the next one gets its own prompt.
		crashed := sc.fill("--service", "127.0.0.1", "--json")
		sc.promptPage(crashed, 2)
		if err := crashed.cmd.Process.Kill(); err != nil {
			t.Fatalf("kill fillgate: %v", err)
		}
		<-crashed.done
		next := sc.fill("--service", "127.0.0.1", "--json")
		p := sc.openPrompt(sc.promptPage(next, 3), sc.originA)
		if err := p.Cancel(sc.ctx); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		next.wait().want(sc, fill.StatusCancelled)
	})

	t.Run("cancel", func(t *testing.T) {
		sc := e.scene(t)
		tb := sc.passwordTab()

		// The human types, then presses Cancel.
		secret := sc.secret()
		r := sc.fill("--service", "127.0.0.1", "--json")
		p := sc.openPrompt(sc.promptPage(r, 1), sc.originA)
		if err := p.CancelTyped(sc.ctx, secret); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		o := r.wait()
		o.want(sc, fill.StatusCancelled, "cancelled")
		if o.code != 4 {
			t.Errorf("exit code %d, want 4", o.code)
		}
		if !allEmpty(t, tb.ctx) {
			t.Fatalf("a field was filled although the human cancelled")
		}

		// The human closes the prompt tab.
		sc.policy("prompt_opener = \"cdp-tab\"\n")
		r = sc.fill("--service", "127.0.0.1", "--json")
		id, _ := sc.promptTab(r)
		if _, err := cdp.Call(sc.ctx, chromedp.FromContext(sc.bctx).Browser, target.CloseTarget, target.CloseTargetParams{TargetID: id}); err != nil {
			t.Fatalf("close the prompt tab: %v", err)
		}
		o = r.wait()
		o.want(sc, fill.StatusCancelled, "closed without an answer")
		if !allEmpty(t, tb.ctx) {
			t.Fatalf("a field was filled although the human closed the prompt")
		}

		// The agent interrupts `fillgate fill`: cancelled, and fillgate
		// closes its prompt tab (finish checks none is left).
		r = sc.fill("--service", "127.0.0.1", "--json")
		sc.promptTab(r)
		if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatalf("interrupt fillgate: %v", err)
		}
		o = r.wait()
		o.want(sc, fill.StatusCancelled, "the agent disconnected")
		if !allEmpty(t, tb.ctx) {
			t.Fatalf("a field was filled although the agent gave up")
		}
	})

	t.Run("refused: wrong service and look-alike", func(t *testing.T) {
		sc := e.scene(t)
		lookalike := withHost(sc.originA, "bank.localhost.evil.localhost")
		tb := sc.userTab(lookalike + "/password")
		tb.click(100, 95)

		// Picking a tab: none matches the service.
		o := sc.fill("--service", "bank.localhost", "--json").wait()
		o.want(sc, fill.StatusRefused, "no page target's focused frame matches the service", lookalike)
		// Pinned with --tab, the policy refuses the origin.
		o = sc.fill("--service", "bank.localhost", "--tab", string(tb.id), "--json").wait()
		o.want(sc, fill.StatusRefused, lookalike, "bank.localhost")
		if o.Origin != lookalike {
			t.Errorf("result %s: want the look-alike origin", sc.safe(o.stdout))
		}
		o = sc.fill("--service", "127.0.0.1", "--tab", string(tb.id), "--json").wait()
		o.want(sc, fill.StatusRefused, lookalike)
		sc.wantOpened(0)
		if !allEmpty(t, tb.ctx) {
			t.Errorf("a refused request filled a field")
		}
	})

	t.Run("refused: username field focused", func(t *testing.T) {
		sc := e.scene(t)
		tb := sc.userTab(sc.originA + "/password")
		tb.click(100, 35)
		o := sc.fill("--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusRefused, "is not a password field")
		sc.wantOpened(0)
		if !allEmpty(t, tb.ctx) {
			t.Errorf("a refused request filled a field")
		}
	})

	t.Run("clean room (the default): then none and a field in a frame are refused before anything is asked", func(t *testing.T) {
		sc := e.scene(t)
		sc.cleanRoom = true
		// A frame's origin may be filled inside the page only when the
		// policy names the page: here the frame is refused by the clean
		// room, not by the policy.
		sc.policy(fmt.Sprintf("[service.\"127.0.0.2\"]\nframe_ancestors = [%q]\n", sc.originA))
		tb := sc.passwordTab()
		o := sc.fill("--service", "127.0.0.1", "--json").wait() // --then none
		o.want(sc, fill.StatusRefused, "fillgate logs in for it in a clean room", "(then none)", `set driven = "in-page" for 127.0.0.1`)
		if o.Submitted != nil || o.HandedOver != nil {
			t.Errorf("a refusal says submitted or handed over: %s", sc.safe(o.stdout))
		}

		framed := sc.userTab(sc.originA + "/frame?src=" + sc.originB + "/password")
		fctx := sc.frameCtx(sc.originB + "/password") // an out-of-process frame, loaded
		framed.clickInFrame(fctx, 100, 95, "pw")      // its password field
		o = sc.fill("--service", "127.0.0.2", "--then", "submit", "--json").wait()
		o.want(sc, fill.StatusRefused, "the login field is in a frame ("+sc.originB+" inside "+sc.originA+")", `driven = "in-page" for 127.0.0.2`)
		if o.HandedOver != nil {
			t.Errorf("a refusal says handed over: %s", sc.safe(o.stdout))
		}
		sc.wantOpened(0)
		if !allEmpty(t, tb.ctx) || !allEmpty(t, fctx) {
			t.Errorf("a refused request filled a field")
		}
	})

	t.Run("refused: several matching tabs, then --tab", func(t *testing.T) {
		sc := e.scene(t)
		first := sc.passwordTab()
		second := sc.passwordTab()

		o := sc.fill("--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusRefused, "several page targets match the service", "--tab", "candidates: "+sc.originA)
		if strings.Contains(o.Detail, "/password") {
			t.Errorf("the refusal quotes a page path: %s", sc.safe(o.stdout))
		}
		sc.wantOpened(0)

		secret := sc.secret()
		r := sc.fill("--service", "127.0.0.1", "--tab", string(second.id), "--json")
		sc.answer(sc.promptPage(r, 1), sc.originA, secret)
		o = r.wait()
		o.want(sc, fill.StatusOK)
		if !fieldIs(t, second.ctx, "pw", secret) {
			t.Errorf("the tab named with --tab: value differed")
		}
		if !allEmpty(t, first.ctx) {
			t.Errorf("the other tab was filled")
		}
	})
}
