package pageprompt_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/tests/fakes/squatter"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// helperEnv makes this test binary a prompt process for the tests below
// (TestHelperPromptProcess): the value is the prompt's budget.
const helperEnv = "FILLGATE_PROMPT_HELPER_BUDGET"

// TestHelperPromptProcess is fillgate in a process of its own for the
// tests below, which freeze or kill it: it opens a prompt with the budget
// in helperEnv, prints its URL and waits until stdin closes. Run as a test
// without that variable, it does nothing.
func TestHelperPromptProcess(t *testing.T) {
	budget, err := time.ParseDuration(os.Getenv(helperEnv))
	if err != nil {
		return
	}
	info := testInfo()
	info.Budget = budget
	p, err := pageprompt.Start(context.Background(), info)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(p.URL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// promptProcess is a prompt in another process.
type promptProcess struct {
	cmd *exec.Cmd
	url string
}

// startPromptProcess starts this test binary as a prompt process with
// budget; it dies with the test (its process group is killed) and with
// this process (Pdeathsig).
func startPromptProcess(t *testing.T, ctx context.Context, budget time.Duration) *promptProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPromptProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+budget.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, stdout := child.Pipes(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSpace(line)
	}()
	select {
	case line := <-lines:
		if !strings.HasPrefix(line, "http://127.0.0.1:") {
			t.Fatalf("the prompt process said %q", line)
		}
		return &promptProcess{cmd: cmd, url: line}
	case <-ctx.Done():
		t.Fatalf("the prompt process did not start")
		return nil
	}
}

// signal sends sig to the prompt process.
func (pp *promptProcess) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(pp.cmd.Process.Pid, sig); err != nil {
		t.Fatalf("signal the prompt process: %v", err)
	}
}

// answersSent are the recorded POSTs that carry an answer.
func answersSent(t *testing.T, rec *browser.Recorder) int {
	t.Helper()
	n := 0
	for _, p := range rec.Posts(t) {
		if q, err := url.ParseQuery(string(p.Body)); err != nil || q.Get("action") != "watch" {
			n++
		}
	}
	return n
}

// TestPageDisablesItselfAtItsDeadline freezes fillgate (SIGSTOP: its
// sockets stay open, it answers nothing, and the page's watch never ends)
// while the page is on screen: the page disables itself at its own
// deadline, and what the human then types goes nowhere.
func TestPageDisablesItselfAtItsDeadline(t *testing.T) {
	ctx := testctx.New(t)
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	bctx := c.Attach(t, ctx)
	secret := leakscan.NewSecret(t)
	tab := newChromiumTab(t, bctx) // before the prompt's 5 s start
	pp := startPromptProcess(t, ctx, 5*time.Second)
	loadInTab(t, tab, pp.url)
	rec := browser.Record(t, tab)
	pp.signal(t, syscall.SIGSTOP)
	defer pp.signal(t, syscall.SIGCONT)
	waitState(t, ctx, tab, "expired")
	if !eval[bool](t, tab, `document.getElementById("value").disabled && document.getElementById("cancel").disabled`) {
		t.Errorf("the expired page's field or buttons are still enabled")
	}
	typeAndEnter(t, tab, secret)
	if !eval[bool](t, tab, `document.getElementById("value").value === ""`) {
		t.Errorf("the expired page's field took what was typed")
	}
	if n := answersSent(t, rec); n != 0 {
		t.Errorf("the expired page sent %d answers", n)
	}
	leakscan.Bytes(t, secret, "what DevTools saw the page send", rec.All(t))
}

