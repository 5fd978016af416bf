//go:build linux

package e2e

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/squatter"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// promptURL is the prompt popup's URL, as the browser lists it.
func (ch *chromium) promptURL(t *testing.T, p *cdpPrompt) *url.URL {
	t.Helper()
	infos, err := chromedp.Targets(ch.bctx)
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	for _, in := range infos {
		if in.TargetID == p.id {
			u, err := url.Parse(in.URL)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
	}
	t.Fatalf("the prompt window is gone")
	return nil
}

// TestPromptOnTheExtensionPath: on the extension path the prompt's answer
// is ciphertext to a DevTools recorder of the popup; a request the agent
// abandons keeps its prompt's port bound (another user cannot take it)
// while its window closes; and when the host dies, the extension closes
// the popup and another user who binds the freed port receives nothing.
func TestPromptOnTheExtensionPath(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	ch := startChromium(t, ctx)
	sqBin := squatter.Build(t)

	t.Run("a DevTools recorder of the popup sees only ciphertext", func(t *testing.T) {
		secret := ch.secret(t)
		tb := loginFocused(t, ch)
		a, p := ch.askCDP(t, "--service", svc, "--then", "none") // the field is checked below
		rec := browser.Record(t, p.ctx)
		p.send(secret)
		res, code := ch.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !tb.holds(pwHolds, secret) {
			t.Errorf("value differed")
		}
		answers := 0
		for _, post := range rec.Posts(t) {
			q, err := url.ParseQuery(string(post.Body))
			if err == nil && q.Get("action") == "submit" && q.Get("answer") != "" && !q.Has("value") {
				answers++
			}
		}
		if answers != 1 {
			t.Errorf("the recorder saw %d encrypted answers, want 1", answers)
		}
		leakscan.Bytes(t, secret, "what the DevTools recorder saw", rec.All(t))
		ch.closed(t, p)
	})

	t.Run("the agent goes: the window closes and the port stays bound", func(t *testing.T) {
		tb := loginFocused(t, ch)
		a, p := ch.askCDP(t, "--service", svc)
		u := ch.promptURL(t, p)
		if err := a.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-a.Done()
		ch.closed(t, p)
		ch.awaitAudit(t, ctx, fill.StatusCancelled)
		// The host still runs: the prompt keeps its port for the rest of
		// its budget, answering 410.
		if _, err := squatter.Start(t, ctx, sqBin, u.Host); !errors.Is(err, squatter.ErrInUse) {
			t.Errorf("another user could bind the port of a prompt whose request ended early: %v", err)
		}
		resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Get(u.String())
		if err != nil {
			t.Fatalf("the held port: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusGone {
			t.Errorf("the held port answered %d, want 410", resp.StatusCode)
		}
		untouched(t, tb)
	})

	t.Run("the host dies: the popup closes and a squatter gets nothing", func(t *testing.T) {
		secret := ch.secret(t)
		tb := loginFocused(t, ch)
		a, p := ch.askCDP(t, "--service", svc)
		u := ch.promptURL(t, p)
		if err := syscall.Kill(ch.host.PID, syscall.SIGKILL); err != nil {
			t.Fatalf("kill the host: %v", err)
		}
		ch.hostKilled = true
		waitGone(t, ctx, ch.host.PID, "the host")
		sq, err := squatter.Start(t, ctx, sqBin, u.Host)
		if err != nil {
			t.Fatalf("another user could not bind the freed port: %v", err)
		}
		// Whatever is still on screen, the human types and presses Enter.
		if err := chromedp.Do(p.ctx, chromedp.KeyEvent(string(secret)), chromedp.KeyEvent(kb.Enter)); err != nil &&
			!errors.Is(err, chromedp.ErrTargetDetached) && !strings.Contains(err.Error(), "No target with given id") {
			t.Logf("typing into the prompt: %v", err)
		}
		ch.closed(t, p)
		res, _ := a.result(t, ctx)
		if res.Status != fill.StatusFailed {
			t.Errorf("the agent got %s, want failed", res.Status)
		}
		if err := sq.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if n := sq.Requests(); n != 0 {
			t.Errorf("the squatter received %d requests", n)
		}
		leakscan.Bytes(t, secret, "the squatter's log", sq.Received())
		untouched(t, tb)
	})

	finish(t, ch)
}
