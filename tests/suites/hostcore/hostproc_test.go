package hostcore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
)

// hostStdin is the host binary's stdin. The fake extension writes each of
// its frames through it in one Write; a test may write raw bytes between
// them (a bad frame, half a frame) with rig.inject.
type hostStdin struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (h *hostStdin) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w.Write(p)
}

// Close closes the pipe: the browser hangs up.
func (h *hostStdin) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.w.Close()
}

// inject writes raw bytes to the host binary's stdin, between the fake
// extension's frames, as a broken or hostile browser side would.
func (r *rig) inject(raw []byte) {
	r.t.Helper()
	if r.hostIn == nil {
		r.t.Fatal("inject needs the host binary")
	}
	if _, err := r.hostIn.Write(raw); err != nil {
		r.t.Fatalf("write to the host's stdin: %v", err)
	}
}

// frame is body with its native-messaging length prefix.
func frame(body []byte) []byte {
	out := binary.NativeEndian.AppendUint32(nil, uint32(len(body)))
	return append(out, body...)
}

// figures are what the host binary runs and holds: goroutines (it counts
// them itself, in a status that asks for debug), open file descriptors
// and memory (from /proc).
type figures struct {
	goroutines, fds int
	rssKB, hwmKB    int // resident now, and at its peak
}

func (f figures) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, RSS %.1f MiB (peak %.1f MiB)",
		f.goroutines, f.fds, float64(f.rssKB)/1024, float64(f.hwmKB)/1024)
}

// hostSocket is the host binary's own hosts/<pid>.sock.
func (r *rig) hostSocket() string {
	return filepath.Join(r.dirs.socketDir(r.t), "hosts", strconv.Itoa(r.hostPID)+".sock")
}

// rawRequest sends one request line to the agent socket at path and
// returns every message the host sent until it closed the connection.
func rawRequest(ctx context.Context, path string, line []byte) ([]agentsock.Message, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if _, err := c.Write(line); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	return readAll(c)
}

// readAll reads newline-delimited messages until the host closes.
func readAll(c net.Conn) ([]agentsock.Message, error) {
	var msgs []agentsock.Message
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var m agentsock.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return msgs, fmt.Errorf("a message that is not JSON: %w", err)
		}
		msgs = append(msgs, m)
	}
	return msgs, sc.Err()
}

// debugStatus asks the host binary itself for its status with its
// goroutine count.
func (r *rig) debugStatus() agentsock.HostStatus {
	r.t.Helper()
	msgs, err := rawRequest(r.ctx, r.hostSocket(), []byte(`{"op":"status","debug":true}`+"\n"))
	if err != nil || len(msgs) != 1 || msgs[0].Status == nil || msgs[0].Status.Goroutines == 0 {
		r.t.Fatalf("debug status of the host: %+v, %v", msgs, err)
	}
	return *msgs[0].Status
}

// figures measures the host binary now.
func (r *rig) figures() figures {
	r.t.Helper()
	g := r.debugStatus().Goroutines
	// The status connection may still be open on the host's side for a
	// moment; expectSettled and baseline allow for that by sampling.
	fds, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(r.hostPID), "fd"))
	if err != nil {
		r.t.Fatalf("the host's fds: %v", err)
	}
	f := figures{goroutines: g, fds: len(fds)}
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(r.hostPID), "status"))
	if err != nil {
		r.t.Fatalf("the host's memory: %v", err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			f.rssKB = n
		case "VmHWM":
			f.hwmKB = n
		}
	}
	return f
}

// baseline is the host's figures at rest: the least of a few samples, so
// a connection the host is still closing does not count.
func (r *rig) baseline() figures {
	r.t.Helper()
	b := r.figures()
	for range 4 {
		f := r.figures()
		b.goroutines, b.fds = min(b.goroutines, f.goroutines), min(b.fds, f.fds)
		b.rssKB, b.hwmKB = f.rssKB, f.hwmKB
	}
	r.t.Logf("the host at rest: %s", b)
	return b
}

// settleBound bounds how long a host may take to let go of what a
// finished scenario used: a prompt that ended without an answer keeps its
// port for the rest of its budget, and an answered one drains for up to
// 3 s.
const settleBound = 100 * time.Second

// expectSettled waits until the host runs no more goroutines and holds no
// more file descriptors than it did at base (sampling each time after a
// status round trip), and fails if it never does. It returns the figures
// it settled at.
func (r *rig) expectSettled(base figures) figures {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.ctx, settleBound)
	defer cancel()
	for {
		f := r.figures()
		if f.goroutines <= base.goroutines && f.fds <= base.fds {
			r.t.Logf("the host settled: %s", f)
			return f
		}
		select {
		case <-ctx.Done():
			r.t.Errorf("the host did not let go: %s, against %s at rest", f, base)
			return f
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// awaitHostEnd waits for the host binary to exit and returns how.
func (r *rig) awaitHostEnd() error {
	r.t.Helper()
	select {
	case err := <-r.hostDone:
		return err
	case <-r.ctx.Done():
		r.t.Fatalf("the host did not exit")
		return nil
	}
}

// restartBinary starts a new host binary in the scenario's directories,
// as the browser does when the extension connects again, once the old
// host has ended (its end already taken with awaitHostEnd). The old
// host's stdout is checked first; the new one is checked at teardown.
func (r *rig) restartBinary(opts fakeext.Options) {
	r.t.Helper()
	r.checkHostOutput()
	r.hostOut.zero()
	r.ext.Close()
	opts.OnOpenPrompt = r.onOpenPrompt
	r.startBinary(opts)
	ready := make(chan error, 1)
	go func() {
		_, err := r.ext.Wait(r.ctx, fakeext.OfType("host"))
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			r.t.Fatalf("the new host never answered the extension's hello: %v", err)
		}
	case err := <-r.hostDone:
		r.hostDone <- err
		r.t.Fatalf("the new host ended before it answered the extension's hello: %v %s", err, r.safe(string(r.hostErr.Bytes())))
	}
	r.scanProcs()
}

// hostLogLines is the host log's lines.
func (r *rig) hostLogLines() []string {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.dirs.stateDir(r.t), "fillgate.log"))
	if err != nil {
		r.t.Fatalf("read the host log: %v", err)
	}
	return strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
}

// expectInsertedTimes checks that the extension inserted n values in the
// scenario, the last one value.
func (r *rig) expectInsertedTimes(value []byte, n int) {
	r.t.Helper()
	if got := r.ext.Inserts(); got != n {
		r.t.Errorf("the extension inserted %d values, want %d", got, n)
	}
	if !r.ext.ValueEquals(value) {
		r.t.Error("the field does not hold the value the human typed last: value differed")
	}
}
