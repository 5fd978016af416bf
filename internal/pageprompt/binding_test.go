package pageprompt_test

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

func TestFormSetsBindingCookie(t *testing.T) {
	ctx := testctx.New(t)
	p, logs := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	c := setCookie(page.Header())
	if c == nil {
		t.Fatalf("the form's response sets no prompt cookie")
	}
	path := strings.TrimPrefix(p.URL(), "http://"+hostOf(t, p.URL()))
	switch {
	case len(c.Value) < 43: // 256 bits in base64
		t.Errorf("the cookie value has %d characters, want at least 43", len(c.Value))
	case c.Path != path:
		t.Errorf("the cookie's path is not the prompt's own")
	case !c.HttpOnly:
		t.Errorf("the cookie is not HttpOnly")
	case c.SameSite != http.SameSiteLaxMode:
		t.Errorf("the cookie's SameSite is %v, want Lax", c.SameSite)
	case c.Secure:
		t.Errorf("the cookie is Secure; the prompt is http on loopback and browsers would drop it")
	case c.Domain != "" || c.MaxAge != 0 || !c.Expires.IsZero():
		t.Errorf("the cookie is not a host-only session cookie")
	}
	// The response that sets it is never stored by a cache.
	if cc := page.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("the response setting the cookie has Cache-Control %q, want no-store", cc)
	}
	if got := len(page.Header().Values("Set-Cookie")); got != 1 {
		t.Errorf("the form's response sets %d cookies, want 1", got)
	}
	if c.Value == page.Hidden("csrf") {
		t.Errorf("the cookie is the CSRF token")
	}

	// A reload by the same browser shows the form again and sets nothing.
	if err := page.Reload(ctx); err != nil || page.StatusCode() != http.StatusOK || !page.HasForm() {
		t.Fatalf("reload: %v, status %d", err, page.StatusCode())
	}
	if setCookie(page.Header()) != nil {
		t.Errorf("a reload set the cookie again")
	}
	secret := leakscan.NewSecret(t)
	if err := page.Submit(ctx, secret); err != nil {
		t.Fatalf("submit after reload: %v", err)
	}
	gotValue(t, ctx, p, secret)
	noSecretsIn(t, "the log", string(logs.Bytes()), p.URL(), c.Value)
}

func TestSecondClientBurnsPrompt(t *testing.T) {
	ctx := testctx.New(t)
	secret := leakscan.NewSecret(t)
	p, logs := startPrompt(t, ctx, testInfo())
	human, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	cookie := cookieValue(t, human)

	// Someone else who learned the URL loads it: no cookie.
	thief := send(t, ctx, request{method: "GET", url: p.URL(), header: map[string]string{
		"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document",
	}})
	if thief.status != http.StatusForbidden {
		t.Errorf("the second client got %d, want 403", thief.status)
	}
	body := string(thief.body)
	if !strings.Contains(body, "opened by a second client") || strings.Contains(body, `name="csrf"`) {
		t.Errorf("the second client did not get the refusal page, or got the form")
	}
	if setCookie(thief.header) != nil {
		t.Errorf("the second client got a cookie")
	}

	a, err := waitAnswer(t, ctx, p)
	if !errors.Is(err, pageprompt.ErrSecondClient) {
		t.Fatalf("wait: %v, want ErrSecondClient", err)
	}
	if a.Value != nil || a.Cancelled {
		t.Errorf("a burned prompt handed over an answer")
	}
	if !strings.Contains(err.Error(), "opened by a second client; nothing was typed") {
		t.Errorf("the error does not say what happened: %v", err)
	}
	noSecretsIn(t, "Wait's error", err.Error(), p.URL(), cookie)

	// The human's open form can no longer answer.
	if err := human.Submit(ctx, secret); err == nil {
		t.Errorf("submit after the burn succeeded")
	}
	if !bytes.Contains(logs.Bytes(), []byte("a second client loaded the form")) {
		t.Errorf("the burn was not logged")
	}
	noSecretsIn(t, "the log", string(logs.Bytes()), p.URL(), cookie)
	noLeak(t, secret, map[string][]byte{"log": logs.Bytes(), "final page": []byte(human.HTML())})
}