// TestPageClosesWhenFillgateDies kills fillgate (SIGKILL) while the page is
// on screen: the page's watch ends with the connection, so the page
// disables itself at once, long before its deadline. Another local user
// (uid nobody) then binds the freed port: what the human types reaches
// nobody, and the squatter receives nothing.
func TestPageClosesWhenFillgateDies(t *testing.T) {
	ctx := testctx.New(t)
	bin := squatter.Build(t)
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{})
	bctx := c.Attach(t, ctx)
	secret := leakscan.NewSecret(t)
	pp := startPromptProcess(t, ctx, 10*time.Minute)
	tab := openInChromium(t, bctx, pp.url)
	rec := browser.Record(t, tab)
	pp.signal(t, syscall.SIGKILL)
	waitState(t, ctx, tab, "closed")
	sq, err := squatter.Start(t, ctx, bin, hostOf(t, pp.url))
	if err != nil {
		t.Fatalf("the squatter could not bind the port of a prompt whose process died: %v", err)
	}
	typeAndEnter(t, tab, secret)
	if err := sq.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sq.Requests(); n != 0 {
		t.Errorf("the squatter received %d requests from the dead prompt's page", n)
	}
	if n := answersSent(t, rec); n != 0 {
		t.Errorf("the closed page sent %d answers", n)
	}
	leakscan.Bytes(t, secret, "the squatter's log", sq.Received())
	leakscan.Bytes(t, secret, "what DevTools saw the page send", rec.All(t))
}

// TestNothingRemembersTheValue types a secret into the prompt in real
// Chromium with a profile on disk and leaves it there unsent. The human
// then goes to another page and back: the session history brings the
// prompt back empty (the field's state is never saved with the history
// entry). The browser then quits and restores its last session: neither
// its profile (session files, cache, form data) nor a restored tab holds
// what was typed.
func TestNothingRemembersTheValue(t *testing.T) {
	ctx := testctx.New(t)
	profile := t.TempDir()
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<p>elsewhere</p>")
	}))
	defer elsewhere.Close()
	c := browser.StartChromium(t, ctx, browser.ChromiumOptions{UserDataDir: profile})
	bctx := c.Attach(t, ctx)
	secret := leakscan.NewSecret(t)
	p, _ := startPrompt(t, ctx, testInfo())
	tab := openInChromium(t, bctx, p.URL())
	if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret))); err != nil {
		t.Fatalf("type into the prompt: %v", err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(elsewhere.URL+"/")); err != nil {
		t.Fatalf("go elsewhere: %v", err)
	}
	if err := chromedp.Do(tab, chromedp.NavigateBack()); err != nil {
		t.Fatalf("go back: %v", err)
	}
	waitURL(t, ctx, tab, p.URL())
	if !eval[bool](t, tab, `document.getElementById("value").value === ""`) {
		t.Errorf("going back brought the prompt back with what was typed")
	}
	hist, err := chromedp.Call(tab, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		t.Fatalf("the tab's history: %v", err)
	}
	for _, e := range hist.Entries {
		if e.URL != p.URL() && e.URL != "about:blank" && e.URL != elsewhere.URL+"/" {
			t.Errorf("the session history holds another entry: %s", e.URL)
		}
	}
	// Typed again, then the browser quits with the prompt open.
	if err := chromedp.Do(tab, chromedp.KeyEvent(string(secret))); err != nil {
		t.Fatalf("type into the prompt: %v", err)
	}
	c.Stop()
	if n := leakscan.Dirs(t, secret, profile); n == 0 {
		t.Errorf("the leak scan read no files in the profile")
	}

	again := browser.StartChromium(t, ctx, browser.ChromiumOptions{UserDataDir: profile, Args: []string{"--restore-last-session"}})
	actx := again.Attach(t, ctx)
	if restored := restoredPrompt(t, ctx, actx, p.URL()); restored == "" {
		t.Logf("Chromium restored no prompt tab")
	} else {
		rtab, cancel := chromedp.NewContext(actx, chromedp.WithTargetID(target.ID(restored)), chromedp.WithDetachOnCancel())
		defer cancel()
		if !eval[bool](t, rtab, `!document.getElementById("value") || document.getElementById("value").value === ""`) {
			t.Errorf("the restored prompt tab holds what was typed")
		}
	}
	again.Stop()
	leakscan.Dirs(t, secret, profile)
}

// restoredPrompt waits for the restored browser to show its page targets
// and returns the id of one at promptURL, or "" when it restored none.
func restoredPrompt(t *testing.T, ctx, bctx context.Context, promptURL string) string {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		infos, err := chromedp.Targets(bctx)
		if err != nil {
			t.Fatalf("targets: %v", err)
		}
		for _, in := range infos {
			if in.Type == "page" && in.URL == promptURL {
				return string(in.TargetID)
			}
		}
		select {
		case <-wait.Done():
			return ""
		case <-time.After(100 * time.Millisecond):
		}
	}
}
