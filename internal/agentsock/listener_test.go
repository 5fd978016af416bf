package agentsock

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/testctx"
)

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return fi.Mode()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// unixOnly skips a test of AF_UNIX socket files on Windows, whose
// endpoints are named pipes; why says what Windows has instead.
func unixOnly(t *testing.T, why string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a Unix socket-file test; on Windows the endpoints are named pipes: " + why)
	}
}

// makeStale leaves a socket file at path with nobody listening, as a host
// that crashed would.
func makeStale(t *testing.T, path string) {
	t.Helper()
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ul.SetUnlinkOnClose(false)
	ul.Close()
	if _, err := net.Dial("unix", path); err == nil {
		t.Fatal("the stale socket still answers")
	}
}

func TestListenMakesPrivateFiles(t *testing.T) {
	if os.PathSeparator != '/' {
		t.Skip("file modes are Unix")
	}
	dir := filepath.Join(t.TempDir(), "run", "fillgate")
	h := startHost(t, dir, os.Getpid(), &fakeHandler{})

	if m := mode(t, dir); m.Perm() != 0o700 || !m.IsDir() {
		t.Errorf("dir mode %v, want drwx------", m)
	}
	if m := mode(t, filepath.Join(dir, "hosts")); m.Perm() != 0o700 || !m.IsDir() {
		t.Errorf("hosts dir mode %v, want drwx------", m)
	}
	want := filepath.Join(dir, "hosts", strconv.Itoa(os.Getpid())+".sock")
	if h.l.Path() != want {
		t.Errorf("Path = %s, want %s", h.l.Path(), want)
	}
	for _, p := range []string{h.l.Path(), SocketPath(dir)} {
		if m := mode(t, p); m.Type() != fs.ModeSocket || m.Perm() != 0o600 {
			t.Errorf("%s mode %v, want srw-------", p, m)
		}
	}
	if !h.l.OwnsAgentSocket() {
		t.Error("the only host does not own agent.sock")
	}

	if err := h.l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, p := range []string{h.l.Path(), SocketPath(dir)} {
		if exists(p) {
			t.Errorf("%s is still there after Close", p)
		}
	}
	if !exists(dir) {
		t.Error("Close removed the directory")
	}
}

func TestListenRefusesOpenDir(t *testing.T) {
	if os.PathSeparator != '/' {
		t.Skip("file modes are Unix")
	}
	dir := filepath.Join(t.TempDir(), "fg")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := Listen(dir)
	if err == nil {
		l.Close()
		t.Fatal("Listen accepted a directory other users can read")
	}
	if !strings.Contains(err.Error(), "0700") {
		t.Errorf("the error does not say how to fix it: %v", err)
	}
	if exists(SocketPath(dir)) || exists(filepath.Join(dir, "hosts")) {
		t.Error("Listen left files behind after refusing")
	}
}

