package procinfo

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
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
	// A real line (fields 3 to 52), with a comm that holds spaces and
	// both parentheses.
	line := "42 (a) b (c)) S 7 42 42 0 -1 4194560 115 0 0 0 0 0 0 0 20 0 1 0 98765 1234 56 " +
		"18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0"
	st, err := parseStat([]byte(line))
	if err != nil || st.comm != "a) b (c)" || st.ppid != 7 || st.start != 98765 {
		t.Errorf("parseStat = %+v, %v; want comm %q, ppid 7, start 98765", st, err, "a) b (c)")
	}
	// A line cut before starttime still names the process; it has no
	// start time.
	if st, err := parseStat([]byte("42 (a) b (c)) S 7 42 42 0 -1")); err != nil || st.ppid != 7 || st.start != 0 {
		t.Errorf("parseStat(short) = %+v, %v", st, err)
	}
	badStart := "42 (x) S 7" + strings.Repeat(" 0", fieldStart-fieldPPID-1) + " soon"
	for _, bad := range []string{"42 nonsense", "42 (x) S", "42 (x) S x", badStart} {
		if st, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) = %+v, want an error", bad, st)
		}
	}
}

func TestStartDiffersBetweenChildren(t *testing.T) {
	// Linux counts start times in clock ticks (usually 10 ms): two
	// processes started well apart have different, ordered start times,
	// and one keeps its own however often it is read.
	startSleep := func() *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	first := startSleep()
	time.Sleep(100 * time.Millisecond)
	second := startSleep()
	a, err := Get(first.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Get(second.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if a.Start == 0 || b.Start <= a.Start {
		t.Errorf("start times %d then %d; want two nonzero, the second later", a.Start, b.Start)
	}
	if again, err := Get(first.Process.Pid); err != nil || again.Start != a.Start {
		t.Errorf("the first child read again: start %d, %v; want %d", again.Start, err, a.Start)
	}
}
