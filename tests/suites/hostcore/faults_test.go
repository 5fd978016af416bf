package hostcore

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
)

// waitingAtThePrompt starts a fill for github.com and returns once its
// prompt page is open in the human's browser (who does not answer).
func (r *rig) waitingAtThePrompt() *running {
	r.t.Helper()
	opened := make(chan struct{})
	r.behave(then(looksAway(), func(context.Context, *rig, prompted) error {
		close(opened)
		return nil
	}))
	p := r.startFill("github.com")
	select {
	case <-opened:
	case <-r.ctx.Done():
		r.t.Fatal("the prompt never opened")
	}
	return p
}

// expectServesAgain checks that a (new) host serves a status with the
// extension connected and a whole fill, and afterwards runs no more
// goroutines and holds no more file descriptors than before it.
func (r *rig) expectServesAgain() {
	r.t.Helper()
	base := r.baseline()
	defer r.expectSettled(base)
	hs, err := agentsock.Status(r.ctx, r.dirs.socketDir(r.t))
	if err != nil || len(hs) != 1 || !hs[0].Extension.Connected || hs[0].PID != r.hostPID {
		r.t.Fatalf("status after the new host started: %+v, %v; want the new host (pid %d) alone, connected", hs, err, r.hostPID)
	}
	r.behave(answers(r.secret))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	if !r.ext.ValueEquals(r.secret) {
		r.t.Error("the new host's fill: value differed")
	}
}

// expectSocketsGone checks that the ended host left no socket behind.
func (r *rig) expectSocketsGone(pid int) {
	r.t.Helper()
	dir := r.dirs.socketDir(r.t)
	for _, p := range []string{agentsock.SocketPath(dir), filepath.Join(dir, "hosts", strconv.Itoa(pid)+".sock")} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			r.t.Errorf("the ended host left %s behind (%v)", p, err)
		}
	}
}

// TestBrokenStreamEndsTheHost: a stream from the browser that cannot be
// read on (a length over the 64 MiB cap, or the browser closing in the
// middle of a frame, with or without any of its body) ends the host at
// once and cleanly: the agent waiting at the prompt gets failed saying the
// browser went away, the prompt is dead, the host's sockets are gone, and
// the host the browser starts next serves status and fills.
func TestBrokenStreamEndsTheHost(t *testing.T) {
	overCap := binary.NativeEndian.AppendUint32(nil, nativemsg.MaxRead+1)
	noBody := binary.NativeEndian.AppendUint32(nil, 100)
	halfBody := append(binary.NativeEndian.AppendUint32(nil, 100), `{"type":"hel`...)
	for _, tc := range []struct {
		name   string
		raw    []byte
		close  bool   // the browser closes the pipe after raw
		stderr string // what the host says on its way out
	}{
		{"a length over the cap", overCap, false, "incoming message exceeds the 64 MiB limit"},
		{"a length over the cap, then a body", append(overCap, make([]byte, 1<<20)...), false, "incoming message exceeds the 64 MiB limit"},
		{"a length and no body", noBody, true, "unexpected EOF"},
		{"half a frame", halfBody, true, "unexpected EOF"},
		{"half a length", noBody[:2], true, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, setup{page: loginPage("https://github.com"), budget: 2 * time.Minute})
			old := r.hostPID
			p := r.waitingAtThePrompt()
			// The host may stop reading, and exit, before all of raw is in.
			_, _ = r.hostIn.Write(tc.raw)
			if tc.close {
				_ = r.hostIn.Close()
			}
			got := p.wait()
			r.expect(got, fill.StatusFailed, "the browser disconnected")
			r.expectNothingInserted()
			err := r.awaitHostEnd()
			r.expectPromptDead(r.lastPage())
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("the host ended with %v, want exit status 1", err)
			}
			if stderr := string(r.hostErr.Bytes()); !strings.Contains(stderr, tc.stderr) {
				t.Errorf("the host's last words %q do not say %q", r.safe(stderr), tc.stderr)
			}
			r.expectSocketsGone(old)
			r.expectAudit(got)

			r.restartBinary(fakeext.Options{Page: loginPage("https://github.com")})
			r.expectServesAgain()
		})
	}
}

