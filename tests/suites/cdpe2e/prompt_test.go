//go:build linux

package cdpe2e

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/squatter"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// targetInfo is the browser's current info on target id, or nil once it
// is gone.
func (sc *scene) targetInfo(id target.ID) *target.Info {
	sc.t.Helper()
	infos, err := chromedp.Targets(sc.bctx)
	if err != nil {
		sc.t.Fatalf("targets: %v", err)
	}
	for _, in := range infos {
		if in.TargetID == id {
			return in
		}
	}
	return nil
}

// browserContexts lists the browser's contexts made over CDP.
func (sc *scene) browserContexts() []cdp.BrowserContextID {
	sc.t.Helper()
	res, err := cdp.Call(sc.ctx, chromedp.FromContext(sc.bctx).Browser, target.GetBrowserContexts, cdp.Empty{})
	if err != nil {
		sc.t.Fatalf("browser contexts: %v", err)
	}
	return res.BrowserContextIDs
}

// waitGone waits until target id is gone and the browser's contexts are
// want again.
func (sc *scene) waitGone(id target.ID, want []cdp.BrowserContextID, what string) {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(sc.ctx, 30*time.Second)
	defer cancel()
	if poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		return sc.targetInfo(id) == nil && slices.Equal(sc.browserContexts(), want), nil
	}) != nil {
		sc.t.Fatalf("%s: the prompt tab or its browser context stayed", what)
	}
}

// promptTabOf waits for the prompt tab of a run that ends when done
// closes, and checks it is in a browser context made for it: not the
// user's, and not one that existed before.
func (sc *scene) promptTabOf(done <-chan struct{}, user *tab, before []cdp.BrowserContextID) target.ID {
	sc.t.Helper()
	in := sc.promptTarget(done, func() string { return "" })
	mine := sc.targetInfo(user.id)
	if in.BrowserContextID == "" || mine == nil || in.BrowserContextID == mine.BrowserContextID || slices.Contains(before, in.BrowserContextID) {
		sc.t.Errorf("the prompt tab is not in a browser context of its own")
	}
	return in.TargetID
}

