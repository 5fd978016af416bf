package agentsock

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/child"
	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// The test binary doubles as helper processes, picked by FGTEST_HELPER:
//
//	client: connect to FGTEST_SOCKET, send FGTEST_REQUEST, print a
//	        helperReport as JSON.
//	host:   Listen on FGTEST_DIR and Serve until stdin closes; print
//	        "ready" once listening.
//	squat:  (Windows) serve FGTEST_SOCKET as a program that is not
//	        fillgate would; print "ready", and at stdin's end a
//	        squatReport.
const (
	envHelper  = "FGTEST_HELPER"
	envSocket  = "FGTEST_SOCKET"
	envRequest = "FGTEST_REQUEST"
	envDir     = "FGTEST_DIR"
)

// helperReport is what a client helper prints.
type helperReport struct {
	PID   int    `json:"pid"`
	UID   int    `json:"uid"`
	Reply string `json:"reply"`
	// DialErr says the client could not connect at all.
	DialErr string `json:"dial_err,omitempty"`
}

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "":
		os.Exit(m.Run())
	case "client":
		os.Exit(helperClient())
	case "host":
		os.Exit(helperHost())
	case "squat":
		os.Exit(helperSquat())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(2)
	}
}

func helperClient() int {
	rep := helperReport{PID: os.Getpid(), UID: os.Geteuid()}
	defer func() { _ = json.NewEncoder(os.Stdout).Encode(rep) }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := dialEndpoint(ctx, os.Getenv(envSocket))
	if err != nil {
		rep.DialErr = err.Error()
		return 0
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	// A host that refuses us may hang up before the request is written;
	// what it said before that is still there to read.
	_, _ = io.WriteString(c, os.Getenv(envRequest)+"\n")
	b, _ := io.ReadAll(c)
	rep.Reply = string(b)
	return 0
}

func helperHost() int {
	l, err := Listen(os.Getenv(envDir))
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, l, (&fakeHandler{status: HostStatus{Version: "helper", PID: os.Getpid()}}).serve)
	}()
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	<-done
	if err := l.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 1
	}
	return 0
}

// fakeHandler answers every op and counts the requests; fillFn decides a
// fill (by default: ok). active is what its browser's active tab shows
// (nil: the browser does not answer a peek).
type fakeHandler struct {
	status   HostStatus
	fillFn   func(ctx context.Context, req fill.Request, peerPID int, progress func(fill.Progress)) fill.Result
	active   *ActiveTab
	fills    atomic.Int32
	statuses atomic.Int32
	peeks    atomic.Int32

	mu    sync.Mutex
	peers []int // the peer pid of each fill, in order
}

// fillPeers is the peer pid of each fill so far.
func (h *fakeHandler) fillPeers() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.peers)
}

// serve is the fake's Handler.
func (h *fakeHandler) serve(ctx context.Context, c *Conn) {
	switch c.Request().Op {
	case OpStatus:
		h.statuses.Add(1)
		st := h.status
		c.Answer(Message{Type: TypeStatus, Status: &st})
	case OpPeek:
		h.peeks.Add(1)
		st := h.status
		c.Answer(Message{Type: TypePeek, Status: &st, Active: h.active})
	case OpFill:
		h.fills.Add(1)
		h.mu.Lock()
		h.peers = append(h.peers, c.PeerPID())
		h.mu.Unlock()
		req := c.Fill()
		if h.fillFn != nil {
			c.Result(h.fillFn(ctx, req, c.PeerPID(), c.Progress))
			return
		}
		c.Result(fill.Result{Status: fill.StatusOK, Service: req.Service, Field: req.Field, Via: fill.ViaExtension})
	}
}

func (h *fakeHandler) calls() int { return int(h.fills.Load() + h.statuses.Load() + h.peeks.Load()) }

// fakeID is a hosts/<id>.sock name no real process has (above Linux's
// largest pid_max), for a second listener in this process.
func fakeID(n int) int { return 5_000_000 + n }

