//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/host/fill"
	"github.com/fillgate/fillgate/manifest"
	"github.com/fillgate/fillgate/tests/browser"
	"github.com/fillgate/fillgate/tests/leakscan"
)

// TestFirefox is the happy path in Firefox ESR: `fillgate install
// --browser firefox` writes the host manifest into
// $HOME/.mozilla/native-messaging-hosts, the unpacked extension is
// installed as a temporary add-on over WebDriver BiDi, Firefox starts the
// host, and the human answers the prompt popup the extension opens.
func TestFirefox(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	r := newRig(t)
	r.install(t, ctx, filepath.Join(r.root, "home", ".mozilla", "native-messaging-hosts"), "--browser", "firefox")
	l, origin := listen(t, "127.0.0.1")
	startServer(t, l, loginPages(origin))

	profile := filepath.Join(r.root, "profile")
	if err := os.Mkdir(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{Profile: profile, Env: r.env})
	var installed struct {
		Extension string `json:"extension"`
	}
	if err := ff.Call(ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": r.extensionDir},
	}, &installed); err != nil {
		t.Fatalf("install the extension as a temporary add-on: %v", err)
	}
	if installed.Extension != manifest.FirefoxID {
		t.Fatalf("installed as %q; want %q", installed.Extension, manifest.FirefoxID)
	}
	host := r.waitHost(t, ctx)
	if host.Browser != "firefox" || host.Caller != manifest.FirefoxID {
		t.Fatalf("host status %+v; want firefox, called by %s", host, manifest.FirefoxID)
	}
	r.checkHostProcess(t, host, ff.Cmd.Process.Pid)

	secret := leakscan.NewSecret(t)
	defer clear(secret)
	tabs := contexts(t, ctx, ff)
	if len(tabs) != 1 {
		t.Fatalf("firefox has %d tabs; want 1", len(tabs))
	}
	login := bidiTab{t: t, ctx: ctx, ff: ff, id: tabs[0].Context}
	if err := ff.Call(ctx, "browsingContext.navigate", map[string]any{"context": login.id, "url": origin + "/password", "wait": "complete"}, nil); err != nil {
		t.Fatalf("open the login page: %v", err)
	}
	if !login.call(`function () { const f = document.getElementById("pw"); f.focus(); return document.activeElement === f; }`) {
		t.Fatal("could not focus the password field")
	}

	a := r.fill(t, ctx, "--service", "127.0.0.1", "--then", "none")
	p := awaitFirefoxPrompt(t, ctx, ff, origin)
	if !p.call(`function (s) { return document.body.innerText.includes(s); }`, origin) {
		t.Errorf("the prompt does not name the origin %s", origin)
	}
	p.send(secret)
	res, code := a.result(t, ctx)
	r.scanAgentSide(t, secret, a, host.PID, ff.Cmd.Process.Pid)
	wantResult(t, res, code, fill.StatusOK, "127.0.0.1", fill.FieldPassword, "nothing was submitted")
	if !login.call(`function (v) { return fg.is(document.getElementById("pw"), v); }`, string(secret)) {
		t.Errorf("value differed")
	}
	if !login.call(`function () { return fg.trustedInput("pw") && !fg.untrustedInput() && fg.onlyInputOn(["pw"]) && !fg.submitted(); }`) {
		t.Errorf("the page did not see exactly a trusted input on the password field and no submit")
	}
	if e := r.lastAudit(t); e.Status != fill.StatusOK || e.Origin != origin {
		t.Errorf("the audit log's last entry is %+v", e)
	}
	waitContextGone(t, ctx, ff, p.id)

	// The default: submit as a person would and leave nothing.
	site, _ := loginSite(t)
	secrets := [][]byte{secret}
	for _, c := range []struct{ path, endpoint, detail string }{
		{"/classic", "/classic/login", "the form was submitted and the page navigated away"},
		{"/react", "/api/login", "the page removed or emptied the field"},
	} {
		s := leakscan.NewSecret(t)
		defer clear(s)
		secrets = append(secrets, s)
		site.SetRight(s)
		if err := ff.Call(ctx, "browsingContext.navigate", map[string]any{"context": login.id, "url": site.URL + c.path, "wait": "complete"}, nil); err != nil {
			t.Fatalf("open %s: %v", c.path, err)
		}
		login.await(`function () { const f = document.getElementById("pw"); if (f) f.focus(); return f !== null && document.activeElement === f; }`)
		a := r.fill(t, ctx, "--service", "127.0.0.3")
		p := awaitFirefoxPrompt(t, ctx, ff, origin)
		p.send(s)
		res, code := a.result(t, ctx)
		r.scanAgentSide(t, s, a, host.PID, ff.Cmd.Process.Pid)
		wantResult(t, res, code, fill.StatusOK, "127.0.0.3", fill.FieldPassword, c.detail)
		login.await(`function () { return document.getElementById("welcome") !== null; }`)
		if site.Logins(c.endpoint, s) != 1 || site.Carrying(s) != 1 {
			t.Errorf("%s: the service got the value %d times; want once", c.path, site.Carrying(s))
		}
		if !login.call(`function (v) { return !fg.holds(v) && fg.left("pw"); }`, string(s)) {
			t.Errorf("%s: the page still holds the value", c.path)
		}
		waitContextGone(t, ctx, ff, p.id)
	}

	ff.Stop()
	waitGone(t, ctx, host.PID, "the host")
	for _, s := range secrets {
		leakscan.Bytes(t, s, "the browser's output", []byte(ff.Output()))
		if n := leakscan.Dirs(t, s, r.root); n < 20 {
			t.Errorf("the leak scan read only %d files under %s", n, r.root)
		}
	}
}

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