// pageState waits until the prompt page in tab shows a final state (its
// script sets body's data-state) and returns it.
func pageState(t testing.TB, ctx, tab context.Context) string {
	t.Helper()
	got, err := promptwatch.FinalState(ctx, tab)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// humanBrowser opens the system opener's page in a tab of the shared
// Chromium, as the human's default browser would, and waits until the
// prompt it leads to is ready for typing.
func (sc *scene) humanBrowser(page, promptURL string) *tab {
	sc.t.Helper()
	tb := sc.openTab("file://" + page)
	ready := `document.readyState === "complete" && location.href === ` + quote(promptURL) +
		` && !document.getElementById("answer").hidden && document.activeElement.id === "value"`
	if !tb.becomes(ready) {
		sc.t.Fatalf("the human's browser did not show the prompt")
	}
	return tb
}

// TestPromptDiesWithItsRequest runs `fillgate fill` and `fillgate mcp`
// against real Chromium and ends their requests early in every way an
// agent can: a signal, a kill, the budget. The prompt goes with them: the
// cdp-tab prompt (in a browser context of its own) closes, the page in the
// human's own browser disables itself, and another local user who binds
// the freed port receives nothing. The system opener's failure is seen at
// once, and a DevTools recorder of the prompt tab sees only ciphertext.
func TestPromptDiesWithItsRequest(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the CLI scenarios fake xdg-open and read /proc: Linux only")
	}
	e := newEnvWithin(t, 12*time.Minute)
	sqBin := squatter.Build(t)
	// cdpTab starts a scenario whose prompt opens in a tab of the browser,
	// with the user's password field focused; before are the browser's
	// contexts then.
	cdpTab := func(t *testing.T) (*scene, *tab, []cdp.BrowserContextID) {
		sc := e.scene(t)
		sc.policy("prompt_opener = \"cdp-tab\"\n")
		return sc, sc.passwordTab(), sc.browserContexts()
	}

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run("fill, cdp-tab, "+sig.String(), func(t *testing.T) {
			sc, tb, before := cdpTab(t)
			r := sc.fill("--service", "127.0.0.1", "--json")
			id := sc.promptTabOf(r.done, tb, before)
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			r.wait().want(sc, fill.StatusCancelled, "the agent disconnected")
			sc.waitGone(id, before, sig.String())
			if !allEmpty(t, tb.ctx) {
				t.Errorf("a field was filled although the agent gave up")
			}
		})
	}

	t.Run("fill killed: its browser context and prompt tab go with its connection", func(t *testing.T) {
		sc, tb, before := cdpTab(t)
		r := sc.fill("--service", "127.0.0.1", "--json")
		id := sc.promptTabOf(r.done, tb, before)
		if err := r.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-r.done
		sc.waitGone(id, before, "SIGKILL")
	})

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run("mcp, cdp-tab, "+sig.String(), func(t *testing.T) {
			sc, tb, before := cdpTab(t)
			cmd := exec.Command(fillgateBin, "mcp")
			cmd.Dir = sc.dir
			for k, v := range sc.vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stderr syncbuf.Buffer
			cmd.Stderr = &stderr
			client := mcp.NewClient(&mcp.Implementation{Name: "cdpe2e", Version: "1"}, nil)
			session, err := client.Connect(sc.ctx, &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatalf("connect to fillgate mcp: %v", err)
			}
			defer session.Close()
			called := make(chan struct{})
			go func() {
				defer close(called)
				_, _ = session.CallTool(sc.ctx, &mcp.CallToolParams{Name: "request_secret", Arguments: map[string]any{"service": "127.0.0.1"}})
			}()
			id := sc.promptTabOf(called, tb, before)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-called:
			case <-sc.ctx.Done():
				t.Fatalf("the tool call did not end after %v", sig)
			}
			sc.waitGone(id, before, "mcp "+sig.String())
			// It ended the request as cancelled (the audit log says so:
			// the prompt and its tab were closed first) and exited on its
			// own: the signal did not kill it.
			_ = session.Close()
			audit, err := os.ReadFile(filepath.Join(sc.stateDir(), "audit.jsonl"))
			if err != nil || !bytes.Contains(audit, []byte(`"status":"cancelled"`)) || !bytes.Contains(audit, []byte("the agent disconnected")) {
				t.Errorf("the audit log does not record the request as cancelled by the agent (%v)", err)
			}
			if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || st.Signaled() {
				t.Errorf("fillgate mcp was killed by %v instead of ending the call (%v)", sig, cmd.ProcessState)
			}
			sc.output = append(sc.output, stderr.Bytes())
		})
	}

	t.Run("a DevTools recorder of the cdp-tab prompt sees only ciphertext", func(t *testing.T) {
		sc := e.scene(t)
		sc.policy("prompt_opener = \"cdp-tab\"\n")
		tb := sc.passwordTab()
		secret := sc.secret()
		r := sc.fill("--service", "127.0.0.1", "--json")
		id, promptURL := sc.promptTab(r)
		rctx, cancel := chromedp.NewContext(sc.bctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
		defer cancel()
		rec := browser.Record(t, rctx)
		sc.answerInTab(id, promptURL, secret)
		r.wait().want(sc, fill.StatusOK)
		if !fieldIs(t, tb.ctx, "pw", secret) {
			t.Errorf("password field: value differed")
		}
		answers := 0
		for _, p := range rec.Posts(t) {
			q, err := url.ParseQuery(string(p.Body))
			if err == nil && q.Get("action") == "submit" && q.Get("answer") != "" && !q.Has("value") {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("the recorder saw %d encrypted answers, want 1", answers)
		}
		leakscan.Bytes(t, secret, "what the DevTools recorder saw", rec.All(t))
	})

	t.Run("the system opener cannot show the prompt: failed at once, with the fix", func(t *testing.T) {
		sc := e.scene(t)
		tb := sc.passwordTab()
		delete(sc.vars, "DISPLAY")
		start := time.Now()
		o := sc.fillgate(30*time.Second, "--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusFailed, "neither DISPLAY nor WAYLAND_DISPLAY", `prompt_opener = "cdp-tab"`, "desktop session")
		t.Logf("without a display: failed after %v (the whole fillgate fill run)", time.Since(start).Round(time.Millisecond))
		sc.wantOpened(0)

		sc.vars["DISPLAY"] = ":fillgate-test"
		if err := os.WriteFile(filepath.Join(sc.vars["HOME"], "opener.fail"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		o = sc.fillgate(30*time.Second, "--service", "127.0.0.1", "--json").wait()
		o.want(sc, fill.StatusFailed, "xdg-open failed (exit status 3)", `prompt_opener = "cdp-tab"`)
		t.Logf("an opener exiting 3: failed after %v (the whole fillgate fill run)", time.Since(start).Round(time.Millisecond))
		if strings.Contains(o.Detail, "prompt.html") || strings.Contains(o.Detail, "no method available") {
			t.Errorf("the detail quotes the opener's page or its output: %s", sc.safe(o.stdout))
		}
		if !allEmpty(t, tb.ctx) {
			t.Errorf("a field was filled")
		}
	})

	// The system opener's page in the human's own browser, which fillgate
	// cannot close: each way the request ends early.
	for _, end := range []struct {
		name  string
		args  []string
		end   func(t *testing.T, sc *scene, r *fillRun)
		state string // what the page says then
	}{
		{"killed", nil, func(t *testing.T, sc *scene, r *fillRun) {
			if err := r.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-r.done
		}, "closed"},
		{"cancelled", nil, func(t *testing.T, sc *scene, r *fillRun) {
			if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			r.wait().want(sc, fill.StatusCancelled)
		}, "closed"},
		{"no_response", []string{"--timeout", "5s"}, func(t *testing.T, sc *scene, r *fillRun) {
			r.wait().want(sc, fill.StatusNoResponse)
		}, "expired"},
	} {
		t.Run("system opener, "+end.name+": the page disables itself and a squatter gets nothing", func(t *testing.T) {
			sc := e.scene(t)
			tb := sc.passwordTab()
			secret := sc.secret()
			r := sc.fill(append([]string{"--service", "127.0.0.1", "--json"}, end.args...)...)
			page := sc.promptPage(r, 1)
			promptURL := sc.target(page)
			human := sc.humanBrowser(page, promptURL)
			end.end(t, sc, r)
			if got := pageState(t, sc.ctx, human.ctx); got != end.state {
				t.Errorf("the page says %q, want %q", got, end.state)
			}
			u, _ := url.Parse(promptURL)
			sq, err := squatter.Start(t, sc.ctx, sqBin, u.Host)
			if err != nil {
				t.Fatalf("another user could not bind the freed port: %v", err)
			}
			human.front()
			if err := chromedp.Do(human.ctx, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil {
				t.Fatalf("type into the page: %v", err)
			}
			if err := sq.Sync(sc.ctx); err != nil {
				t.Fatal(err)
			}
			if n := sq.Requests(); n != 0 {
				t.Errorf("the squatter received %d requests", n)
			}
			leakscan.Bytes(t, secret, "the squatter's log", sq.Received())
			if !allEmpty(t, tb.ctx) {
				t.Errorf("a field was filled")
			}
		})
	}
}
