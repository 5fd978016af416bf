//go:build linux

package undriven

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// inRoot are the markers of a process of the rig's: its environment
// points into the rig's temp root (the browser and its helpers, the host,
// the agents).
func (r *rig) inRoot() [][]byte {
	return [][]byte{[]byte("=" + r.root + "/"), []byte("=" + r.root + "\x00")}
}

// onDisplay are the markers of a process on the rig's display (the native
// dialog gets DISPLAY and little else). They hold only while the display
// runs: once it is gone, another test's X server may take its number.
func (r *rig) onDisplay() [][]byte {
	return [][]byte{[]byte("\x00DISPLAY=" + r.display.Name + "\x00")}
}

// noLeftovers checks, once the processes it should have stopped were
// stopped, that no process with one of markers runs on. It waits up to
// 10 s for them to exit, then kills those left and fails the test.
func (r *rig) noLeftovers(markers [][]byte) {
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		left := processesWith(markers)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			r.t.Errorf("still running 10 s after the test ended (now killed): %v", left)
			return
		}
		<-tick.C
	}
}

// processesWith returns the processes (pid → name) whose environment
// holds one of markers. The environment is read with a NUL in front, so
// a marker may start at its first variable.
func processesWith(markers [][]byte) map[int]string {
	self := os.Getpid()
	found := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || len(env) == 0 {
			continue // gone, a zombie, or not ours
		}
		env = append([]byte{0}, env...)
		for _, m := range markers {
			if bytes.Contains(env, m) {
				comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
				found[pid] = strings.TrimSpace(string(comm))
				break
			}
		}
	}
	return found
}

// TestLeftoversAreFound: the check that nothing outlives a test sees a
// process by its environment, and no longer once it exited.
func TestLeftoversAreFound(t *testing.T) {
	root := t.TempDir()
	marker := [][]byte{[]byte("=" + root + "\x00")}
	cmd := exec.Command("sleep", "60")
	cmd.Env = []string{"XDG_RUNTIME_DIR=" + root}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, ok := processesWith(marker)[cmd.Process.Pid]; !ok {
		t.Error("a running process with the marker in its environment was not found")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if left := processesWith(marker); len(left) != 0 {
		t.Errorf("found %v after the process exited", left)
	}
}
