package agentsock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/testctx"
	"github.com/fillgate/fillgate/tests/windows/squat"
	"github.com/fillgate/fillgate/tests/windows/wine"
)

// exeSuffix ends an executable's name.
const exeSuffix = ".exe"

// fileAllAccess is FILE_ALL_ACCESS, what Windows maps GENERIC_ALL to on a
// pipe (Wine keeps GENERIC_ALL as written).
const fileAllAccess = windows.STANDARD_RIGHTS_REQUIRED | windows.SYNCHRONIZE | 0x1ff

// endpointExists reports whether anyone holds the pipe at path.
func endpointExists(path string) bool {
	live, err := pipeExists(path)
	return err == nil && live
}

// hostMarker is what a host leaves in dir under its pid: hosts\<pid>.pipe.
func hostMarker(dir string, pid int) string {
	return filepath.Join(dir, "hosts", strconv.Itoa(pid)+markerExt)
}

// hostEndpoint is the pipe of the host with pid.
func hostEndpoint(dir string, pid int) string { return hostPipe(dir, pid) }

// leaveDeadHost leaves in dir what a host with pid leaves when it is
// killed: its marker. Its pipes went with it.
func leaveDeadHost(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "hosts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostMarker(dir, pid), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// helperSquat plays a program that made a pipe by the name a client
// dials (before the host, or beside it: Wine lets anyone add an instance
// of any pipe). It reads what clients send and answers nothing.
func helperSquat() int {
	l, err := listenPipe(os.Getenv(envSocket))
	if err != nil {
		fmt.Fprintln(os.Stderr, "squat:", err)
		return 1
	}
	squat.Serve(l, os.Stdin, os.Stdout)
	return 0
}

// startSquatter runs a copy of the test binary named squatter.exe (not
// fillgate, not this executable) on the pipe at path. stop ends it and
// returns its report.
func startSquatter(t *testing.T, path string) (stop func() squat.Report) {
	t.Helper()
	exe := child.CopySelf(t, t.TempDir(), "squatter.exe")
	_, out, stdin := startHelper(t, append(os.Environ(), envHelper+"=squat", envSocket+"="+path), exe)
	return func() squat.Report {
		stdin.Close()
		var rep squat.Report
		if err := json.NewDecoder(out).Decode(&rep); err != nil {
			t.Fatalf("the squatter's report: %v", err)
		}
		return rep
	}
}

// TestPipeAdmitsOnlyTheUser reads back the pipe's security descriptor:
// owned by the user, a protected DACL (nothing inherited) with one entry,
// full access for the user; and the names are per user and directory.
func TestPipeAdmitsOnlyTheUser(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeHandler{})
	me, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{h.l.Path(), SocketPath(dir)} {
		if !strings.HasPrefix(p, `\\.\pipe\fillgate-`) {
			t.Errorf("pipe %s is not under \\\\.\\pipe\\fillgate-", p)
		}
		c := dialRaw(t, p)
		sd, err := windows.GetSecurityInfo(windows.Handle(c.(interface{ Fd() uintptr }).Fd()), windows.SE_KERNEL_OBJECT,
			windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
		c.Close()
		if err != nil {
			t.Fatalf("reading %s's security descriptor: %v", p, err)
		}
		t.Logf("%s: %s", p, sd)
		owner, _, err := sd.Owner()
		if err != nil || !windows.EqualSid(owner, me) {
			t.Errorf("%s is owned by %v (%v), want %v", p, owner, err, me)
		}
		ctl, _, err := sd.Control()
		if err != nil || ctl&windows.SE_DACL_PROTECTED == 0 {
			t.Errorf("%s's DACL is not protected: control %#x, %v", p, ctl, err)
		}
		dacl, _, err := sd.DACL()
		if err != nil || dacl == nil || dacl.AceCount != 1 {
			t.Fatalf("%s's DACL: %v, %v; want one entry", p, dacl, err)
		}
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, 0, &ace); err != nil {
			t.Fatal(err)
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		full := ace.Mask == windows.GENERIC_ALL || ace.Mask == fileAllAccess
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || !windows.EqualSid(sid, me) || !full {
			t.Errorf("%s's one entry: type %d, mask %#x, sid %v; want full access for %v only", p, ace.Header.AceType, ace.Mask, sid, me)
		}
	}
	if other := sockDir(t); SocketPath(other) == SocketPath(dir) {
		t.Error("two directories share a pipe name")
	}
}

// TestSecondListenerFails: a second listener on a live host's pipe fails
// before it makes an instance, and the pipe still answers as its host.
// On Windows the first-instance flag would also stop it; Wine 8 ignores
// that flag, so under Wine this proves the probe alone.
func TestSecondListenerFails(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, fakeID(1), &fakeHandler{status: HostStatus{PID: 1}})
	if _, err := listen(dir, listenConfig{id: fakeID(1), claimEvery: time.Hour}); err == nil || !strings.Contains(err.Error(), "live host") {
		t.Fatalf("a second listener on a live host's pipe: %v", err)
	}
	if pid := statusPID(t, h.l.Path()); pid != 1 {
		t.Errorf("the pipe answered as pid %d after the second listener failed", pid)
	}
}

