//go:build linux

package passkey

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// firefoxTab is the site's tab in Firefox ESR, over WebDriver BiDi, and
// a page of the extension in another tab (popup.html), from which the
// test sees the background script's replies to the host. Opened in a
// tab, popup.html is not the toolbar popup: the background script
// answers its messages nothing (it shows "Open fillgate from its toolbar
// button"), but as a page of the extension it reaches the background
// page, which is all the test uses it for.
type firefoxTab struct {
	t       testing.TB
	ctx     context.Context
	ff      *browser.Firefox
	id      string // the site's tab
	extPage string // the tab of the extension's page
	arms    int    // the arms armed seen so far
}

// startFirefox starts Firefox ESR with the host manifest `fillgate
// install --browser firefox` wrote and the extension it unpacked,
// installed as a temporary add-on as a person would, on the site's page.
func startFirefox(t testing.TB) *set {
	s := newSet(t, "fgpkf-")
	ext := s.install("--browser", "firefox")
	// The add-on's moz-extension:// host, chosen here: Firefox takes the
	// one its prefs name.
	uuid := newUUID(t)
	uuids, _ := json.Marshal(map[string]string{manifest.FirefoxID: uuid})
	prefs := fmt.Sprintf("user_pref(\"extensions.webextensions.uuids\", %s);\n", strconv.Quote(string(uuids)))
	profile := filepath.Join(s.root.Dir, "profile")
	if err := os.Mkdir(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	ff := browser.StartFirefox(t, s.ctx, browser.FirefoxOptions{Profile: profile, Env: s.env, AllowSystemAccess: true, Prefs: prefs})
	var installed struct {
		Extension string `json:"extension"`
	}
	if err := ff.Call(s.ctx, "webExtension.install", map[string]any{"extensionData": map[string]string{"type": "path", "path": ext}}, &installed); err != nil || installed.Extension != manifest.FirefoxID {
		t.Fatalf("install the extension as a temporary add-on: %v (%q)", err, installed.Extension)
	}
	if hs, err := hostwait.Until(s.ctx, s.root.RunDir, hostwait.One(hostwait.Connected)); err != nil {
		t.Fatalf("no host with the extension connected: %v; last status %+v", err, hs)
	}
	f := &firefoxTab{t: t, ctx: s.ctx, ff: ff}
	f.extPage = f.newTab("moz-extension://" + uuid + "/popup.html")
	// Every reply of the background script goes through its post(); the
	// extension's page wraps it to count the host's passkey_arm answered
	// "armed", and hands each message on untouched.
	if got := f.evalIn(f.extPage, `(async () => {
		const bg = await browser.runtime.getBackgroundPage();
		const post = bg.post;
		window.arms = 0;
		bg.post = function (m) { if (m?.type === "armed") window.arms++; return post.apply(this, arguments); };
		return "wrapped";
	})()`); got != "wrapped" {
		t.Fatalf("the extension's page could not watch the background script: %q", got)
	}
	f.id = f.newTab(s.site.URL)
	if err := ff.Call(s.ctx, "browsingContext.activate", map[string]any{"context": f.id}, nil); err != nil {
		t.Fatalf("bring the site to the front: %v", err)
	}
	s.tab = f
	return s
}

// newUUID is a random UUID, as Firefox gives an add-on.
func newUUID(t testing.TB) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// newTab opens url in a new tab and returns its browsing context.
func (f *firefoxTab) newTab(url string) string {
	f.t.Helper()
	var created struct {
		Context string `json:"context"`
	}
	if err := f.ff.Call(f.ctx, "browsingContext.create", map[string]any{"type": "tab"}, &created); err != nil {
		f.t.Fatalf("open a tab: %v", err)
	}
	f.openIn(created.Context, url)
	return created.Context
}

func (f *firefoxTab) openIn(id, url string) {
	f.t.Helper()
	if err := f.ff.Call(f.ctx, "browsingContext.navigate", map[string]any{"context": id, "url": url, "wait": "complete"}, nil); err != nil {
		f.t.Fatalf("open %s: %v", url, err)
	}
}

func (f *firefoxTab) open(url string) { f.t.Helper(); f.openIn(f.id, url) }

func (f *firefoxTab) eval(expr string) string { f.t.Helper(); return f.evalIn(f.id, expr) }

// evalIn is eval in the browsing context id.
func (f *firefoxTab) evalIn(id, expr string) string {
	f.t.Helper()
	var res struct {
		Type   string `json:"type"`
		Result struct {
			Type  string          `json:"type"`
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := f.ff.Call(f.ctx, "script.callFunction", map[string]any{
		"functionDeclaration": "async function () { return String(await (" + expr + ")); }", "awaitPromise": true,
		"target": map[string]string{"context": id},
	}, &res)
	var s string
	if err != nil || res.Type != "success" || json.Unmarshal(res.Result.Value, &s) != nil {
		f.t.Fatalf("evaluate in the page: %v (%s %s)", err, res.Type, res.ExceptionDetails.Text)
	}
	return s
}

func (f *firefoxTab) armed(t testing.TB, r *fgrun.Run) {
	t.Helper()
	ctx, cancel := r.Awaiting(f.ctx, 30*time.Second)
	defer cancel()
	if err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		n, err := strconv.Atoi(f.evalIn(f.extPage, `window.arms`))
		if n > f.arms {
			f.arms = n
			return true, err
		}
		return false, err
	}); err != nil {
		t.Fatalf("the tab was never armed: %v; fillgate printed %s%s", err, r.Stdout(), r.Stderr())
	}
}

// TestFirefoxPasskeys: in Firefox ESR, which the test drives over
// WebDriver BiDi, with the host Firefox starts from the manifest
// `fillgate install --browser firefox` wrote and the extension it
// unpacked: the agents' passkey is refused under the person's default
// (driven = "clean-room"); with driven = "in-page" for the site, the
// person adds a passkey for the agents and the agent signs in with it,
// approved in the native dialog each time, whatever the approval mode
// (passkeys), discoverably, with user verification required, on a page
// that calls get() twice and while a frame of another origin calls
// get(); the site verifies every assertion and its count. A call whose
// allowCredentials lacks the agents' passkey is left to Firefox's own
// WebAuthn. The private key is nowhere but in its keyring item.
func TestFirefoxPasskeys(t *testing.T) {
	s := startFirefox(t)
	ours := passkeys(t, s)
	// Firefox's own WebAuthn, with no authenticator to ask, waits for one
	// until the page gives up: an AbortError, not the door's refusal.
	gaveUp := func(outcome string) bool { return strings.HasPrefix(outcome, "AbortError: ") }
	t.Run("discoverable", func(t *testing.T) { discoverable(t, s, ours) })
	t.Run("user verification required", func(t *testing.T) { uvRequired(t, s, ours) })
	t.Run("get() twice", func(t *testing.T) { twice(t, s, ours, gaveUp) })
	mirror := s.site.Mirror(t)
	t.Run("a frame of another origin", func(t *testing.T) { crossOriginFrame(t, s, mirror, ours, gaveUp) })
	t.Run("allowCredentials without the agents' passkey", func(t *testing.T) {
		// Firefox holds no passkey of the person's here: the page's call
		// names one that only a security key could hold.
		s.policy("each")
		r := s.signIn(t)
		s.approve(t, r)
		s.armed(t, r)
		s.tab.eval(`(() => {
			window.giveUp = new AbortController();
			window.outcome = navigator.credentials.get({ signal: giveUp.signal, publicKey: { challenge: crypto.getRandomValues(new Uint8Array(32)),
				rpId: "localhost", allowCredentials: [{ type: "public-key", id: crypto.getRandomValues(new Uint8Array(16)) }] } })
				.then((c) => "credential " + c.id, (e) => e.name + ": " + e.message);
			return true;
		})()`)
		s.result(t, r, fill.StatusRefused, "the page asked for other passkeys than the agents'; fillgate did not answer it and let the browser's own passkeys answer")
		// Firefox's own waits for a security key until the page gives up.
		got := s.tab.eval(`(giveUp.abort(), outcome)`)
		if byFillgate(got, ours) || !gaveUp(got) {
			t.Fatalf("the call got %q", got)
		}
	})
	s.leakScan(t)
}
