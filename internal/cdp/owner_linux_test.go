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
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/kit/child"
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

// envSquat, when set, makes the test binary a squatter: it listens on
// the address it names, prints the address it got and waits until its
// stdin closes.
const envSquat = "FILLGATE_SQUAT"

func TestMain(m *testing.M) {
	if addr := os.Getenv(envSquat); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString(ln.Addr().String() + "\n")
		_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// squatAsNobody runs a copy of the test binary as uid nobody (with
// setpriv's further options opts), listening on addr until the test ends,
// and returns the address it listens on.
func squatAsNobody(t *testing.T, ctx context.Context, addr string, opts ...string) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatal("this test runs a listener as uid nobody and needs root, as tests/run has")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := child.CopySelf(t, dir, "cdp.test")
	args := append([]string{"--reuid=nobody", "--regid=nogroup", "--clear-groups"}, opts...)
	cmd := exec.CommandContext(ctx, "setpriv", append(args, bin)...)
	cmd.Env = append(os.Environ(), envSquat+"="+addr)
	stdout, _ := child.Start(t, cmd)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error ") {
		t.Fatalf("the squatter did not listen on %s: %q %v", addr, line, err)
	}
	return strings.TrimSpace(line)
}

// TestOtherUsersListenerRefused has uid nobody listen on a loopback port,
// as a squatter on 127.0.0.1:9222 would, and checks that the endpoint is
// refused before anything is sent to it.
func TestOtherUsersListenerRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := squatAsNobody(t, ctx, "127.0.0.1:0")

	err := checkListenerOwner(addr)
	if err == nil || !strings.Contains(err.Error(), "not to you") {
		t.Fatalf("a listener of uid nobody was accepted: %v", err)
	}
	_, werr := webSocketURL(ctx, Endpoint{URL: "http://" + addr, Source: SourceDefault}, nil)
	var ce *Error
	if werr == nil || !errors.As(werr, &ce) || ce.Reason != ReasonOtherUser || ce.Status() != "refused" {
		t.Fatalf("webSocketURL: %v", werr)
	}
}