// TestFirstInstanceFlag: creating a pipe that exists fails. Wine 8
// ignores FILE_FLAG_FIRST_PIPE_INSTANCE, so this is for a real Windows.
func TestFirstInstanceFlag(t *testing.T) {
	wine.Skip(t, "Wine 8 ignores FILE_FLAG_FIRST_PIPE_INSTANCE and lets anyone add an instance of an existing pipe; TestClientRefusesASquatter shows clients refuse such instances")
	path := SocketPath(sockDir(t))
	l, err := listenPipe(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l2, err := listenPipe(path); !errors.Is(err, errPipeTaken) {
		if l2 != nil {
			l2.Close()
		}
		t.Fatalf("a second first instance: %v, want errPipeTaken", err)
	}
}

// TestClientRefusesASquatter: a program that is not fillgate holds the
// stable pipe's name before any host starts, and then a second instance
// of it beside the host's own. Clients refuse it before sending a byte
// and reach the host through its own pipe; a fill never goes to it.
func TestClientRefusesASquatter(t *testing.T) {
	dir := sockDir(t)
	stop := startSquatter(t, SocketPath(dir))
	h := &fakeHandler{status: HostStatus{PID: 7}}
	hs := startHost(t, dir, os.Getpid(), h)
	if hs.l.OwnsAgentSocket() {
		t.Fatal("the host claimed a pipe the squatter holds")
	}
	ctx := testctx.New(t)
	if _, err := FillAt(ctx, SocketPath(dir), fill.Request{Service: "a.test"}, "test", nil); !errors.Is(err, ErrNoHost) || !errors.Is(err, errNotFillgate) {
		t.Errorf("a fill sent to the squatted pipe: %v, want ErrNoHost for a server that is not fillgate", err)
	}
	for i := range 5 {
		res, err := Fill(ctx, dir, fill.Request{Service: "a.test"}, "test", nil)
		if err != nil || res.Status != fill.StatusOK {
			t.Fatalf("fill %d past the squatter: %+v, %v", i, res, err)
		}
	}
	if st, err := Status(ctx, dir); err != nil || len(st) != 1 || st[0].PID != 7 {
		t.Errorf("status past the squatter: %+v, %v", st, err)
	}
	rep := stop()
	if rep.Conns == 0 {
		t.Error("no client ever reached the squatter: the test proved nothing")
	}
	if rep.Bytes != 0 {
		t.Errorf("clients sent the squatter %d bytes", rep.Bytes)
	}
	if h.fills.Load() != 5 {
		t.Errorf("the host ran %d fills, want 5", h.fills.Load())
	}
}

// TestSquatterBesideTheHost: under Wine anyone may add an instance of a
// pipe that exists (Windows would refuse another user by the pipe's
// DACL), so a client may open the squatter's instance of the stable pipe
// or the host's. Either way the fill reaches the host, never the
// squatter.
func TestSquatterBesideTheHost(t *testing.T) {
	if !wine.Running() {
		t.Skip("on Windows the host's pipe admits no second server but its own user's programs; under Wine it does, which this test needs")
	}
	dir := sockDir(t)
	h := &fakeHandler{status: HostStatus{PID: 7}}
	hs := startHost(t, dir, os.Getpid(), h)
	if !hs.l.OwnsAgentSocket() {
		t.Fatal("the only host does not own the stable pipe")
	}
	stop := startSquatter(t, SocketPath(dir))
	ctx := testctx.New(t)
	for i := range 10 {
		res, err := Fill(ctx, dir, fill.Request{Service: "a.test"}, "test", nil)
		if err != nil || res.Status != fill.StatusOK {
			t.Fatalf("fill %d: %+v, %v", i, res, err)
		}
	}
	rep := stop()
	t.Logf("the squatter was opened %d times in 10 fills", rep.Conns)
	if rep.Bytes != 0 {
		t.Errorf("clients sent the squatter %d bytes", rep.Bytes)
	}
	if h.fills.Load() != 10 {
		t.Errorf("the host ran %d fills, want 10", h.fills.Load())
	}
}

// TestUserIsRefusesAnotherUser: the token check refuses a process whose
// user is not the one wanted. Wine runs every process as one user, so
// the other user here is a SID no process of ours has (SYSTEM's).
func TestUserIsRefusesAnotherUser(t *testing.T) {
	me, err := userSID()
	if err != nil {
		t.Fatal(err)
	}
	if err := userIs(uint32(os.Getpid()), me); err != nil {
		t.Fatalf("our own process: %v", err)
	}
	system, err := windows.CreateWellKnownSid(windows.WinLocalSystemSid)
	if err != nil {
		t.Fatal(err)
	}
	if err := userIs(uint32(os.Getpid()), system); !errors.Is(err, errForeignPeer) {
		t.Errorf("a process of another user: %v, want errForeignPeer", err)
	}
	if err := userIs(0x7ffffff0, me); !errors.Is(err, errForeignPeer) {
		t.Errorf("a process that cannot be opened: %v, want errForeignPeer", err)
	}
}

// TestPeerIsTheClientProcess: the host names the client process that
// opened its pipe, from the pipe file system (not from anything the
// client says).
func TestPeerIsTheClientProcess(t *testing.T) {
	dir := sockDir(t)
	h := &fakeHandler{}
	hs := startHost(t, dir, os.Getpid(), h)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = helperEnv("client", hs.l.Path(), `{"op":"fill","service":"a.test"}`)
	rep := runHelper(t, cmd)
	if rep.DialErr != "" || !strings.Contains(rep.Reply, `"status":"ok"`) {
		t.Fatalf("the helper client: %+v", rep)
	}
	if peers := h.fillPeers(); len(peers) != 1 || peers[0] != rep.PID {
		t.Fatalf("peers %v, want one: %d", peers, rep.PID)
	}
}

// TestServerChecksTheClient: a connection is checked before anything is
// read from it, and the pipe's ends agree on who is on the other side.
func TestServerChecksTheClient(t *testing.T) {
	path := SocketPath(sockDir(t))
	l, err := listenPipe(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			got <- c
		}
	}()
	c, err := dialEndpoint(testctx.New(t), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var s net.Conn
	select {
	case s = <-got:
	case <-testctx.New(t).Done():
		t.Fatal("no connection accepted")
	}
	defer s.Close()
	for name, conn := range map[string]net.Conn{"server end": s, "client end": c} {
		pid, err := checkPeer(conn)
		if err != nil || pid != os.Getpid() {
			t.Errorf("%s: peer %d, %v; want this process", name, pid, err)
		}
	}
	if err := checkHost(c); err != nil {
		t.Errorf("this very executable as the server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := dialEndpoint(ctx, path+"-none"); err == nil {
		t.Error("dialled a pipe nobody made")
	}
}