func TestStaleAgentSocketReplaced(t *testing.T) {
	unixOnly(t, "a pipe vanishes with its server, so there is no stale one to replace (TestKilledHostIsReplaced)")
	dir := sockDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	makeStale(t, SocketPath(dir))

	h := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	if !h.l.OwnsAgentSocket() {
		t.Fatal("the stale agent.sock was not taken")
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 1 {
		t.Errorf("agent.sock answered as pid %d, want the new host", pid)
	}
}

func TestAgentSocketNotASocketIsLeftAlone(t *testing.T) {
	unixOnly(t, "no file stands at a pipe's name (TestClientRefusesASquatter covers a pipe that is not a host's)")
	dir := sockDir(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(SocketPath(dir), []byte("not mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	if h.l.OwnsAgentSocket() {
		t.Error("a regular file at agent.sock was replaced")
	}
	if b, err := os.ReadFile(SocketPath(dir)); err != nil || string(b) != "not mine" {
		t.Errorf("the file at agent.sock changed: %v", err)
	}
	if pid := statusPID(t, h.l.Path()); pid != 1 {
		t.Errorf("the host socket answered as pid %d", pid)
	}
}

func TestLiveAgentSocketNotStolen(t *testing.T) {
	dir := sockDir(t)
	h1 := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	h2 := startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2}})

	if !h1.l.OwnsAgentSocket() || h2.l.OwnsAgentSocket() {
		t.Fatalf("owners: first %v, second %v; want only the first", h1.l.OwnsAgentSocket(), h2.l.OwnsAgentSocket())
	}
	if err := h2.l.claim(testctx.New(t)); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if h2.l.OwnsAgentSocket() {
		t.Fatal("a second claim stole the live agent.sock")
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 1 {
		t.Errorf("agent.sock answered as pid %d, want the first host", pid)
	}
	if pid := statusPID(t, h2.l.Path()); pid != 2 {
		t.Errorf("the second host's socket answered as pid %d", pid)
	}
	// The owner's own claim keeps what it has.
	if err := h1.l.claim(testctx.New(t)); err != nil || !h1.l.OwnsAgentSocket() {
		t.Errorf("the owner's claim: %v, owns %v", err, h1.l.OwnsAgentSocket())
	}
}

func TestTakeoverAfterOwnerCloses(t *testing.T) {
	dir := sockDir(t)
	h1 := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	h2 := startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2}})
	if err := h1.l.Close(); err != nil {
		t.Fatal(err)
	}
	if endpointExists(SocketPath(dir)) {
		t.Fatal("the closed owner left agent.sock")
	}
	if err := h2.l.claim(testctx.New(t)); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if !h2.l.OwnsAgentSocket() {
		t.Fatal("the second host did not take agent.sock over")
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 2 {
		t.Errorf("agent.sock answered as pid %d, want the second host", pid)
	}
}

func TestClaimLoopTakesOver(t *testing.T) {
	dir := sockDir(t)
	h1 := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	h2 := startHostWith(t, dir, listenConfig{id: fakeID(2), claimEvery: 20 * time.Millisecond}, ReadTimeout, &fakeHandler{status: HostStatus{PID: 2}})
	if h2.l.OwnsAgentSocket() {
		t.Fatal("the second host owns agent.sock while the first is live")
	}
	if err := h1.l.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := testctx.New(t)
	for !h2.l.OwnsAgentSocket() {
		select {
		case <-ctx.Done():
			t.Fatal("the claim loop never took agent.sock over")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 2 {
		t.Errorf("agent.sock answered as pid %d, want the second host", pid)
	}
}

func TestCloseRemovesOnlyItsOwnFiles(t *testing.T) {
	unixOnly(t, "nobody can remove a pipe from under its server, so no other host can take its name while it lives")
	dir := sockDir(t)
	h1 := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	h2 := startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2}})

	// Someone removes agent.sock behind the owner's back; the second host
	// claims the free path.
	if err := os.Remove(SocketPath(dir)); err != nil {
		t.Fatal(err)
	}
	if err := h2.l.claim(testctx.New(t)); err != nil || !h2.l.OwnsAgentSocket() {
		t.Fatalf("claim of a free agent.sock: %v, owns %v", err, h2.l.OwnsAgentSocket())
	}

	if err := h1.l.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(h1.l.Path()) {
		t.Error("Close left its host socket")
	}
	if !exists(h2.l.Path()) {
		t.Error("Close removed the other host's socket")
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 2 {
		t.Errorf("after the first host closed, agent.sock answered as pid %d, want the second host", pid)
	}
	if !exists(filepath.Join(dir, lockName)) {
		t.Error("the lock file is gone")
	}
}

