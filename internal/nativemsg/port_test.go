package nativemsg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/secretjson"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// harness is a Port on in-memory pipes plus the other end (the "peer"),
// which the test drives by hand.
type harness struct {
	port    *Port
	notices chan json.RawMessage
	runErr  chan error
	cancel  context.CancelFunc
	logs    *syncbuf.Buffer

	peerR   io.Reader      // what the port wrote
	peerW   *Writer        // frames to the port
	peerOut *io.PipeWriter // closing it ends the port's input
}

func start(t *testing.T) *harness {
	t.Helper()
	hostR, peerOut := io.Pipe()
	peerIn, hostW := io.Pipe()
	h := &harness{
		notices: make(chan json.RawMessage, 100),
		runErr:  make(chan error, 1),
		logs:    &syncbuf.Buffer{},
		peerR:   peerIn,
		peerW:   NewWriter(peerOut),
		peerOut: peerOut,
	}
	logger := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.port = NewPort(hostR, hostW, func(m json.RawMessage) { h.notices <- m }, WithLogger(logger))
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.runErr <- h.port.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		peerOut.Close()
		hostR.Close()
		peerIn.Close()
		hostW.Close()
	})
	return h
}

// request is what the peer sees of a request.
type request struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
	N    int    `json:"n"`
	raw  []byte
}

func (h *harness) read(t *testing.T) request {
	t.Helper()
	body, err := ReadFrame(h.peerR)
	if err != nil {
		t.Fatalf("peer read: %v", err)
	}
	var r request
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("peer got a malformed frame: %v", err)
	}
	r.raw = body
	return r
}

func (h *harness) send(t *testing.T, body string) {
	t.Helper()
	if err := h.peerW.WriteFrame([]byte(body)); err != nil {
		t.Fatalf("peer write: %v", err)
	}
}

type callResult struct {
	reply json.RawMessage
	err   error
}

func (h *harness) goCall(ctx context.Context, req any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		reply, err := h.port.Call(ctx, req)
		ch <- callResult{reply, err}
	}()
	return ch
}

type ping struct {
	Type string `json:"type"`
	N    int    `json:"n"`
}

func TestCallCorrelatesOutOfOrderReplies(t *testing.T) {
	h := start(t)
	ctx := context.Background()
	a := h.goCall(ctx, ping{"ping", 1})
	ra := h.read(t)
	b := h.goCall(ctx, ping{"ping", 2})
	rb := h.read(t)
	if ra.ID <= 0 || rb.ID <= 0 || ra.ID == rb.ID {
		t.Fatalf("ids %d and %d: want distinct positive ids", ra.ID, rb.ID)
	}
	if !bytes.HasPrefix(ra.raw, []byte(fmt.Sprintf(`{"id":%d,"type":"ping"`, ra.ID))) {
		t.Fatalf("request is %s", ra.raw)
	}
	// Answer the second first.
	h.send(t, fmt.Sprintf(`{"id":%d,"type":"pong","echo":%d}`, rb.ID, rb.N))
	h.send(t, fmt.Sprintf(`{"id":%d,"type":"pong","echo":%d}`, ra.ID, ra.N))
	for want, ch := range map[int]<-chan callResult{1: a, 2: b} {
		res := <-ch
		if res.err != nil {
			t.Fatalf("call %d: %v", want, res.err)
		}
		var got struct{ Echo int }
		if err := json.Unmarshal(res.reply, &got); err != nil || got.Echo != want {
			t.Fatalf("call %d got reply %s", want, res.reply)
		}
	}
}

func TestNoticesAndStrayRepliesGoToHandler(t *testing.T) {
	h := start(t)
	h.send(t, `{"type":"hello","version":"0.1.0"}`)
	h.send(t, `{"id":999,"type":"late"}`)
	h.send(t, `{"type":"paused","paused":true}`)
	for _, want := range []string{"hello", "late", "paused"} {
		var got struct{ Type string }
		if err := json.Unmarshal(<-h.notices, &got); err != nil || got.Type != want {
			t.Fatalf("got notice %q, want %q", got.Type, want)
		}
	}
}

