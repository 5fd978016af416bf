// Package child starts the processes a test runs beside itself: copies of
// the test binary acting as helpers, hosts and clients. A process Start
// starts ends with the test that started it.
package child

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// CopySelf copies the running test binary to dir/name, executable by
// anyone (another user, a process with another name), and returns its path.
func CopySelf(t testing.TB, dir, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatalf("the test binary: %v", err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatalf("copying the test binary: %v", err)
	}
	if err := os.Chmod(p, 0o755); err != nil { // whatever the umask took away
		t.Fatalf("copying the test binary: %v", err)
	}
	return p
}

// Pipes connects cmd's standard input and output to the test, before it
// starts.
func Pipes(t testing.TB, cmd *exec.Cmd) (stdin io.WriteCloser, stdout io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("%s's stdin: %v", cmd.Path, err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("%s's stdout: %v", cmd.Path, err)
	}
	return stdin, stdout
}

// Start starts cmd with its standard input held open until the test ends,
// when it is closed and cmd waited for, and returns cmd's standard output.
// A helper that reads its stdin to the end lives exactly as long as the
// test; one still running 10 s after its stdin closed is killed. The
// returned closer closes stdin earlier.
func Start(t testing.TB, cmd *exec.Cmd) (io.Reader, io.Closer) {
	t.Helper()
	stdin, stdout := Pipes(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Errorf("%s still ran 10 s after its stdin closed: killed", cmd.Path)
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return stdout, stdin
}
