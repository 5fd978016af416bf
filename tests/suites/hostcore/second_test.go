package hostcore

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// TestSecondConnectionRefused: a second native-messaging connection from
// the same browser process with the extension's own instance id (a page
// of the extension opened in a tab, or a program driving the browser,
// playing the extension) starts a host that never serves an agent: it
// exits refusing, without a single request to its extension, the audit
// log records the event second_connection, and the first host goes on
// serving, alone.
func TestSecondConnectionRefused(t *testing.T) {
	const instance = "6f0c5ec0d0c0ffee"
	r := newRig(t, setup{page: loginPage("https://github.com"), instance: instance, budget: 2 * time.Minute})

	// The same parent as the first host's (this test, the browser), the
	// same instance.
	cmd := exec.Command(fillgateBin(), callerArg)
	cmd.Env = r.dirs.environ()
	cmd.Dir = r.dirs.home
	stdin, stdout := child.Pipes(t, cmd)
	var stderr syncbuf.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the second host: %v", err)
	}
	second := fakeext.New(stdout, stdin, fakeext.Options{Page: loginPage("https://github.com"), Instance: instance})
	go func() { _ = second.Run(r.ctx) }()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// It hears hello at once, finds the first host serving the same
	// browser and instance, and looks again after a grace of 1.5 s.
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatal("the second host did not end: it took the connection")
	}
	second.Disconnect()
	r.keep("the second host's stderr", stderr.Bytes())
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(stderr.Bytes()), "refused a second native-messaging connection") {
		t.Errorf("the second host ended with %v, saying %q; want exit status 1 and the refusal", err, r.safe(string(stderr.Bytes())))
	}
	for _, m := range second.Received() {
		if m.ID != nil {
			t.Errorf("the second host asked its extension %q", m.Type)
		}
	}

	var refused []fill.AuditEntry
	for _, e := range r.auditEntries() {
		if e.Event == fill.EventSecondConnection {
			refused = append(refused, e)
		}
	}
	if len(refused) != 1 || refused[0].Status != fill.StatusRefused || !strings.Contains(refused[0].Detail, "refused a second native-messaging connection") {
		t.Errorf("the audit log's second_connection entries: %+v; want one refusal", refused)
	}

	hs, err := agentsock.Status(r.ctx, r.dirs.socketDir(t))
	if err != nil || len(hs) != 1 || hs[0].PID != r.hostPID || !hs[0].Extension.Connected || hs[0].Extension.Instance != instance {
		t.Fatalf("status after the refusal: %+v, %v; want the first host (pid %d) alone, connected", hs, err, r.hostPID)
	}
	r.behave(answers(r.secret))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInserted(r.secret)
}
