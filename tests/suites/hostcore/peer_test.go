package hostcore

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/child"
)

const nobodyUID = 65534

// TestOtherUserGetsNoFill runs agents as nobody against a running host
// (the binary, as root). First the socket directory (0700) keeps nobody
// out; then, with the directory and sockets opened to everyone, the uid
// checks alone do: `fillgate fill` refuses a host of another user, and the
// host answers a raw client of another user with "forbidden" before
// reading its request.
//
// The uid check itself, on both sides, is unit-tested with a fake handler
// in internal/agentsock/agentsock_linux_test.go (TestForeignUIDRefused,
// TestClientRefusesForeignHost); this test shows the real host wired to
// it.
func TestOtherUserGetsNoFill(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run agents as nobody")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	asNobody := func(argv ...string) *exec.Cmd {
		return exec.Command(setpriv, append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"}, argv...)...)
	}
	// A root nobody can walk through, with its own home for nobody.
	root := shortTempDir(t)
	mustChmod(t, 0o755, root)
	nb := filepath.Join(root, "nobody")
	if err := os.Mkdir(nb, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(nb, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	rawDir := shortTempDir(t)
	mustChmod(t, 0o755, rawDir) // where nobody can run it as a raw client
	rawExe := child.CopySelf(t, rawDir, "rawclient")

	r := newRig(t, setup{root: root, page: loginPage("https://github.com")})
	r.behave(answers(r.secret))
	sockDir := r.dirs.socketDir(t)
	mustChmod(t, 0o755, r.dirs.run) // only fillgate's own directory is closed
	nobodyEnv := []string{
		"PATH=/usr/bin:/bin", "GORACE=exitcode=66 atexit_sleep_ms=50", "HOME=" + nb, "TMPDIR=" + nb,
		"XDG_CONFIG_HOME=" + filepath.Join(nb, "config"), "XDG_STATE_HOME=" + filepath.Join(nb, "state"),
		"XDG_RUNTIME_DIR=" + r.dirs.run, // the host's sockets
	}
	nobodyFill := func() run {
		return r.start("fillgate fill as nobody",
			asNobody(fillgateBin(), "fill", "--json", "--via", "extension", "--service", "github.com"), nobodyEnv).wait()
	}

	// The directory is 0700 and root's: nobody cannot reach a socket.
	if fi, err := os.Stat(sockDir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the socket directory: %v, mode %v; want 0700", err, fi.Mode().Perm())
	}
	r.expect(nobodyFill(), fill.StatusFailed, noHostDetail)

	// Open the directory and the sockets to everyone.
	hostSock := filepath.Join(sockDir, "hosts", strconv.Itoa(r.hostPID)+".sock")
	mustChmod(t, 0o755, sockDir, filepath.Join(sockDir, "hosts"))
	mustChmod(t, 0o666, agentsock.SocketPath(sockDir), hostSock)
	r.expect(nobodyFill(), fill.StatusFailed, noHostDetail)
	for _, sock := range []string{agentsock.SocketPath(sockDir), hostSock} {
		cmd := asNobody(rawExe)
		env := append(slices.Clone(nobodyEnv), rawClientEnv+"="+sock,
			rawRequestEnv+`={"op":"fill","service":"github.com","client":"fillgate fill"}`)
		out, _ := r.start("raw client as nobody", cmd, env).finish()
		var rep rawReport
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatalf("the raw client printed %q", out)
		}
		if rep.UID != nobodyUID {
			t.Fatalf("the raw client ran as uid %d, not nobody", rep.UID)
		}
		if rep.DialErr != "" {
			t.Fatalf("nobody could not even connect to %s (%s), so the test proves nothing", filepath.Base(sock), rep.DialErr)
		}
		var m agentsock.Message
		lines := strings.Split(strings.TrimSpace(rep.Reply), "\n")
		if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &m) != nil || m.Type != agentsock.TypeError || m.Error != agentsock.CodeForbidden {
			t.Errorf("nobody's fill on %s got %q, want one forbidden error", filepath.Base(sock), r.safe(rep.Reply))
		}
	}

	// Nothing of it reached the extension or the audit log.
	if got := r.extSaw(0); len(got) != 0 {
		t.Errorf("nobody's requests reached the extension: %v", got)
	}
	if es := r.auditEntries(); len(es) != 0 {
		t.Errorf("%d audit entries for nobody's requests", len(es))
	}
	r.expectNothingInserted()

	// The host was up all along: our own request is served.
	r.expect(r.fill("github.com"), fill.StatusOK, "inserted")
	r.expectInserted(r.secret)
}

func mustChmod(t *testing.T, mode os.FileMode, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}
