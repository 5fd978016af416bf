package inpage

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

// fakeHostEnv names the AF_UNIX socket a fake native host relays to. The
// browser runs this test binary as its native host; TestMain sees the
// variable and relays the browser's stdin/stdout to the socket, where the
// test plays the host.
const fakeHostEnv = "FILLGATE_TEST_FAKE_HOST"

func TestMain(m *testing.M) {
	if sock := os.Getenv(fakeHostEnv); sock != "" {
		os.Exit(relayHost(sock))
	}
	os.Exit(m.Run())
}

// relayHost copies the browser's frames to the test's socket and back until
// either side closes.
func relayHost(sock string) int {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fake host: %v\n", err)
		return 1
	}
	go func() {
		_, _ = io.Copy(os.Stdout, conn)
		os.Exit(0) // the test hung up: exit, as a host does
	}()
	_, _ = io.Copy(conn, os.Stdin)
	return 0
}

// installFakeHost writes the fake host's manifest into dir, allowing the
// extension by allowKey ("allowed_origins" for Chromium, with the
// extension's origin; "allowed_extensions" for Firefox, with its id).
func installFakeHost(t testing.TB, dir, allowKey, allowed string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m, err := json.Marshal(map[string]any{
		"name": manifest.HostName, "description": "fillgate test host", "path": exe,
		"type": "stdio", allowKey: []string{allowed},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, manifest.HostName+".json"), m, 0o600); err != nil {
		t.Fatal(err)
	}
}

// hostConn is one run of the fake host: the extension's end of a
// connectNative port.
type hostConn struct {
	t    testing.TB
	ctx  context.Context
	conn net.Conn
}

// acceptHosts hands out each connection the relay makes.
func acceptHosts(t testing.TB, ctx context.Context, ln net.Listener) <-chan *hostConn {
	ch := make(chan *hostConn, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			ch <- &hostConn{t: t, ctx: ctx, conn: c}
		}
	}()
	return ch
}

// greeted waits for the extension's next connection to its native host
// and checks the hello it opens with: a notice (no id) from version
// 0.1.0, not paused, in a browser whose user agent names product.
func greeted(t testing.TB, ctx context.Context, hosts <-chan *hostConn, product string) *hostConn {
	t.Helper()
	h := nextHost(t, ctx, hosts)
	hello := h.expect(map[string]any{"type": "hello", "version": "0.1.0", "paused": false})
	if ua, _ := hello["user_agent"].(string); !strings.Contains(ua, product) {
		t.Errorf("hello user_agent = %q", ua)
	}
	if _, ok := hello["id"]; ok {
		t.Error("hello carries an id; notices must not")
	}
	return h
}

func nextHost(t testing.TB, ctx context.Context, ch <-chan *hostConn) *hostConn {
	t.Helper()
	select {
	case h := <-ch:
		return h
	case <-ctx.Done():
		t.Fatalf("the extension did not connect to the native host: %v", ctx.Err())
		return nil
	}
}

// send writes one native-messaging frame: a 4-byte native-order length and
// the JSON body.
func (h *hostConn) send(msg map[string]any) {
	h.t.Helper()
	body, err := json.Marshal(msg)
	if err != nil {
		h.t.Fatal(err)
	}
	frame := binary.NativeEndian.AppendUint32(nil, uint32(len(body)))
	_, err = h.conn.Write(append(frame, body...))
	clear(body)
	if err != nil {
		h.t.Fatalf("write to the extension: %v", err)
	}
}

// read reads the next frame from the extension into a generic message.
func (h *hostConn) read() map[string]any {
	h.t.Helper()
	if d, ok := h.ctx.Deadline(); ok {
		_ = h.conn.SetReadDeadline(d)
	}
	var n [4]byte
	if _, err := io.ReadFull(h.conn, n[:]); err != nil {
		h.t.Fatalf("read from the extension: %v", err)
	}
	body := make([]byte, binary.NativeEndian.Uint32(n[:]))
	if _, err := io.ReadFull(h.conn, body); err != nil {
		h.t.Fatalf("read from the extension: %v", err)
	}
	var msg map[string]any
	if err := json.Unmarshal(body, &msg); err != nil {
		h.t.Fatalf("the extension sent a frame that is not JSON: %v", err)
	}
	return msg
}

// expect reads the next frame and checks that it has every field of want.
func (h *hostConn) expect(want map[string]any) map[string]any {
	h.t.Helper()
	got := h.read()
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			h.t.Fatalf("the extension sent %v; want %s = %v", got, k, v)
		}
	}
	return got
}

func (h *hostConn) close() { _ = h.conn.Close() }

// listenHost listens on a fresh AF_UNIX socket for the fake host.
func listenHost(t testing.TB) (string, net.Listener) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "host.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("listen for the fake host: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return sock, ln
}