// sockDir is a fresh, not yet existing socket directory.
func sockDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "fg")
}

// host is a listener served by a handler, for tests.
type host struct {
	l      *Listener
	h      *fakeHandler
	stop   context.CancelFunc
	served chan error
}

// startHost listens on dir as id and serves h until the test ends. Its
// claim loop is off unless the test calls claim or sets every.
func startHost(t testing.TB, dir string, id int, h *fakeHandler) *host {
	t.Helper()
	return startHostWith(t, dir, listenConfig{id: id, claimEvery: time.Hour}, ReadTimeout, h)
}

func startHostWith(t testing.TB, dir string, cfg listenConfig, readTimeout time.Duration, h *fakeHandler) *host {
	t.Helper()
	l, err := listen(dir, cfg)
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hs := &host{l: l, h: h, stop: cancel, served: make(chan error, 1)}
	go func() { hs.served <- serve(ctx, l, h.serve, readTimeout) }()
	t.Cleanup(func() {
		cancel()
		<-hs.served
		_ = l.Close()
	})
	return hs
}

// exchange sends raw bytes on a fresh connection to path and returns the
// messages the host sent before hanging up.
func exchange(t testing.TB, path string, payload []byte) []Message {
	t.Helper()
	c := dialRaw(t, path)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	go func() { _, _ = c.Write(payload) }()
	return readMessages(t, c)
}

// dialRaw connects to the endpoint at path (a socket, or on Windows a
// pipe) with none of the client's checks.
func dialRaw(t testing.TB, path string) net.Conn {
	t.Helper()
	c, err := dialEndpoint(testctx.New(t), path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	return c
}

func readMessages(t testing.TB, c net.Conn) []Message {
	t.Helper()
	var out []Message
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		var m Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("a host message is not JSON: %v", err)
		}
		out = append(out, m)
	}
	// A host that closes with our request bytes unread may make the end
	// a reset rather than EOF; the messages before it are what count.
	if err := sc.Err(); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("reading host messages: %v", err)
	}
	return out
}

// statusPID asks path for its status and returns the pid the host gave.
func statusPID(t testing.TB, path string) int {
	t.Helper()
	msgs := exchange(t, path, []byte(`{"op":"status"}`+"\n"))
	if len(msgs) != 1 || msgs[0].Type != TypeStatus || msgs[0].Status == nil {
		t.Fatalf("status on %s: got %+v", path, msgs)
	}
	return msgs[0].Status.PID
}

// wantError checks that msgs is exactly one error message with code.
func wantError(t testing.TB, msgs []Message, code string) {
	t.Helper()
	if len(msgs) != 1 || msgs[0].Type != TypeError || msgs[0].Error != code {
		t.Fatalf("got %+v, want one %s error", msgs, code)
	}
}

func runHelper(t testing.TB, cmd *exec.Cmd) helperReport {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("helper %v: %v: %s", cmd.Args, err, stderr)
	}
	var rep helperReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("helper output is not a report: %v: %q", err, out)
	}
	return rep
}

// helperEnv is the environment for a client helper.
func helperEnv(mode, socket, request string) []string {
	return append(os.Environ(), envHelper+"="+mode, envSocket+"="+socket, envRequest+"="+request)
}

// startHelperHost runs the test binary exe as a host on dir, with
// optional argv prefix (e.g. setpriv), and waits for it to listen.
func startHelperHost(t testing.TB, dir string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd, _, _ := startHelper(t, append(os.Environ(), envHelper+"=host", envDir+"="+dir), argv...)
	return cmd
}

// startHelper runs argv with env and waits for its "ready" line; the
// helper ends (stdin closed, then waited for) when the test does, or
// earlier when the test closes its stdin. The returned reader is the
// rest of its output.
func startHelper(t testing.TB, env []string, argv ...string) (*exec.Cmd, *bufio.Reader, io.Closer) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	stdout, stdin := child.Start(t, cmd)
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil || line != "ready\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper %v did not start: %q, %v", argv, line, err)
	}
	return cmd, out, stdin
}
