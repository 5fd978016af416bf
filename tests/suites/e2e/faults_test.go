//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// TestChromiumFaults: in real Chromium with the real extension and host,
// while an agent waits at the prompt, first the extension's service
// worker is stopped (as the browser's own idle stop would), then the
// whole browser is killed. Each time the agent gets failed at once,
// saying the browser went away, nothing reaches the page, the host exits
// and leaves no socket, and the leak scan finds nothing; after the worker
// stop, the worker started again by anything the extension hears closes
// the dead prompt's window, and its new host serves the next fill.
func TestChromiumFaults(t *testing.T) {
	ctx := testContext(t, 4*time.Minute)
	ch := startChromium(t, ctx)

	t.Run("the service worker is stopped mid-request", func(t *testing.T) {
		lost := ch.secret(t)
		tb := ch.openTab(t, ch.origin1+"/password")
		tb.focus(pw)
		a, p := ask(t, ch, "--service", svc)
		p.typeSecret(lost) // typed, not sent
		old := ch.host.PID
		if _, err := chromedp.Call(tb.ctx, serviceworker.Enable, cdp.Empty{}); err != nil {
			t.Fatalf("enable the ServiceWorker domain: %v", err)
		}
		stopped := time.Now()
		if _, err := chromedp.Call(tb.ctx, serviceworker.StopAllWorkers, cdp.Empty{}); err != nil {
			t.Fatalf("stop the service worker: %v", err)
		}
		ch.wentAway(t, a, lost, old, stopped, "the worker stopped")
		untouched(t, tb)

		// Anything the extension hears starts the worker again (here its
		// popup's page, opened in a tab, asking for the state, which the
		// worker gives the toolbar popup alone: the page says so): it
		// closes the dead prompt and connects to a new host.
		inTab := ch.open(t, manifest.ExtensionOrigin+"popup.html")
		inTab.waitFor(`document.getElementById("conn").textContent.startsWith("Open fillgate from its toolbar button")`)
		ch.closed(t, p)
		ch.host = ch.waitHostOf(t, ctx, ch.browserPID, 0)
		if ch.host.PID == old {
			t.Fatalf("the host of the stopped worker still answers")
		}
		base := ch.hostFigures(t)
		secret := ch.secret(t)
		again := loginFocused(t, ch)
		a, p = ask(t, ch, "--service", svc, "--then", "none")
		p.send(secret)
		res, code := ch.outcome(t, secret, a)
		wantResult(t, res, code, fill.StatusOK, svc, fill.FieldPassword)
		if !again.holds(pwHolds, secret) {
			t.Error("the fill after the worker came back: value differed")
		}
		ch.settled(t, base)
	})

	t.Run("the browser is killed", func(t *testing.T) {
		lost := ch.secret(t)
		loginFocused(t, ch)
		a, p := ask(t, ch, "--service", svc)
		p.typeSecret(lost)
		host := ch.host.PID
		killed := time.Now()
		if pg, err := syscall.Getpgid(host); err == nil {
			t.Logf("the host's process group is %d, the browser's %d", pg, ch.browser.Cmd.Process.Pid)
		}
		// The browser process itself, as a crash or `kill -9` of it does;
		// its helpers go with it. (Killing its whole process group, as a
		// terminal does, may take the host too: TestHostKilledAndStartedAgain
		// in tests/suites/hostcore is that case.)
		if err := syscall.Kill(ch.browser.Cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill the browser: %v", err)
		}
		<-ch.browser.Done()
		ch.wentAway(t, a, lost, host, killed, "the browser was killed")
		socks, _ := filepath.Glob(filepath.Join(ch.runDir, "hosts", "*.sock"))
		if _, err := os.Lstat(filepath.Join(ch.runDir, "agent.sock")); err == nil || len(socks) != 0 {
			t.Errorf("the host of the killed browser left sockets: agent.sock (%v), %v", err, socks)
		}
	})

	finish(t, ch)
}

// wentAway checks what the agent of request a got when the browser went
// away at since (what says how): failed, saying the browser disconnected;
// that the host hostPID exits; that the audit log's newest entry is that
// outcome; and that the agent's output and fillgate's logs hold no trace
// of secret. (The host is gone, so its /proc is not there to scan; finish
// scans every file it and the browser wrote.)
func (ch *chromium) wentAway(t *testing.T, a *agent, secret []byte, hostPID int, since time.Time, what string) {
	t.Helper()
	res, code := a.result(t, ch.ctx)
	t.Logf("the agent got %s %v after %s", res.Status, time.Since(since).Round(time.Millisecond), what)
	wantResult(t, res, code, fill.StatusFailed, svc, fill.FieldPassword, "the browser disconnected")
	waitGone(t, ch.ctx, hostPID, "the host after "+what)
	if e := ch.lastAudit(t); e.Status != fill.StatusFailed || e.Detail != res.Detail {
		t.Errorf("the audit log's last entry %+v does not match the result %+v", e, res)
	}
	ch.scanAgentOutput(t, secret, a)
}

// hostFigures is what the current host runs and holds: its goroutines
// (it counts them, in a status that asks for debug) and open file
// descriptors; the fewest of a few samples, so a status connection the
// host is still closing does not count.
func (ch *chromium) hostFigures(t *testing.T) [2]int {
	t.Helper()
	best := [2]int{-1, -1}
	for range 5 {
		f := ch.hostFiguresOnce(t)
		for i := range f {
			if best[i] < 0 || f[i] < best[i] {
				best[i] = f[i]
			}
		}
	}
	return best
}

func (ch *chromium) hostFiguresOnce(t *testing.T) [2]int {
	t.Helper()
	pid := strconv.Itoa(ch.host.PID)
	c, err := net.Dial("unix", filepath.Join(ch.runDir, "hosts", pid+".sock"))
	if err != nil {
		t.Fatalf("the host's socket: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	var m agentsock.Message
	if _, err := c.Write([]byte(`{"op":"status","debug":true}` + "\n")); err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(c).Decode(&m); err != nil || m.Status == nil || m.Status.Goroutines == 0 {
		t.Fatalf("the host's debug status: %+v, %v", m, err)
	}
	fds, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	return [2]int{m.Status.Goroutines, len(fds)}
}

// settled waits until the host runs no more goroutines and holds no more
// file descriptors than at base (an answered prompt drains for up to 3 s).
func (ch *chromium) settled(t *testing.T, base [2]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ch.ctx, time.Minute)
	defer cancel()
	var f [2]int
	if poll.Until(ctx, 50*time.Millisecond, func() (bool, error) {
		f = ch.hostFiguresOnce(t)
		return f[0] <= base[0] && f[1] <= base[1], nil
	}) != nil {
		t.Errorf("the host runs %d goroutines and holds %d fds, against %d and %d before the fill", f[0], f[1], base[0], base[1])
		return
	}
	t.Logf("the host settled at %d goroutines and %d fds (%d and %d before the fill)", f[0], f[1], base[0], base[1])
}
