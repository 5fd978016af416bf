package procinfo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func selfExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe
}

func TestGetSelf(t *testing.T) {
	p, err := Get(os.Getpid())
	if err != nil {
		t.Fatalf("Get(self): %v", err)
	}
	if p.PID != os.Getpid() {
		t.Errorf("PID = %d, want %d", p.PID, os.Getpid())
	}
	if p.PPID != os.Getppid() {
		t.Errorf("PPID = %d, want %d", p.PPID, os.Getppid())
	}
	if want := selfExe(t); p.Exe != want {
		t.Errorf("Exe = %q, want %q", p.Exe, want)
	}
	if p.Name == "" {
		t.Error("Name is empty")
	}
}

func TestStartOfSelfIsStable(t *testing.T) {
	p, err := Get(os.Getpid())
	if err != nil {
		t.Fatalf("Get(self): %v", err)
	}
	if p.Start == 0 {
		t.Fatal("this process has no start time")
	}
	for range 3 {
		again, err := Get(os.Getpid())
		if err != nil || again.Start != p.Start {
			t.Fatalf("Get(self) again: start %d, %v; want %d", again.Start, err, p.Start)
		}
	}
	// The parent started no later than this process.
	if parent, err := Get(os.Getppid()); err == nil && parent.Start > p.Start {
		t.Errorf("the parent started at %d, after this process (%d)", parent.Start, p.Start)
	}
}

func TestGetMissing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("running a short-lived child: %v", err)
	}
	// The child has been reaped; its pid names nothing (pid reuse within
	// the test is possible in theory, so only check when it is free).
	pid := cmd.Process.Pid
	if Alive(pid) {
		t.Skip("the child's pid was reused")
	}
	if _, err := Get(pid); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(reaped child) = %v, want ErrNotFound", err)
	}
	if _, err := Get(0); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(0) = %v, want ErrNotFound", err)
	}
}

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("Alive(self) = false")
	}
	if Alive(0) || Alive(-1) {
		t.Error("Alive of a non-pid = true")
	}
}
