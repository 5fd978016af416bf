package pinentry_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/pinentry"
)

// self is the test binary, which plays pinentry with fakeEnv set.
func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// start starts the fake pinentry in mode, closed with the test.
func start(t *testing.T, ctx context.Context, mode string, env ...string) *pinentry.Process {
	t.Helper()
	p, err := pinentry.Start(ctx, self(t), append([]string{fakeEnv + "=" + mode}, env...))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// stat is what /proc/PID/stat says of a process: its state, process
// group, session and controlling terminal; ok is false when it is gone.
func stat(pid int) (state byte, pgrp, session, tty int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, 0, false
	}
	// pid (comm) state ppid pgrp session tty_nr ...
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	pgrp, _ = strconv.Atoi(f[2])
	session, _ = strconv.Atoi(f[3])
	tty, _ = strconv.Atoi(f[4])
	return f[0][0], pgrp, session, tty, true
}

// gone reports whether pid has exited (a zombie nobody reaped counts).
func gone(pid int) bool {
	state, _, _, _, ok := stat(pid)
	return !ok || state == 'Z' || state == 'X'
}

// waitGone fails t unless pid is gone within d.
func waitGone(t *testing.T, pid int, d time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !gone(pid) {
		if time.Now().After(deadline) {
			t.Errorf("%s (pid %d) still runs %v later", what, pid, d)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessAnswers(t *testing.T) {
	p := start(t, t.Context(), "answer")
	pin, err := p.GetPIN(t.Context(), pinentry.Dialog{Title: "fillgate", Prompt: "Password:"})
	if err != nil {
		t.Fatalf("GetPIN: %v", err)
	}
	if !bytes.Equal(pin, fakePIN) {
		t.Error("GetPIN returned another value than the fake typed")
	}
	clear(pin)
	if err := p.Confirm(t.Context(), pinentry.Dialog{}); err != nil {
		t.Errorf("Confirm: %v", err)
	}
	p.Close()
	select {
	case <-p.Exited():
	case <-time.After(time.Second):
		t.Error("the program runs on after Close")
	}
	if !pinentry.Zeroed(p.Conn) {
		t.Error("the line buffer holds bytes after Close")
	}
}

// TestProcessSession: pinentry runs in a session of its own with no
// terminal, and with exactly the environment it was given.
func TestProcessSession(t *testing.T) {
	p := start(t, t.Context(), "hang", "DISPLAY=:4242")
	_, pgrp, session, tty, ok := stat(p.Pid())
	if !ok {
		t.Fatal("no /proc entry for the program")
	}
	if pgrp != p.Pid() || session != p.Pid() || tty != 0 {
		t.Errorf("process group %d, session %d, tty %d; want %d, %d, none", pgrp, session, tty, p.Pid(), p.Pid())
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if want := fakeEnv + "=hang\x00DISPLAY=:4242\x00"; string(env) != want {
		t.Errorf("environment %q, want %q", env, want)
	}
}

// TestProcessKilledWithContext: when ctx ends mid-dialog, the dialog
// returns the ctx error and the program and what it started are gone
// within a second.
func TestProcessKilledWithContext(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := start(t, ctx, "spawn", fakePIDFile+"="+pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the fake wrote no child pid: %v", err)
	}
	child, _ := strconv.Atoi(string(b))
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = p.GetPIN(ctx, pinentry.Dialog{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("GetPIN = %v, want context.Canceled", err)
	}
	waitGone(t, p.Pid(), time.Second, "pinentry")
	waitGone(t, child, time.Second, "the child pinentry started")
}

func TestProcessCloseKills(t *testing.T) {
	p := start(t, t.Context(), "hang")
	p.Close()
	waitGone(t, p.Pid(), time.Second, "pinentry")
}

// TestProcessCloseWhileADialogIsShown: Close from another goroutine ends
// a dialog that is shown (the dialog's call returns ErrClosed) without
// racing it for the session (go test -race fails this without Conn's
// lock), and the program is gone.
func TestProcessCloseWhileADialogIsShown(t *testing.T) {
	p := start(t, t.Context(), "hang")
	done := make(chan error, 1)
	go func() {
		_, err := p.GetPIN(t.Context(), pinentry.Dialog{Title: "fillgate"})
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // the dialog is shown
	p.Close()
	select {
	case err := <-done:
		if !errors.Is(err, pinentry.ErrClosed) {
			t.Errorf("GetPIN after Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("GetPIN still waits 5s after Close")
	}
	waitGone(t, p.Pid(), time.Second, "pinentry")
	if !pinentry.Zeroed(p.Conn) {
		t.Error("the line buffer holds bytes after Close")
	}
}

func TestProcessCrash(t *testing.T) {
	p := start(t, t.Context(), "crash")
	if _, err := p.GetPIN(t.Context(), pinentry.Dialog{}); !errors.Is(err, pinentry.ErrClosed) {
		t.Errorf("GetPIN = %v, want ErrClosed", err)
	}
}

func TestProcessStartFails(t *testing.T) {
	_, err := pinentry.Start(t.Context(), self(t), []string{fakeEnv + "=fail"})
	if err == nil || !strings.Contains(err.Error(), "cannot open display: :4242") || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("Start = %v, want an error that repeats the program's complaint, printable", err)
	}
	if _, err := pinentry.Start(t.Context(), "relative/pinentry", nil); err == nil {
		t.Error("Start ran a relative path")
	}
	if _, err := pinentry.Start(t.Context(), filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("Start ran a missing program")
	}
}

// TestProcessDiesWithFillgate: a pinentry outlives no fillgate killed
// with SIGKILL (Pdeathsig).
func TestProcessDiesWithFillgate(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	parent := exec.Command(self(t))
	parent.Env = []string{fakeEnv + "=parent", fakePIDFile + "=" + pidFile}
	parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the parent started no pinentry")
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(string(b))
	}
	if gone(pid) {
		t.Fatal("the pinentry is gone before its parent")
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, time.Second, "the pinentry of a killed fillgate")
}