// TestHostKilledAndStartedAgain: the host is killed (SIGKILL, no clean
// up) while an agent waits at its prompt. The agent gets failed, with a
// detail, at once; the prompt's page is dead; the sockets the host left
// are stale, and the host the browser starts next replaces them and
// serves, and lets go of everything a fill used.
func TestHostKilledAndStartedAgain(t *testing.T) {
	t.Parallel()
	r := newRig(t, setup{page: loginPage("https://github.com"), budget: 3 * time.Minute})
	old := r.hostPID
	p := r.waitingAtThePrompt()
	if err := r.hostCmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	got := p.wait()
	r.expect(got, fill.StatusFailed, "the fillgate host did not finish the request")
	if !strings.Contains(got.res.Detail, "hung up") {
		t.Errorf("the detail %q does not say the host hung up", r.safe(got.res.Detail))
	}
	r.expectNothingInserted()
	if err := r.awaitHostEnd(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the host ended with %v, want killed", err)
	}
	r.expectPromptDead(r.lastPage())
	dir := r.dirs.socketDir(t)
	for _, s := range []string{agentsock.SocketPath(dir), filepath.Join(dir, "hosts", strconv.Itoa(old)+".sock")} {
		if _, err := os.Lstat(s); err != nil {
			t.Fatalf("the killed host's socket %s is not there to be stale: %v", s, err)
		}
	}
	// An agent asking now, with only stale sockets, is told at once.
	r.expect(r.fill("github.com"), fill.StatusFailed, noHostDetail)

	r.restartBinary(fakeext.Options{Page: loginPage("https://github.com")})
	if _, err := os.Lstat(filepath.Join(dir, "hosts", strconv.Itoa(old)+".sock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed host's own socket is still there once a new host took over (%v)", err)
	}
	r.expectServesAgain()
}

// TestBrowserGoesAway: the browser ends the host in each way a real one
// does while an agent waits at the prompt: it closes the host's stdin, or
// both its pipes (Chromium, when the extension's port closes, a worker
// stop included), with or without the SIGTERM Chromium sends right after,
// or the SIGTERM alone. Every time the agent gets failed saying the
// browser went away (not cancelled: the agent did not leave), the host
// exits 0, on its own, cleaning up its sockets, and the next host serves.
func TestBrowserGoesAway(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stdin, both bool // close stdin; close stdout too
		term        bool // send SIGTERM
	}{
		{"stdin closed", true, false, false},
		{"both pipes closed", true, true, false},
		{"both pipes closed, then SIGTERM", true, true, true},
		{"SIGTERM", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, setup{page: loginPage("https://github.com"), budget: 2 * time.Minute})
			old := r.hostPID
			p := r.waitingAtThePrompt()
			if tc.stdin {
				_ = r.hostIn.Close()
			}
			if tc.both {
				_ = r.hostStdout.Close()
			}
			if tc.term {
				// With both pipes closed the host may have exited (and
				// been reaped) before the signal: what the browser sends
				// then reaches nobody, as it would a host already gone.
				if err := r.hostCmd.Process.Signal(syscall.SIGTERM); err != nil && !(tc.both && errors.Is(err, os.ErrProcessDone)) {
					t.Fatal(err)
				}
			}
			got := p.wait()
			r.expect(got, fill.StatusFailed, "the browser disconnected")
			r.expectNothingInserted()
			if err := r.awaitHostEnd(); err != nil {
				t.Errorf("the host ended with %v (%s), want exit status 0", err, r.safe(string(r.hostErr.Bytes())))
			}
			r.expectPromptDead(r.lastPage())
			r.expectSocketsGone(old)
			r.expectAudit(got)
			r.restartBinary(fakeext.Options{Page: loginPage("https://github.com")})
			r.expectServesAgain()
		})
	}
}
