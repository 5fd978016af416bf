//go:build linux

package cleanroom

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
)

// TestExtensionPageCannotPlayTheExtension: the agent opens the extension's
// own popup page in a tab of the browser it drives and tries to play the
// extension from there: the worker gives it nothing (no state, no pause
// switch), and the native-messaging connection it opens with the
// extension's own profile id is refused by the host it starts, which never
// serves a request; the audit log, fillgate status and fillgate doctor say
// so, and the extension's own host goes on serving.
func TestExtensionPageCannotPlayTheExtension(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	r := newRig(t, ctx, viaExtension)
	tb := r.open(t, manifest.ExtensionOrigin+"popup.html")
	tb.waitFor(`document.readyState === "complete"`)

	var state string
	tb.eval(`chrome.runtime.sendMessage({type: "state"}).then((s) => JSON.stringify(s ?? null), (e) => "error")`, &state)
	if state != "null" {
		t.Errorf("the worker answered the popup page opened in a tab: %s", state)
	}
	var paused string
	tb.eval(`chrome.runtime.sendMessage({type: "pause", paused: true}).then((s) => JSON.stringify(s ?? null), (e) => "error")`, &paused)
	if paused != "null" {
		t.Errorf("the worker took the pause switch from a tab: %s", paused)
	}
	var shown string
	tb.eval(`document.getElementById("conn").textContent`, &shown)
	if !strings.Contains(shown, "Open fillgate from its toolbar button") {
		t.Errorf("the page in a tab says %q", shown)
	}

	// It connects a host of its own and says hello as the extension,
	// with the extension's own profile id.
	var ended string
	tb.eval(`(async () => {
  const { instance } = await chrome.storage.local.get("instance");
  return await new Promise((resolve) => {
    const port = chrome.runtime.connectNative("dev.fillgate.host");
    port.onDisconnect.addListener(() => resolve("disconnected"));
    port.postMessage({ type: "hello", version: chrome.runtime.getManifest().version, user_agent: navigator.userAgent, paused: false, instance });
    setTimeout(() => resolve("still connected"), 15000);
  });
})()`, &ended)
	if ended != "disconnected" {
		t.Fatalf("the second connection was not refused: %s", ended)
	}
	e := r.lastAudit(t)
	if e.Event != fill.EventSecondConnection || e.Status != fill.StatusRefused || !strings.Contains(e.Detail, "second native-messaging connection") {
		t.Errorf("audit %+v", e)
	}
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	defer wcancel()
	hs, err := hostwait.Until(wctx, r.root.RunDir, hostwait.One(hostwait.Connected))
	if err != nil || len(hs) != 1 {
		t.Fatalf("the extension's own host: %v, %d hosts", err, len(hs))
	}
	out, code := r.cli("status")
	if code != 0 || !strings.Contains(string(out), "A second connection to the host was refused at") {
		t.Errorf("fillgate status (exit %d) does not say so:\n%s", code, out)
	}
	out, _ = r.cli("doctor")
	if !strings.Contains(string(out), "second native-messaging connection(s) refused in the last day") {
		t.Errorf("fillgate doctor does not say so:\n%s", out)
	}
}
