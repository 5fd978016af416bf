package procinfo

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestNearestChild(t *testing.T) {
	// sh (a child of this test) runs sleep; the nearest process of
	// sleep's chain that is not "sleep" is the shell.
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var sleepPID int
	if _, err := fmt.Fscan(out, &sleepPID); err != nil {
		t.Fatalf("reading the sleep pid: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Kill(sleepPID, syscall.SIGKILL) })

	// The background job is a forked shell until it execs sleep.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p, err := Get(sleepPID)
		if err == nil && p.Name == "sleep" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background job never became sleep: %+v, %v", p, err)
		}
	}

	p, err := Nearest(sleepPID, func(p Process) bool { return p.Name == "sleep" })
	if err != nil {
		t.Fatalf("Nearest: %v", err)
	}
	if p.PID != cmd.Process.Pid {
		t.Errorf("Nearest = pid %d (%s), want the shell %d", p.PID, p.Name, cmd.Process.Pid)
	}
	if p.PPID != os.Getpid() {
		t.Errorf("the shell's PPID = %d, want this test %d", p.PPID, os.Getpid())
	}

	self, err := Nearest(sleepPID, func(Process) bool { return false })
	if err != nil || self.PID != sleepPID {
		t.Errorf("Nearest(skip nothing) = %d, %v; want %d", self.PID, err, sleepPID)
	}

	if _, err := Nearest(sleepPID, func(Process) bool { return true }); err == nil {
		t.Error("Nearest(skip everything) succeeded")
	}
}

func TestLongNameFromExe(t *testing.T) {
	// A name longer than comm's 15 bytes comes back whole from the
	// executable's path.
	dir := t.TempDir()
	long := dir + "/a-rather-long-program-name"
	// A copy, not a symlink: /proc/<pid>/exe resolves symlinks.
	data, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(long, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	p, err := Get(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "a-rather-long-program-name" || p.Exe != long {
		t.Errorf("Get = name %q exe %q, want the full name and %s", p.Name, p.Exe, long)
	}
}

func TestParseStat(t *testing.T) {
	comm, ppid, err := parseStat([]byte("42 (a) b (c)) S 7 42 42 0 -1"))
	if err != nil || comm != "a) b (c)" || ppid != 7 {
		t.Errorf("parseStat = %q, %d, %v", comm, ppid, err)
	}
	if _, _, err := parseStat([]byte("42 nonsense")); err == nil {
		t.Error("parseStat accepted a line without (comm)")
	}
	if _, _, err := parseStat([]byte("42 (x) S")); err == nil {
		t.Error("parseStat accepted a line without ppid")
	}
}