func TestErrorReplyIsTyped(t *testing.T) {
	h := start(t)
	res := h.goCall(context.Background(), ping{"inspect", 0})
	r := h.read(t)
	h.send(t, fmt.Sprintf(`{"id":%d,"type":"error","error":"no_tab","detail":"no active tab"}`, r.ID))
	got := <-res
	var re *ReplyError
	if !errors.As(got.err, &re) {
		t.Fatalf("got %v, want a *ReplyError", got.err)
	}
	if re.Code != "no_tab" || re.Detail != "no active tab" {
		t.Fatalf("got %+v", re)
	}
	if got.reply != nil {
		t.Fatal("an error reply also returned a body")
	}
}

func TestCallCancelledThenLateReplyIsANotice(t *testing.T) {
	h := start(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := h.goCall(ctx, ping{"ping", 0})
	r := h.read(t)
	cancel()
	if got := <-res; !errors.Is(got.err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", got.err)
	}
	h.send(t, fmt.Sprintf(`{"id":%d,"type":"pong"}`, r.ID))
	var got struct{ ID int64 }
	if err := json.Unmarshal(<-h.notices, &got); err != nil || got.ID != r.ID {
		t.Fatal("the late reply did not reach the notice handler")
	}
}

func TestCallDeadline(t *testing.T) {
	h := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 1) // already over, or nearly
	defer cancel()
	go func() { _, _ = ReadFrame(h.peerR) }() // the peer reads, never answers
	if _, err := h.port.Call(ctx, ping{"ping", 0}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want context.DeadlineExceeded", err)
	}
}

func TestEndOfInputClosesPort(t *testing.T) {
	h := start(t)
	res := h.goCall(context.Background(), ping{"ping", 0})
	h.read(t)
	h.peerOut.Close() // the browser went away
	if got := <-res; !errors.Is(got.err, ErrClosed) {
		t.Fatalf("pending call: got %v, want ErrClosed", got.err)
	}
	if err := <-h.runErr; err != nil {
		t.Fatalf("Run at end of input: %v, want nil", err)
	}
	select {
	case <-h.port.Done():
	default:
		t.Fatal("Done not closed")
	}
	if _, err := h.port.Call(context.Background(), ping{"ping", 0}); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after the end: got %v, want ErrClosed", err)
	}
}

func TestRunCancelClosesPort(t *testing.T) {
	h := start(t)
	res := h.goCall(context.Background(), ping{"ping", 0})
	h.read(t)
	h.cancel()
	if err := <-h.runErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v, want context.Canceled", err)
	}
	if got := <-res; !errors.Is(got.err, ErrClosed) {
		t.Fatalf("pending call: got %v, want ErrClosed", got.err)
	}
}

func TestRunTwice(t *testing.T) {
	p := NewPort(strings.NewReader(""), io.Discard, nil)
	if err := p.Run(context.Background()); err != nil {
		t.Fatalf("first Run: %v", err)
	}
	if err := p.Run(context.Background()); err == nil {
		t.Fatal("a second Run was accepted")
	}
}

func TestMalformedFramesAreSkippedWithoutDesync(t *testing.T) {
	h := start(t)
	res := h.goCall(context.Background(), ping{"ping", 0})
	r := h.read(t)
	garbage := []string{
		`{bad json MARKER1`,
		`["MARKER2"]`,
		`null`,
		``,
		`{"id":"MARKER3"}`,
		`"MARKER4"`,
		fmt.Sprintf(`{"id":%d.5,"x":"MARKER5"}`, r.ID),
		"\xff\xfeMARKER6",
	}
	for _, g := range garbage {
		h.send(t, g)
	}
	h.send(t, fmt.Sprintf(`{"id":%d,"type":"pong"}`, r.ID))
	if got := <-res; got.err != nil {
		t.Fatalf("the reply after malformed frames was lost: %v", got.err)
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "skipped a message"); n != len(garbage) {
		t.Fatalf("logged %d skipped messages, want %d", n, len(garbage))
	}
	if strings.Contains(logs, "MARKER") {
		t.Fatal("a log line holds message content")
	}
	select {
	case n := <-h.notices:
		t.Fatalf("a malformed frame reached the notice handler: %s", n)
	default:
	}
}

