//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
)

// TestDrivableChromium: real Chromium with the real extension and host.
// The rig starts the browser with --remote-debugging-port, so the host
// says it can be driven, for its command line and its live
// DevToolsActivePort, and `fillgate status` and `fillgate doctor` say that
// prompts for it open on the desktop (and `fillgate status`, that logins
// for it happen in fillgate's clean room). When a second DevTools client
// attaches to one of its pages, the extension's chrome.debugger.getTargets
// sees it, and when it detaches, that reason goes.
func TestDrivableChromium(t *testing.T) {
	ctx := testContext(t, 3*time.Minute)
	ch := startChromium(t, ctx)
	defer ch.browser.Stop()

	port := fmt.Sprintf("a DevTools endpoint is live on 127.0.0.1:%d (DevToolsActivePort)", ch.browser.Port)
	want := []string{
		"the browser was started with --remote-debugging-port",
		"the browser was started with --remote-debugging-address",
		port,
	}
	// The person's policy says where prompts open; the host reads it
	// afresh for each status.
	ch.setPrompt(t, "auto")
	d := ch.driveByCLI(t, ctx, "auto")
	if !d.Driven || !slices.Equal(d.Reasons, want) {
		t.Fatalf("fillgate status --json says drive %+v; want driven for %q and nothing attached", d, want)
	}
	out, _, _ := ch.cli(t, ctx, "status")
	if !strings.Contains(string(out), "on your desktop (the browser can be driven)") ||
		!strings.Contains(string(out), "Prompts for it open as a native dialog on your desktop, outside the browser, and logins for it happen in fillgate's clean room") ||
		!strings.Contains(string(out), "the browser gets the session, never the password") {
		t.Errorf("fillgate status does not say prompts open on the desktop and logins happen in the clean room:\n%s", out)
	}
	ch.doctorDrive(t, "ok", "prompts for it open as a native dialog on your desktop, outside the browser", port)
	ch.setPrompt(t, "browser")
	ch.driveByCLI(t, ctx, "browser")
	ch.doctorDrive(t, "warn", `prompt = "browser" keeps prompts for it in the browser, where that program could read or answer them`)

	// A page nobody is attached to, then a second DevTools client (its own
	// WebSocket connection, as an agent's tool would have) attaches to it.
	background := true
	created, err := chromedp.CallBrowser(ch.bctx, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", Background: &background})
	if err != nil || created.TargetID == "" {
		t.Fatalf("create a page: %+v, %v", created, err)
	}
	tid := created.TargetID
	defer func() {
		_, _ = chromedp.CallBrowser(ch.bctx, target.CloseTarget, target.CloseTargetParams{TargetID: tid})
	}()
	allocCtx, cancelAlloc := remote.NewAllocator(ctx, ch.browser.WebSocketURL, remote.NoModifyURL)
	defer cancelAlloc()
	other, cancelOther := chromedp.NewContext(allocCtx, chromedp.WithTargetID(tid), chromedp.WithDetachOnCancel())
	defer cancelOther()
	if _, err := chromedp.Call(other, cdppage.Enable, cdppage.EnableParams{}); err != nil {
		t.Fatalf("a second DevTools client attaches to the page: %v", err)
	}
	ch.awaitDrive(t, ctx, func(d fill.Drive) bool { return d.Driven && slices.ContainsFunc(d.Reasons, isAttached) },
		"a reason for the attached client")

	// It detaches: the reason goes (the browser still has its port).
	cancelOther()
	d = ch.awaitDrive(t, ctx, func(d fill.Drive) bool { return !slices.ContainsFunc(d.Reasons, isAttached) },
		"no attached-debugger reason once the client detached")
	if !d.Driven || !slices.Equal(d.Reasons, want) {
		t.Fatalf("after the detach: %+v; want driven for %q", d, want)
	}
}

// isAttached reports whether r is the extension's attached-debugger reason.
func isAttached(r string) bool { return strings.HasPrefix(r, "a debugger is attached to") }

// setPrompt writes a policy that has prompts open as mode says.
func (r *rig) setPrompt(t *testing.T, mode string) {
	t.Helper()
	r.writePolicy(t, "prompt = \""+mode+"\"\n")
}

// driveByCLI is the one browser's drive as `fillgate status --json` prints
// it; the host must say it applies prompt mode mode.
func (r *rig) driveByCLI(t *testing.T, ctx context.Context, mode string) fill.Drive {
	t.Helper()
	out, errOut, code := r.cli(t, ctx, "status", "--json")
	var hs []agentsock.HostStatus
	if err := json.Unmarshal(out, &hs); err != nil || code != 0 || len(hs) != 1 {
		t.Fatalf("fillgate status --json exited %d, printed %s%s (%v)", code, out, errOut, err)
	}
	if hs[0].Drive == nil {
		t.Fatalf("fillgate status --json says nothing of what drives the browser: %s (the host must fill HostStatus.Drive)", out)
	}
	if hs[0].Prompt != mode {
		t.Errorf("the host reports prompt mode %q; the policy says %q", hs[0].Prompt, mode)
	}
	return *hs[0].Drive
}

// awaitDrive polls the host's status until its drive satisfies ok, and
// returns it.
func (r *rig) awaitDrive(t *testing.T, ctx context.Context, ok func(fill.Drive) bool, what string) fill.Drive {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	hs, err := hostwait.Until(ctx, r.runDir, hostwait.One(func(h agentsock.HostStatus) bool {
		return h.Drive != nil && ok(*h.Drive)
	}))
	if err != nil {
		t.Fatalf("waiting for %s: the host's status is %+v", what, hs)
	}
	return *hs[0].Drive
}

// doctorDrive checks doctor's prompts check for the host: its status
// (ok, warn), and that it says each of details.
func (ch *chromium) doctorDrive(t *testing.T, status string, details ...string) {
	t.Helper()
	checks, out := ch.doctor(t, ch.ctx, "--browser", "chromium", "--user-data-dir", ch.browser.UserDataDir)
	name := fmt.Sprintf("prompts %d", ch.host.PID)
	for _, c := range checks {
		if c.Name != name {
			continue
		}
		if c.Status != status {
			t.Errorf("doctor's %s check is %s, not %s: %s", name, c.Status, status, c.Detail)
		}
		for _, d := range details {
			if !strings.Contains(c.Detail, d) {
				t.Errorf("doctor's %s check says %q, not %q", name, c.Detail, d)
			}
		}
		return
	}
	t.Errorf("fillgate doctor has no %s check: %s", name, out)
}