func TestClaimNoticesLostAgentSocket(t *testing.T) {
	unixOnly(t, "nobody can remove a pipe from under its server, so a claim cannot lose it")
	dir := sockDir(t)
	h1 := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	h2 := startHost(t, dir, fakeID(2), &fakeHandler{status: HostStatus{PID: 2}})
	if err := os.Remove(SocketPath(dir)); err != nil {
		t.Fatal(err)
	}
	if err := h2.l.claim(testctx.New(t)); err != nil || !h2.l.OwnsAgentSocket() {
		t.Fatalf("claim of a free agent.sock: %v, owns %v", err, h2.l.OwnsAgentSocket())
	}
	if err := h1.l.claim(testctx.New(t)); err != nil {
		t.Fatalf("claim: %v", err)
	}
	if h1.l.OwnsAgentSocket() {
		t.Error("the first host still thinks it owns an agent.sock that is not its file")
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 2 {
		t.Errorf("agent.sock answered as pid %d, want the second host", pid)
	}
}

func TestKilledHostIsReplaced(t *testing.T) {
	dir := sockDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := startHelperHost(t, dir, self)
	dead := hostMarker(dir, cmd.Process.Pid)
	if pid := statusPID(t, SocketPath(dir)); pid != cmd.Process.Pid {
		t.Fatalf("agent.sock answered as pid %d, want the helper %d", pid, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if runtime.GOOS == "windows" {
		// Its pipes went with it; only the marker stays.
		if endpointExists(SocketPath(dir)) || endpointExists(hostEndpoint(dir, cmd.Process.Pid)) || !exists(dead) {
			t.Fatal("the killed host's pipes outlived it, or it left no marker to test with")
		}
	} else if !exists(SocketPath(dir)) || !exists(dead) {
		t.Fatal("the killed host left no stale sockets to test with")
	}

	h := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 1}})
	if !h.l.OwnsAgentSocket() {
		t.Fatal("the dead host's agent.sock was not taken")
	}
	if pid := statusPID(t, SocketPath(dir)); pid != 1 {
		t.Errorf("agent.sock answered as pid %d, want the new host", pid)
	}
	if exists(dead) {
		t.Error("the dead host's hosts/<pid>.sock was not pruned")
	}
}

func TestLiveHostSocketNotTaken(t *testing.T) {
	dir := sockDir(t)
	startHost(t, dir, fakeID(1), &fakeHandler{})
	_, err := listen(dir, listenConfig{id: fakeID(1), claimEvery: time.Hour})
	if err == nil {
		t.Fatal("a second listener took a live hosts/<id>.sock")
	}
	if !strings.Contains(err.Error(), "live host") {
		t.Errorf("unclear error: %v", err)
	}
}

func TestCloseTwice(t *testing.T) {
	l, err := listen(sockDir(t), listenConfig{id: os.Getpid(), claimEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := l.claim(testctx.New(t)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("claim after Close = %v, want net.ErrClosed", err)
	}
}

func TestTakeoverWhenTheOwnerIsKilled(t *testing.T) {
	dir := sockDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := startHelperHost(t, dir, self)
	if pid := statusPID(t, SocketPath(dir)); pid != cmd.Process.Pid {
		t.Fatalf("agent.sock answered as pid %d, want the helper %d", pid, cmd.Process.Pid)
	}
	// A second host, with the real claim period, waits its turn.
	h := startHostWith(t, dir, listenConfig{id: os.Getpid(), claimEvery: claimEvery}, ReadTimeout, &fakeHandler{status: HostStatus{PID: 1}})
	if h.l.OwnsAgentSocket() {
		t.Fatal("the second host took a live agent.sock")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	ctx := testctx.New(t)
	for !h.l.OwnsAgentSocket() {
		select {
		case <-ctx.Done():
			t.Fatal("agent.sock was not taken over")
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Logf("agent.sock taken over %v after its owner was killed (claim period %v)", time.Since(killed).Round(time.Millisecond), claimEvery)
	if pid := statusPID(t, SocketPath(dir)); pid != 1 {
		t.Errorf("agent.sock answered as pid %d, want the new owner", pid)
	}
}