func TestOverLimitPrefixStopsRun(t *testing.T) {
	h := start(t)
	res := h.goCall(context.Background(), ping{"ping", 0})
	h.read(t)
	if _, err := h.peerOut.Write(header(MaxRead + 1)); err != nil {
		t.Fatal(err)
	}
	if err := <-h.runErr; !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Run: %v, want ErrFrameTooLarge", err)
	}
	if got := <-res; !errors.Is(got.err, ErrClosed) {
		t.Fatalf("pending call: got %v, want ErrClosed", got.err)
	}
}

func TestNotify(t *testing.T) {
	h := start(t)
	go func() { _ = h.port.Notify(ping{"outcome", 3}) }()
	r := h.read(t)
	if string(r.raw) != `{"type":"outcome","n":3}` {
		t.Fatalf("notice is %s", r.raw)
	}
}

func TestCallEmptyObjectGetsID(t *testing.T) {
	h := start(t)
	go func() { _, _ = h.port.Call(context.Background(), struct{}{}) }()
	r := h.read(t)
	if string(r.raw) != fmt.Sprintf(`{"id":%d}`, r.ID) {
		t.Fatalf("request is %s", r.raw)
	}
}

func TestCallRefusesBadRequests(t *testing.T) {
	w := &countingWriter{}
	p := NewPort(strings.NewReader(""), w, nil)
	for name, req := range map[string]any{
		"array":   []int{1},
		"string":  "x",
		"number":  5,
		"null":    nil,
		"has id":  map[string]any{"id": 3, "type": "ping"},
		"has ID":  struct{ ID int }{3},
		"no json": make(chan int),
	} {
		if _, err := p.Call(context.Background(), req); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if w.calls != 0 {
		t.Fatal("a refused request was written")
	}
}

// cancelOnWrite cancels a context when the port writes, so CallRaw returns
// right after sending without a peer.
type cancelOnWrite struct {
	countingWriter
	cancel context.CancelFunc
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	defer w.cancel()
	return w.countingWriter.Write(p)
}

func TestCallRawZeroesBodyAndFrame(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &cancelOnWrite{cancel: cancel}
	p := NewPort(strings.NewReader(""), w, nil)
	value := []byte("pa\"ss\\wörd")
	var body []byte
	_, err := p.CallRaw(ctx, func(id int64) ([]byte, error) {
		var err error
		body, err = secretjson.Message(struct {
			ID   int64  `json:"id"`
			Type string `json:"type"`
		}{id, "insert"}, value)
		return body, err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if w.calls != 1 {
		t.Fatalf("%d writes, want 1", w.calls)
	}
	if !allZero(body[:cap(body)]) {
		t.Fatal("the request body was not zeroed")
	}
	if !allZero(w.kept[0]) {
		t.Fatal("the frame buffer was not zeroed")
	}
	sent, err := ReadFrame(&w.copies)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Value string }
	if err := json.Unmarshal(sent, &got); err != nil {
		t.Fatal(err)
	}
	if got.Value != string(value) {
		t.Fatal("value differed in the frame sent")
	}
}

func TestCallRawRefusalsZeroBody(t *testing.T) {
	cases := map[string]struct {
		body []byte
		err  error
		want error
	}{
		"not json":  {[]byte(`{"value":"abc"`), nil, nil},
		"build err": {[]byte(`{"value":"abc"}`), errors.New("no"), nil},
		"too large": {append(append([]byte(`{"v":"`), bytes.Repeat([]byte{'a'}, MaxWrite)...), `"}`...), nil, ErrTooLarge},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w := &countingWriter{}
			p := NewPort(strings.NewReader(""), w, nil)
			_, err := p.CallRaw(context.Background(), func(int64) ([]byte, error) { return c.body, c.err })
			if err == nil {
				t.Fatal("accepted")
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if !allZero(c.body) {
				t.Fatal("body not zeroed")
			}
			if w.calls != 0 {
				t.Fatal("written")
			}
		})
	}
}

func TestCallRawOnClosedPort(t *testing.T) {
	p := NewPort(strings.NewReader(""), io.Discard, nil)
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	built := false
	_, err := p.CallRaw(context.Background(), func(int64) ([]byte, error) { built = true; return []byte(`{}`), nil })
	if !errors.Is(err, ErrClosed) || built {
		t.Fatalf("got %v (built=%v), want ErrClosed before building", err, built)
	}
}