// bidiContext is a browsing context in browsingContext.getTree.
type bidiContext struct {
	Context string `json:"context"`
	URL     string `json:"url"`
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

// bidiTab is a top-level browsing context driven over WebDriver BiDi.
type bidiTab struct {
	t   testing.TB
	ctx context.Context
	ff  *browser.Firefox
	id  string
}

// try calls the function declaration fn with string arguments in the
// page's own world and returns its boolean result. An error never quotes
// the arguments.
func (b bidiTab) try(fn string, args ...string) (bool, error) {
	var bidiArgs []map[string]string
	for _, a := range args {
		bidiArgs = append(bidiArgs, map[string]string{"type": "string", "value": a})
	}
	var res struct {
		Type   string `json:"type"`
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	err := b.ff.Call(b.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": fn, "arguments": bidiArgs, "awaitPromise": true,
		"target": map[string]string{"context": b.id},
	}, &res)
	if err != nil && len(args) == 0 {
		return false, fmt.Errorf("call in the page: %w", err)
	}
	if err != nil {
		return false, fmt.Errorf("call in the page failed") // the error might quote an argument
	}
	if res.Type != "success" || res.Result.Type != "boolean" {
		return false, fmt.Errorf("call in the page: %s, %s", res.Type, res.Result.Type)
	}
	return string(res.Result.Value) == "true", nil
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

// send types the secret into the prompt's focused field key by key and
// presses Enter, through WebDriver BiDi input actions.
func (b bidiTab) send(secret []byte) {
	b.t.Helper()
	var keys []map[string]string
	for _, r := range string(secret) + "\uE007" { // U+E007 is WebDriver's Enter
		k := string(r)
		keys = append(keys, map[string]string{"type": "keyDown", "value": k}, map[string]string{"type": "keyUp", "value": k})
	}
	err := b.ff.Call(b.ctx, "input.performActions", map[string]any{
		"context": b.id,
		"actions": []map[string]any{{"type": "key", "id": "keyboard", "actions": keys}},
	}, nil)
	if err != nil {
		b.t.Fatalf("type into the prompt failed")
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
