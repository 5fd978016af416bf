//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/promptwatch"
)

// TestSeveralBrowsers runs two headless Chromium profiles, each with the
// extension and its own host, in one user session (one agent socket dir):
// a fill reaches the browser whose active tab shows the login field, an
// ambiguous one is refused with the candidates unless --browser or
// --profile picks one, and when the host that owns agent.sock dies, the
// other host takes the socket over.
func TestSeveralBrowsers(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	r := newRig(t)
	one := startChromiumIn(t, ctx, r, "one")
	two := startChromiumIn(t, ctx, r, "two")
	// Pages on 127.0.0.2 (a service of its own) count as a prompt in
	// neither browser's prompt watch; each browser's own 127.0.0.1 pages
	// count only in the other's, so each opens only its own.
	o1, o2 := one.origin1, one.origin2
	hosts := func() []agentsock.HostStatus {
		hs, err := agentsock.Status(ctx, r.runDir)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		return hs
	}
	if hs := hosts(); len(hs) != 2 {
		t.Fatalf("%d hosts run; want 2: %+v", len(hs), hs)
	}

	// Plain `fillgate doctor` finds both profiles' manifests by the install
	// record, and both hosts.
	if out, errOut, code := r.cli(t, ctx, "doctor"); code != 0 ||
		!strings.Contains(string(out), one.browser.UserDataDir+"/NativeMessagingHosts/dev.fillgate.host.json starts") ||
		!strings.Contains(string(out), two.browser.UserDataDir+"/NativeMessagingHosts/dev.fillgate.host.json starts") {
		t.Errorf("fillgate doctor exited %d: %s%s", code, out, errOut)
	}

	// `fillgate status` lists both, each with its active tab.
	pw1 := one.open(t, o1+"/password")
	pw1.focus(pw)
	pw2 := two.open(t, o2+"/password")
	pw2.focus(pw)
	out, errOut, code := r.cli(t, ctx, "status", "--json")
	var listed []agentsock.HostStatus
	if code != 0 || json.Unmarshal(out, &listed) != nil || len(listed) != 2 {
		t.Fatalf("fillgate status --json exited %d: %s%s", code, out, errOut)
	}
	for _, h := range listed {
		want := o1
		if h.Profile == two.browser.UserDataDir {
			want = o2
		}
		if h.ActiveTab == nil || h.ActiveTab.Origin != want || h.ActiveTab.Field != fill.FieldPassword {
			t.Errorf("status lists %+v with active tab %+v; want %s with a password field", h, h.ActiveTab, want)
		}
	}

	t.Run("the browser with the login field", func(t *testing.T) {
		secret := two.secret(t)
		a, p := ask(t, two, "--service", "127.0.0.2")
		if one.prompts.Count() != 0 {
			t.Error("the other browser showed a prompt too")
		}
		p.send(secret)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, "127.0.0.2", fill.FieldPassword)
		if res.Origin != o2 || !pw2.eval(`fg.trustedInput("pw")`) || !pw1.eval(untouchedExpr) {
			t.Errorf("result %+v; want the value typed into the second browser's page only", res)
		}
		r.scanAgentSide(t, secret, a, two.host.PID, two.browser.Cmd.Process.Pid)
		two.closed(t, p)
	})

	t.Run("none matches", func(t *testing.T) {
		a, _ := one.request(t, "--service", "127.0.0.3")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusRefused, "127.0.0.3", fill.FieldPassword,
			"no focused password field for 127.0.0.3 in any connected browser (2 checked)")
		if e := r.lastAudit(t); e.Status != fill.StatusRefused || e.Service != "127.0.0.3" {
			t.Errorf("the audit log's last entry is %+v", e)
		}
	})

	// Both browsers now show the second site's login field.
	both := one.open(t, o2+"/password")
	both.focus(pw)
	t.Run("ambiguous", func(t *testing.T) {
		n1, n2 := one.prompts.Count(), two.prompts.Count()
		a := r.fill(t, ctx, "--service", "127.0.0.2")
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusRefused, "127.0.0.2", fill.FieldPassword,
			"more than one connected browser has a focused password field for 127.0.0.2",
			"profile "+one.browser.UserDataDir, "profile "+two.browser.UserDataDir, "--browser or --profile")
		if one.prompts.Count() != n1 || two.prompts.Count() != n2 || !both.eval(untouchedExpr) {
			t.Error("an ambiguous request asked or typed")
		}
	})

	t.Run("ambiguous, profile named", func(t *testing.T) {
		secret := two.secret(t)
		n1, n2 := one.prompts.Count(), two.prompts.Count()
		a := r.fill(t, ctx, "--service", "127.0.0.2", "--profile", "two")
		p := two.awaitPrompt(t, n2)
		p.send(secret)
		res, code := a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, "127.0.0.2", fill.FieldPassword)
		if one.prompts.Count() != n1 || !both.eval(untouchedExpr) {
			t.Error("the value did not reach the named profile's page alone")
		}
		r.scanAgentSide(t, secret, a, two.host.PID, two.browser.Cmd.Process.Pid)
	})

	t.Run("the owner of agent.sock dies", func(t *testing.T) {
		owner := hosts()[0] // agent.sock answers first
		survivor := two
		if owner.PID == two.host.PID {
			survivor = one
		}
		// A fill routed through the owner to the other browser is under way
		// when the owner is killed: the agent gets an answer (never a hang),
		// the prompt closes and nothing is typed.
		// The survivor's own 127.0.0.1 site; the other browser's active tab
		// shows 127.0.0.2.
		target := survivor.open(t, survivor.origin1+"/password")
		target.focus(pw)
		n := survivor.prompts.Count()
		a := r.fill(t, ctx, "--service", "127.0.0.1")
		p := survivor.awaitPrompt(t, n)
		if err := syscall.Kill(owner.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		one.hostKilled, two.hostKilled = true, true // one runtime dir for both
		res, code := a.result(t, ctx)
		if res.Status != fill.StatusFailed || code != fill.StatusFailed.ExitCode() || !strings.Contains(res.Detail, "host") {
			t.Errorf("with its host killed the agent got %+v (exit %d); want failed, naming the host", res, code)
		}
		survivor.closed(t, p)
		if !target.eval(untouchedExpr) {
			t.Error("something was typed after the routing host died")
		}

		// A live host (the survivor, or the one the dead host's browser
		// starts again) takes agent.sock over, and fills go on.
		deadline, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var hs []agentsock.HostStatus
		if err := poll.Until(deadline, 50*time.Millisecond, func() (bool, error) {
			var err error
			hs, err = agentsock.StatusAt(deadline, agentsock.SocketPath(r.runDir))
			return len(hs) > 0 && hs[0].PID != owner.PID, err
		}); err != nil {
			t.Fatalf("agent.sock was not taken over after host %d died: %+v, %v", owner.PID, hs, err)
		}
		secret := survivor.secret(t)
		n = survivor.prompts.Count()
		a = r.fill(t, ctx, "--service", "127.0.0.1", "--browser", "chromium", "--profile", survivor.host.Extension.Instance)
		p = survivor.awaitPrompt(t, n)
		p.send(secret)
		res, code = a.result(t, ctx)
		wantResult(t, res, code, fill.StatusOK, "127.0.0.1", fill.FieldPassword)
		r.scanAgentSide(t, secret, a, survivor.host.PID, survivor.browser.Cmd.Process.Pid)
	})

	finish(t, one)
	finish(t, two)
}

