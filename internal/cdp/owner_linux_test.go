package cdp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:2406":                         "127.0.0.1:9222",
		"00000000:0050":                         "0.0.0.0:80",
		"00000000000000000000000001000000:2406": "[::1]:9222",
		"0000000000000000FFFF00000100007F:2406": "[::ffff:127.0.0.1]:9222",
	} {
		a, p, ok := parseProcAddr(in)
		if !ok || netip.AddrPortFrom(a, p).String() != want {
			t.Errorf("%s: %v %d %v, want %s", in, a, p, ok, want)
		}
	}
}

func TestOwnListenerIsMine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := checkListenerOwner(ln.Addr().String()); err != nil {
		t.Fatalf("own listener refused: %v", err)
	}
	_, mine, known := listenerOwner(netip.MustParseAddr("127.0.0.1"), uint16(ln.Addr().(*net.TCPAddr).Port))
	if !known || !mine {
		t.Fatalf("known %v mine %v", known, mine)
	}
}

// TestOtherUsersListenerRefused has uid nobody listen on a loopback port,
// as a squatter on 127.0.0.1:9222 would, and checks that the endpoint is
// refused before anything is sent to it.
func TestOtherUsersListenerRefused(t *testing.T) {
	if os.Getenv("FILLGATE_SQUAT") == "1" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(1)
		}
		os.Stdout.WriteString(ln.Addr().String() + "\n")
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a listener as another user (CI runs as root)")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cdp.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
		bin, "-test.run=^TestOtherUsersListenerRefused$")
	cmd.Env = append(os.Environ(), "FILLGATE_SQUAT=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("squatter did not start: %v", err)
	}
	addr := strings.TrimSpace(line)

	err = checkListenerOwner(addr)
	if err == nil || !strings.Contains(err.Error(), "not to you") {
		t.Fatalf("a listener of uid nobody was accepted: %v", err)
	}
	_, werr := webSocketURL(ctx, Endpoint{URL: "http://" + addr, Source: SourceDefault}, nil)
	var ce *Error
	if werr == nil || !errors.As(werr, &ce) || ce.Reason != ReasonOtherUser || ce.Status() != "refused" {
		t.Fatalf("webSocketURL: %v", werr)
	}
}