// TestStolenURLLoadedFirstPutsNoValueIn: whoever loads the form first
// owns it, so when that is not the human's browser, the human's browser
// burns the prompt as soon as it loads, and the first client's answer
// comes too late.
func TestStolenURLLoadedFirstPutsNoValueIn(t *testing.T) {
	ctx := testctx.New(t)
	attack := leakscan.NewSecret(t)
	p, _ := startPrompt(t, ctx, testInfo())
	thief, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("the first client: %v", err)
	}
	if _, err := fakehuman.OpenFile(ctx, writeRedirectFile(t, p.URL())); err == nil {
		t.Fatalf("the human's browser got the form of a prompt bound to another client")
	}
	if err := thief.Submit(ctx, attack); err == nil {
		t.Errorf("the first client answered after the burn")
	}
	if a, err := waitAnswer(t, ctx, p); !errors.Is(err, pageprompt.ErrSecondClient) || a.Value != nil {
		t.Errorf("wait: %v (value handed over: %v), want ErrSecondClient", err, a.Value != nil)
	}
}

// TestSystemOpenerFileLeadsToForm follows a local file's meta refresh to
// the prompt, as the system opener's browser does: the navigation is
// cross-site, and so is a reload of it.
func TestSystemOpenerFileLeadsToForm(t *testing.T) {
	ctx := testctx.New(t)
	secret := leakscan.NewSecret(t)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.OpenFile(ctx, writeRedirectFile(t, p.URL()))
	if err != nil {
		t.Fatalf("open the file: %v", err)
	}
	if setCookie(page.Header()) == nil {
		t.Fatalf("the form reached from the file set no cookie")
	}
	if err := page.Reload(ctx); err != nil || page.StatusCode() != http.StatusOK || !page.HasForm() {
		t.Fatalf("reload: %v, status %d", err, page.StatusCode())
	}
	if err := page.Submit(ctx, secret); err != nil {
		t.Fatalf("submit: %v", err)
	}
	gotValue(t, ctx, p, secret)
}

// TestHeldPortIsFreedAtTheBudget: a prompt whose request ended early keeps
// its port, answering 410, until its budget ends, and frees it then.
func TestHeldPortIsFreedAtTheBudget(t *testing.T) {
	ctx := testctx.New(t)
	info := testInfo()
	info.Budget = 2 * time.Second
	p, _ := startPrompt(t, ctx, info)
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	addr := hostOf(t, p.URL())
	if l, err := net.Listen("tcp4", addr); err == nil {
		l.Close()
		t.Fatalf("the port was free right after an early end")
	}
	if err := page.Submit(ctx, []byte("late")); err == nil || page.StatusCode() != http.StatusGone {
		t.Errorf("an answer to the held port: %v (status %d), want 410", err, page.StatusCode())
	}
	for {
		if l, err := net.Listen("tcp4", addr); err == nil {
			l.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the held port was never freed after the budget")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestCancelWithoutScript: the Cancel form, posted by a browser without
// JavaScript, cancels, and its answer is the Cancelled page.
func TestCancelWithoutScript(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	page, err := fakehuman.Open(ctx, p.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if err := page.CancelWithoutScript(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if !strings.Contains(page.HTML(), "Cancelled.") {
		t.Errorf("the Cancel form's answer is not the Cancelled page")
	}
	a, err := waitAnswer(t, ctx, p)
	if err != nil || !a.Cancelled {
		t.Fatalf("wait: cancelled=%v, %v", a.Cancelled, err)
	}
}

// TestLoadedSaysWhetherABrowserLoadedThePage: the signal the no-response
// cool-down keys on.
func TestLoadedSaysWhetherABrowserLoadedThePage(t *testing.T) {
	ctx := testctx.New(t)
	p, _ := startPrompt(t, ctx, testInfo())
	// Requests that are refused load nothing.
	send(t, ctx, request{method: "GET", url: p.URL(), host: "evil.test"})
	send(t, ctx, request{method: "GET", url: p.URL(), header: map[string]string{"Sec-Fetch-Site": "cross-site"}})
	if p.Loaded() {
		t.Fatalf("Loaded before any browser loaded the page")
	}
	if _, err := fakehuman.Open(ctx, p.URL()); err != nil {
		t.Fatalf("open: %v", err)
	}
	if !p.Loaded() {
		t.Fatalf("not Loaded after a browser loaded the page")
	}
}