// TestChromiumAndFirefox runs both families at once, each with its host:
// a fill reaches the browser whose active tab shows the login field.
func TestChromiumAndFirefox(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	r := newRig(t)
	ch := startChromiumIn(t, ctx, r, "chromium")
	r.install(t, ctx, filepath.Join(r.root, "home", ".mozilla", "native-messaging-hosts"), "--browser", "firefox")
	profile := filepath.Join(r.root, "firefox")
	if err := os.Mkdir(profile, 0o700); err != nil {
		t.Fatal(err)
	}
	ff := browser.StartFirefox(t, ctx, browser.FirefoxOptions{Profile: profile, Env: r.env})
	// Every page on 127.0.0.1 in Firefox is a prompt: its login page is on
	// 127.0.0.2.
	ffPrompts := promptwatch.BiDi(t, ctx, ff, promptwatch.OnLoopbackBut(ch.origin2))
	if err := ff.Call(ctx, "webExtension.install", map[string]any{
		"extensionData": map[string]string{"type": "path", "path": r.extensionDir},
	}, nil); err != nil {
		t.Fatalf("install the extension as a temporary add-on: %v", err)
	}
	ffHost := r.waitHostOf(t, ctx, ff.Cmd.Process.Pid, 0)
	if ffHost.Browser != "firefox" || ffHost.BrowserName != "firefox" {
		t.Fatalf("firefox's host says %+v", ffHost)
	}

	// Firefox shows the second site's login page (127.0.0.2, which
	// Chromium's prompt watch does not take for a prompt); Chromium its
	// own first site's.
	tabs := contexts(t, ctx, ff)
	login := bidiTab{t: t, ctx: ctx, ff: ff, id: tabs[0].Context}
	if err := ff.Call(ctx, "browsingContext.navigate", map[string]any{"context": login.id, "url": ch.origin2 + "/password", "wait": "complete"}, nil); err != nil {
		t.Fatalf("open the login page: %v", err)
	}
	if !login.call(`function () { const f = document.getElementById("pw"); f.focus(); return document.activeElement === f; }`) {
		t.Fatal("could not focus the password field")
	}
	chTab := ch.open(t, ch.origin1+"/password")
	chTab.focus(pw)

	secret := ch.secret(t)
	a := r.fill(t, ctx, "--service", "127.0.0.2")
	p := awaitBiDiPrompt(t, ctx, ff, ffPrompts, 0)
	p.send(secret)
	res, code := a.result(t, ctx)
	wantResult(t, res, code, fill.StatusOK, "127.0.0.2", fill.FieldPassword)
	if !login.call(`function () { return fg.trustedInput("pw"); }`) || !chTab.eval(untouchedExpr) || ch.prompts.Count() != 0 {
		t.Error("the value did not reach Firefox's page alone")
	}
	r.scanAgentSide(t, secret, a, ffHost.PID, ff.Cmd.Process.Pid)
	closing, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := ffPrompts.WaitClosed(closing, p.id); err != nil {
		t.Error(err)
	}

	secret = ch.secret(t)
	a, cp := ask(t, ch, "--service", "127.0.0.1")
	cp.send(secret)
	res, code = a.result(t, ctx)
	wantResult(t, res, code, fill.StatusOK, "127.0.0.1", fill.FieldPassword)
	if !chTab.eval(`fg.trustedInput("pw")`) {
		t.Error("the value did not reach Chromium's page")
	}
	r.scanAgentSide(t, secret, a, ch.host.PID, ch.browser.Cmd.Process.Pid)

	ff.Stop()
	waitGone(t, ctx, ffHost.PID, "firefox's host")
	leakscan.Bytes(t, secret, "firefox's output", []byte(ff.Output()))
	finish(t, ch)
}
