package cdp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// squatAddr is the loopback address without a port of its own that the
// squatter below takes: the default HTTP port on an address of 127/8 no
// other test uses.
const squatAddr = "127.77.13.9:80"

// TestOtherUsersListenerWithoutAPortRefused has uid nobody (allowed to
// bind port 80 by an ambient capability, as a service could be) listen on
// 127.77.13.9:80, and checks that an endpoint naming no port, in each
// form, is refused before anything is sent to it: the owner check covers
// the scheme's default port too.
func TestOtherUsersListenerWithoutAPortRefused(t *testing.T) {
	if os.Getenv("FILLGATE_SQUAT_DEFAULT_PORT") == "1" {
		ln, err := net.Listen("tcp", squatAddr)
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(ln.Addr().String() + "\n")
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		t.Fatal("this test runs a listener as uid nobody and needs root, as tests/run has")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cdp.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		"--inh-caps=+net_bind_service", "--ambient-caps=+net_bind_service",
		bin, "-test.run=^TestOtherUsersListenerWithoutAPortRefused$")
	cmd.Env = append(os.Environ(), "FILLGATE_SQUAT_DEFAULT_PORT=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != squatAddr {
		t.Fatalf("the squatter did not listen on %s: %q %v", squatAddr, line, err)
	}
	for _, raw := range []string{"http://127.77.13.9", "ws://127.77.13.9", "ws://127.77.13.9/devtools/browser/x", "http://127.77.13.9:80"} {
		_, err := webSocketURL(ctx, Endpoint{URL: raw, Source: SourceDefault}, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Reason != ReasonOtherUser || ce.Status() != "refused" {
			t.Errorf("%s: %v, want refused as another user's", raw, err)
		}
	}
}
