//go:build linux

// Package squatter runs another local user's port squatter for tests: the
// program in cmd/squatter, built for the test and run as uid nobody
// (setpriv --reuid=nobody --regid=nogroup --clear-groups), on a port a
// prompt used. It shows what such a user can bind and receive once a
// prompt's request ended early. The tests run as root, as tests/run does.
package squatter

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// ErrInUse is Start's error when the port is still bound: the prompt (or
// something else) holds it, and the squatter cannot take it.
var ErrInUse = errors.New("squatter: the port is in use")

// Squatter is one running squatter.
type Squatter struct {
	cmd     *exec.Cmd
	addr    string
	mu      sync.Mutex
	got     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
	done    chan struct{}
}

// Build builds the squatter into a fresh directory anyone may enter and
// returns its path.
func Build(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "squatter")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/fillgate/fillgate/tests/fakes/squatter/cmd/squatter").CombinedOutput()
	if err != nil {
		t.Fatalf("build the squatter: %v\n%s", err, out)
	}
	return bin
}

// Start runs the squatter bin as uid nobody on addr ("127.0.0.1:PORT"). It
// returns ErrInUse when addr cannot be bound. The squatter (its whole
// process group) is killed when the test ends, or with this process.
func Start(t testing.TB, ctx context.Context, bin, addr string) (*Squatter, error) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatal("squatter: running a process as uid nobody needs root, as tests/run has")
	}
	cmd := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--pdeathsig=KILL", bin, addr)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the squatter: %v", err)
	}
	s := &Squatter{cmd: cmd, addr: addr, changed: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(s.stop)
	r := bufio.NewReader(stdout)
	first := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		first <- line
		_, _ = io.Copy(writerFunc(s.write), r)
		_ = cmd.Wait()
		close(s.done)
	}()
	select {
	case line := <-first:
		switch {
		case strings.HasPrefix(line, "listening "):
			return s, nil
		case strings.HasPrefix(line, "busy "):
			return nil, fmt.Errorf("%w: %s; the sockets on its port: %s", ErrInUse, strings.TrimSpace(strings.TrimPrefix(line, "busy ")), holders(addr))
		}
		return nil, fmt.Errorf("squatter: it said %q", line)
	case <-ctx.Done():
		return nil, fmt.Errorf("squatter: did not start: %w", ctx.Err())
	}
}

// PID is the squatter's process id.
func (s *Squatter) PID() int { return s.cmd.Process.Pid }

// Received is everything the squatter received so far, every request
// whole.
func (s *Squatter) Received() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.got.Bytes())
}

// Requests is how many requests reached it, its own Sync requests left
// out.
func (s *Squatter) Requests() int {
	got := s.Received()
	return bytes.Count(got, []byte("--- request\n")) - bytes.Count(got, []byte("/fillgate-squatter-sync-"))
}

// Sync returns once everything the squatter received before the call is
// in Received: it sends a request of its own and waits to see it, as the
// squatter records requests in the order it finishes reading them.
func (s *Squatter) Sync(ctx context.Context) error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	marker := "/fillgate-squatter-sync-" + hex.EncodeToString(b[:])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+marker, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}).Do(req)
	if err != nil {
		return fmt.Errorf("squatter: sync: %w", err)
	}
	resp.Body.Close()
	for {
		s.mu.Lock()
		seen, changed := bytes.Contains(s.got.Bytes(), []byte(marker)), s.changed
		s.mu.Unlock()
		if seen {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("squatter: sync: %w", ctx.Err())
		}
	}
}

func (s *Squatter) write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.changed)
	s.changed = make(chan struct{})
	return s.got.Write(p)
}

func (s *Squatter) stop() {
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// holders lists the TCP sockets whose local port is addr's, with their
// state and process (ss -tanp), to say who holds a port the squatter
// could not bind.
func holders(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err.Error()
	}
	out, err := exec.Command("ss", "-tanpH", "sport = :"+port).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("ss: %v", err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "none"
	}
	return strings.Join(strings.Fields(string(out)), " ")
}
