package hostcore

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// binDir holds the fillgate binary built once for the whole package. It
// is mode 0755 so that a process running as nobody can execute what is in
// it. Set by TestMain before any test runs, never changed afterwards.
var binDir string

// fillgateBin is the built fillgate binary.
func fillgateBin() string { return filepath.Join(binDir, "fillgate") }

// Environment variables that turn this test binary into a raw agent-socket
// client (see rawClient): the socket to dial and the request line to send.
const (
	rawClientEnv  = "HOSTCORE_RAW_CLIENT"
	rawRequestEnv = "HOSTCORE_RAW_REQUEST"
)

// Environment variables that turn this test binary into a browser
// stand-in (see browserStandIn): the host to start, and its argument.
const (
	standInHostEnv   = "HOSTCORE_STAND_IN_HOST"
	standInCallerEnv = "HOSTCORE_STAND_IN_CALLER"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv(rawClientEnv); sock != "" {
		os.Exit(rawClient(sock, os.Getenv(rawRequestEnv)))
	}
	if host := os.Getenv(standInHostEnv); host != "" {
		os.Exit(browserStandIn(host, os.Getenv(standInCallerEnv)))
	}
	dir, err := buildFillgate()
	if err != nil {
		fmt.Fprintf(os.Stderr, "hostcore: %v\n", err)
		os.Exit(1)
	}
	if err := placeStandIn(dir); err != nil {
		_ = os.RemoveAll(dir)
		fmt.Fprintf(os.Stderr, "hostcore: %v\n", err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// buildFillgate builds the fillgate binary (with the race detector when
// the tests have it) into a new directory, named fillgate so that the
// host's agent walk skips it as it skips the real one.
func buildFillgate() (string, error) {
	dir, err := os.MkdirTemp("", "hostcore-bin-")
	if err != nil {
		return "", fmt.Errorf("temp dir for the binary: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", fmt.Errorf("temp dir for the binary: %w", err)
	}
	args := []string{"build", "-o", filepath.Join(dir, "fillgate")}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/fillgate/fillgate")
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("go build fillgate: %w\n%s", err, out)
	}
	return dir, nil
}

// standInBin is the browser stand-in's executable: this test binary under
// the name chromium (browserStandIn), in binDir. The host judges its
// parent by the executable's name, never by the argv[0] a process chose.
func standInBin() string { return filepath.Join(binDir, "chromium") }

// placeStandIn puts this test binary into dir as chromium: a hard link,
// or a copy where dir is on another filesystem.
func placeStandIn(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("the stand-in browser: %w", err)
	}
	dst := filepath.Join(dir, "chromium")
	if os.Link(self, dst) == nil {
		return nil
	}
	src, err := os.Open(self)
	if err != nil {
		return fmt.Errorf("the stand-in browser: %w", err)
	}
	defer src.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return fmt.Errorf("the stand-in browser: %w", err)
	}
	if _, err := io.Copy(out, src); err != nil {
		_ = out.Close()
		return fmt.Errorf("the stand-in browser: %w", err)
	}
	return out.Close()
}

// rawReport is what rawClient prints: who it ran as and what the socket
// answered.
type rawReport struct {
	UID     int    `json:"uid"`
	DialErr string `json:"dial_err,omitempty"`
	Reply   string `json:"reply"`
}

// rawClient connects to sock, sends one request line and prints a
// rawReport with everything the host answered until it hung up. It is how
// a test plays an agent socket client of another user without fillgate's
// own client-side checks in the way.
func rawClient(sock, request string) int {
	rep := rawReport{UID: os.Getuid()}
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(rep) }()
	c, err := net.DialTimeout("unix", sock, 10*time.Second)
	if err != nil {
		rep.DialErr = err.Error()
		return 0
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	// The host may close before reading the request; what it wrote first
	// is still there to read.
	_, _ = c.Write([]byte(request + "\n"))
	b, _ := io.ReadAll(bufio.NewReader(c))
	rep.Reply = string(b)
	return 0
}

// browserStandIn is the person's own browser as its native host sees it:
// the host's parent, run with a Chromium's command line (argv[0]
// "chromium", a --user-data-dir with no DevToolsActivePort in it, no
// debugging switch; see rig.standIn), which starts the host with caller
// as its argument on its own stdin, stdout and stderr, as Chromium does. It
// writes the host's pid on file descriptor 3 and closes it, waits for the
// host and exits as it did.
func browserStandIn(host, caller string) int {
	pids := os.NewFile(3, "pids")
	syscall.CloseOnExec(3) // the host gets only stdin, stdout and stderr
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, standInHostEnv+"=") && !strings.HasPrefix(kv, standInCallerEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(host, caller)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "browser stand-in: start the host: %v\n", err)
		return 127
	}
	fmt.Fprintf(pids, "%d\n", cmd.Process.Pid)
	_ = pids.Close()
	_ = cmd.Wait()
	if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return 128 + int(st.Signal())
	}
	return cmd.ProcessState.ExitCode()
}
