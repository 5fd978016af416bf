//go:build !windows

package agentsock

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// helperSquat is Windows only: pipe names are global there, while on
// Unix the socket directory is the user's own (0700).
func helperSquat() int {
	fmt.Fprintln(os.Stderr, "squat: a Windows helper")
	return 2
}

// endpointExists reports whether the socket file at path exists.
func endpointExists(path string) bool { return exists(path) }

// hostMarker is what a host leaves in dir under its pid: its socket,
// hosts/<pid>.sock.
func hostMarker(dir string, pid int) string {
	return filepath.Join(dir, "hosts", strconv.Itoa(pid)+".sock")
}

// hostEndpoint is the socket of the host with pid.
func hostEndpoint(dir string, pid int) string { return hostMarker(dir, pid) }

// exeSuffix ends an executable's name.
const exeSuffix = ""

// leaveDeadHost leaves in dir what a host with pid leaves when it is
// killed while it owns agent.sock: both its sockets, nobody listening.
func leaveDeadHost(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "hosts"), 0o700); err != nil {
		t.Fatal(err)
	}
	makeStale(t, SocketPath(dir))
	makeStale(t, hostMarker(dir, pid))
}

func TestListenPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", maxSunPath))
	l, err := Listen(dir)
	if err == nil {
		l.Close()
		t.Fatal("Listen accepted a socket path over sun_path")
	}
	if !strings.Contains(err.Error(), "over the "+strconv.Itoa(maxSunPath)) {
		t.Errorf("unclear error: %v", err)
	}
}

func TestClaimRace(t *testing.T) {
	// Hosts started at once over a stale agent.sock: exactly one owns it,
	// and it is that one's file.
	dir := sockDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	makeStale(t, SocketPath(dir))
	const n = 6
	hosts := make([]*host, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			l, err := listen(dir, listenConfig{id: fakeID(i), claimEvery: time.Hour})
			if err != nil {
				errs <- err
				return
			}
			hosts[i] = &host{l: l}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("listen: %v", err)
	}
	owner := -1
	for i, h := range hosts {
		t.Cleanup(func() { h.l.Close() })
		if h.l.OwnsAgentSocket() {
			if owner >= 0 {
				t.Fatalf("hosts %d and %d both own agent.sock", owner, i)
			}
			owner = i
		}
	}
	if owner < 0 {
		t.Fatal("nobody owns agent.sock")
	}
	hosts[owner].l.mu.Lock()
	info := hosts[owner].l.agentInfo
	hosts[owner].l.mu.Unlock()
	if !isSameFile(SocketPath(dir), info) {
		t.Error("agent.sock is not the owner's file")
	}
}
