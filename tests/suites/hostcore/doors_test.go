package hostcore

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
)

// badClient is a client that talks nonsense to the agent socket.
type badClient struct {
	name string
	// talk writes what the client sends (and may keep writing until the
	// host answers: it gets answered, which is closed when the host's
	// answer came).
	talk func(c *net.UnixConn, answered <-chan struct{})
	// detail is what the host's bad_request must say; "" means the host
	// closes without a word.
	detail string
}

// trickle writes b one byte at a time, a quarter of a second apart, until
// the host has answered (or cut the connection): a client too slow to
// finish its request.
func trickle(b []byte) func(*net.UnixConn, <-chan struct{}) {
	return func(c *net.UnixConn, answered <-chan struct{}) {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i = (i + 1) % len(b) {
			if _, err := c.Write(b[i : i+1]); err != nil {
				return
			}
			select {
			case <-answered:
				return
			case <-tick.C:
			}
		}
	}
}

// sends writes b and then waits for the answer.
func sends(b string) func(*net.UnixConn, <-chan struct{}) {
	return func(c *net.UnixConn, _ <-chan struct{}) { _, _ = c.Write([]byte(b)) }
}

// TestAgentSocketDoorAtTheHost: every kind of bad client of the agent
// socket at once, against the real host binary, while a status and a
// whole fill are served: each bad client gets one bounded answer (or, as
// a probe, none) and is closed; afterwards the host runs no more
// goroutines and holds no more file descriptors than before.
func TestAgentSocketDoorAtTheHost(t *testing.T) {
	t.Parallel()
	r := newRig(t, setup{page: loginPage("https://github.com"), budget: 3 * time.Minute})
	r.behave(answers(r.secret))
	r.expect(r.fill("github.com"), fill.StatusOK, "inserted") // everything the host starts lazily runs now
	base := r.baseline()

	huge := strings.Repeat("a", agentsock.MaxRequest+1)
	clients := []badClient{
		{"an oversized line without its newline", sends(huge), "request over 65536 bytes"},
		{"an oversized request", sends(`{"op":"status","client":"` + huge + `"}` + "\n"), "request over 65536 bytes"},
		{"a slow writer", trickle([]byte(`{"op":"status"}`)), "no complete request within 5s of connecting"},
		{"a client that connects and never writes", func(*net.UnixConn, <-chan struct{}) {}, "no complete request within 5s"},
		{"garbage", sends("\x00\xff\xfe{]garbage\x1b[2J\n"), "the request is not one JSON object"},
		{"a JSON array", sends("[1,2,3]\n"), "the request is not one JSON object"},
		{"two requests on a line", sends(`{"op":"status"}{"op":"fill"}` + "\n"), "the request is not one JSON object"},
		{"an unknown op", sends(`{"op":"format_disk"}` + "\n"), "unknown op: use fill, status or peek"},
		{"no op", sends(`{}` + "\n"), "unknown op"},
		{"a fill without a service", sends(`{"op":"fill"}` + "\n"), "service is missing"},
		{"an unknown field kind", sends(`{"op":"fill","service":"github.com","field":"pin"}` + "\n"), "unknown field"},
		{"a negative timeout", sends(`{"op":"fill","service":"github.com","timeout_ms":-1}` + "\n"), "timeout_ms must not be negative"},
		{"a request cut off by a half-close", func(c *net.UnixConn, _ <-chan struct{}) {
			_, _ = c.Write([]byte(`{"op":"status"}`))
			_ = c.CloseWrite()
		}, "the request must end with a newline"},
		{"a probe that hangs up at once", func(c *net.UnixConn, _ <-chan struct{}) { _ = c.CloseWrite() }, ""},
	}
	// And a crowd that connects and never writes.
	const crowd = 300
	for i := range crowd {
		clients = append(clients, badClient{fmt.Sprintf("silent client %d", i), func(*net.UnixConn, <-chan struct{}) {}, "no complete request"})
	}

	sock := agentsock.SocketPath(r.dirs.socketDir(t))
	var wg sync.WaitGroup
	conns := make([]*net.UnixConn, len(clients))
	for i := range clients {
		c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: sock, Net: "unix"})
		if err != nil {
			t.Fatalf("%s: connect: %v", clients[i].name, err)
		}
		conns[i] = c
	}
	start := time.Now()
	for i, bc := range clients {
		c := conns[i]
		wg.Go(func() {
			defer c.Close()
			_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // bounds the test; the host's own limit is 5 s
			answered := make(chan struct{})
			go bc.talk(c, answered)
			msgs, err := readAll(c)
			close(answered)
			switch {
			case err != nil && !isReset(err):
				t.Errorf("%s: reading the answer: %v", bc.name, err)
			case bc.detail == "" && len(msgs) != 0:
				t.Errorf("%s: the host answered %+v, want nothing", bc.name, msgs)
			case bc.detail != "" && (len(msgs) != 1 || msgs[0].Type != agentsock.TypeError ||
				msgs[0].Error != agentsock.CodeBadRequest || !strings.Contains(msgs[0].Detail, bc.detail)):
				t.Errorf("%s: the host answered %+v, want one bad_request saying %q", bc.name, msgs, bc.detail)
			}
		})
	}

	// Meanwhile the host serves a status and a whole fill.
	st := r.debugStatus()
	if !st.Extension.Connected {
		t.Errorf("status during the bad clients: %+v", st)
	}
	during := time.Since(start)
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInsertedTimes(r.secret, 2)
	t.Logf("with %d bad clients connected: a status after %v, a whole fill after %v", len(clients), during.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	wg.Wait()
	t.Logf("every bad client was answered and closed %v after the start", time.Since(start).Round(time.Millisecond))
	r.expectSettled(base)
}

