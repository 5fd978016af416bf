package agentsock

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

const nobodyUID = 65534

// needSetpriv skips unless this test can run processes as nobody.
func needSetpriv(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	p, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	return p
}

// asNobody is the argv prefix that runs a command as nobody.
func asNobody(setpriv string) []string {
	return []string{setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"}
}

// openDir makes a fresh directory that nobody can enter, holding a copy of
// the test binary that nobody can run.
func openDir(t *testing.T) (dir, exe string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentsock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, child.CopySelf(t, dir, "client")
}

func TestForeignUIDRefused(t *testing.T) {
	setpriv := needSetpriv(t)
	base, exe := openDir(t)
	dir := filepath.Join(base, "run")
	h := &fakeHandler{status: HostStatus{PID: 7}}
	hs := startHost(t, dir, os.Getpid(), h)
	// Deliberately open the directory and both sockets to everyone, so
	// only the peer check stands between nobody and the handler.
	for _, p := range []string{dir, filepath.Join(dir, "hosts")} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{SocketPath(dir), hs.l.Path()} {
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}

	for _, req := range []string{`{"op":"status"}`, `{"op":"fill","service":"github.com"}`} {
		for _, sock := range []string{SocketPath(dir), hs.l.Path()} {
			cmd := exec.Command(asNobody(setpriv)[0], append(asNobody(setpriv)[1:], exe)...)
			cmd.Env = helperEnv("client", sock, req)
			rep := runHelper(t, cmd)
			if rep.UID != nobodyUID {
				t.Fatalf("the helper ran as uid %d, not nobody", rep.UID)
			}
			if rep.DialErr != "" {
				t.Fatalf("nobody could not even connect (%s), so the test proves nothing", rep.DialErr)
			}
			var m Message
			lines := strings.Split(strings.TrimSpace(rep.Reply), "\n")
			if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &m) != nil || m.Type != TypeError || m.Error != CodeForbidden {
				t.Errorf("nobody's %s on %s got %q, want one forbidden error", req, filepath.Base(sock), rep.Reply)
			}
		}
	}
	if h.calls() != 0 {
		t.Fatalf("the handler was called %d times for another user", h.calls())
	}

	// The same client as this user is served: the refusal above was the
	// uid check, not an unreachable socket.
	cmd := exec.Command(exe)
	cmd.Env = helperEnv("client", SocketPath(dir), `{"op":"status"}`)
	rep := runHelper(t, cmd)
	if !strings.Contains(rep.Reply, `"type":"status"`) || h.statuses.Load() != 1 {
		t.Errorf("our own client got %q", rep.Reply)
	}
}

func TestClientRefusesForeignHost(t *testing.T) {
	setpriv := needSetpriv(t)
	base, exe := openDir(t)
	dir := filepath.Join(base, "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	startHelperHost(t, dir, append(asNobody(setpriv), exe)...)

	// nobody's own client is served by nobody's host ...
	cmd := exec.Command(asNobody(setpriv)[0], append(asNobody(setpriv)[1:], exe)...)
	cmd.Env = helperEnv("client", SocketPath(dir), `{"op":"status"}`)
	if rep := runHelper(t, cmd); !strings.Contains(rep.Reply, `"type":"status"`) {
		t.Fatalf("nobody's host did not answer nobody: %+v", rep)
	}
	// ... but we (root, who can open any file) do not talk to it.
	ctx := testctx.New(t)
	if _, err := Status(ctx, dir); !errors.Is(err, ErrNoHost) {
		t.Errorf("Status = %v, want ErrNoHost", err)
	}
	_, err := Fill(ctx, dir, fill.Request{Service: "a.test"}, "test", nil)
	if !errors.Is(err, ErrNoHost) || !errors.Is(err, errForeignPeer) {
		t.Errorf("Fill = %v, want ErrNoHost because the host is another user", err)
	}
}