// isReset reports whether err is the host closing a connection it had
// not read to the end (an oversized request): the answer came first.
func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset by peer")
}

// TestNativePortDoorAtTheHost feeds the real host binary, on the
// extension's side of its stdin, every kind of bad frame that leaves the
// stream whole: each is skipped (with a bounded log line), and the host
// still answers a status with the extension connected and runs a whole
// fill; memory and what the host runs come back.
func TestNativePortDoorAtTheHost(t *testing.T) {
	t.Parallel()
	r := newRig(t, setup{page: loginPage("https://github.com"), budget: 3 * time.Minute})
	r.behave(answers(r.secret))
	r.expect(r.fill("github.com"), fill.StatusOK, "inserted")
	base := r.baseline()

	deep := bytes.Repeat([]byte("["), 200000)
	bad := []struct {
		name string
		body []byte
	}{
		{"an empty frame", nil},
		{"not JSON", []byte("hello, host")},
		{"a JSON array", []byte(`[{"type":"hello"}]`)},
		{"a JSON string", []byte(`"hello"`)},
		{"JSON nested 200000 deep", deep},
		{"invalid UTF-8", []byte("{\"type\":\"pau\xffsed\",\"paused\":true}")},
		{"invalid UTF-8 in a known notice", []byte("{\"type\":\"prompt_closed\",\"window\":1,\"x\":\"\xc3\x28\"}")},
		{"an unknown notice", []byte(`{"type":"format_disk","disk":"/"}`)},
		{"an unknown notice with a long type", []byte(`{"type":"` + strings.Repeat("t", 100000) + `"}`)},
		{"a reply nobody waits for", []byte(`{"id":987654321,"type":"inserted","matched":true}`)},
		{"a reply with a string id", []byte(`{"id":"1","type":"pong"}`)},
		{"a notice with a huge member", []byte(`{"type":"x","pad":"` + strings.Repeat("p", 2<<20) + `"}`)},
		{"8 MiB of garbage", bytes.Repeat([]byte{0xfe}, 8<<20)},
	}
	for _, b := range bad {
		r.inject(frame(b.body))
	}
	// The frames arrive in order: once the host answers a fill after
	// them, it read them all.
	st := r.debugStatus()
	if !st.Extension.Connected || st.Extension.Paused {
		t.Errorf("after the bad frames the status is %+v; want connected and not paused", st.Extension)
	}
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInsertedTimes(r.secret, 2)

	skipped := 0
	for _, line := range r.hostLogLines() {
		if len(line) > 1024 {
			t.Errorf("a log line of %d bytes", len(line))
		}
		if strings.Contains(line, "skipped a message") || strings.Contains(line, "ignored") {
			skipped++
		}
	}
	if skipped < len(bad)-2 { // the two prompt_closed and paused-like ones are handled, not skipped
		t.Errorf("the host log says %d messages were skipped or ignored, want at least %d", skipped, len(bad)-2)
	}
	f := r.expectSettled(base)
	t.Logf("an 8 MiB frame and a 2 MiB one raised the host's peak RSS from %.1f to %.1f MiB", float64(base.hwmKB)/1024, float64(f.hwmKB)/1024)
	if f.hwmKB-base.hwmKB > 256<<10 {
		t.Errorf("the bad frames cost the host %d MiB at peak", (f.hwmKB-base.hwmKB)>>10)
	}
}

// TestBadRepliesAtTheHost: replies of the extension that are not what
// the host asked for (a reply of an unknown type, an origin that is not
// UTF-8) end that one fill with a clear status; the host then serves the
// next fill.
func TestBadRepliesAtTheHost(t *testing.T) {
	t.Parallel()
	r := newRig(t, setup{page: loginPage("https://github.com"), budget: 2 * time.Minute})
	r.behave(answers(r.secret))
	r.ext.Ignore("inspect")
	cases := []struct {
		name   string
		reply  string // the reply's members after its id
		status fill.Status
		detail string
	}{
		{"a reply of an unknown type", `"type":"inspected!"`, fill.StatusFailed, `unexpected reply "inspected!" to inspect`},
		{"a reply of another request's type", `"type":"pong"`, fill.StatusFailed, `unexpected reply "pong" to inspect`},
		{"an origin that is not UTF-8", "\"type\":\"inspected\",\"tab\":7,\"frame\":0,\"token\":\"t\",\"origins\":[\"https://github.com\xff\"],\"field\":{\"kind\":\"password\"}",
			fill.StatusRefused, "is refused: host"},
		{"a reply with the wrong shape", `"type":"inspected","origins":"https://github.com","field":7`, fill.StatusFailed, "malformed inspected reply to inspect"},
	}
	for i, tc := range cases {
		p := r.startFill("github.com")
		n := 0
		m, err := r.ext.Wait(r.ctx, func(m fakeext.Message) bool {
			if m.Type == "inspect" {
				n++
			}
			return n == i+1
		})
		if err != nil {
			t.Fatalf("%s: no inspect: %v", tc.name, err)
		}
		r.inject(frame([]byte(fmt.Sprintf(`{"id":%d,%s}`, *m.ID, tc.reply))))
		got := p.wait()
		r.expect(got, tc.status, tc.detail)
		r.expectNothingInserted()
	}
	r.ext.Unignore("inspect")
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	r.expectInserted(r.secret)
}
