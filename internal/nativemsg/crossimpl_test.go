package nativemsg

// These tests check our framing against an independent implementation,
// github.com/rickypc/native-messaging-host. It is used here only: at run time
// it would end the calling goroutine with runtime.Goexit at end of input,
// its writes are two unsynchronised Write calls, and a malformed body can
// leave the stream desynchronised. Its reader therefore always runs on a
// goroutine of its own that the test lets end.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	nmhost "github.com/rickypc/native-messaging-host"

	"github.com/fillgate/fillgate/internal/secretjson"
)

func theirs() *nmhost.Host {
	// Not Init(): that inspects the executable. AutoUpdate stays false, so
	// nothing is ever fetched.
	return &nmhost.Host{ByteOrder: binary.NativeEndian}
}

// theirRead reads one message with their OnMessage on its own goroutine. ok
// is false when their reader ended the goroutine (runtime.Goexit) instead of
// returning.
func theirRead(r io.Reader, v any) (err error, ok bool) {
	type result struct {
		err      error
		returned bool
	}
	done := make(chan result, 1)
	go func() {
		returned := false
		defer func() { done <- result{err, returned} }()
		err = theirs().OnMessage(r, v)
		returned = true
	}()
	res := <-done
	return res.err, res.returned
}

var crossMessages = []map[string]any{
	{"type": "hello", "version": "0.1.0", "user_agent": "Mozilla/5.0 (X11; Linux x86_64)", "paused": false},
	{"id": 1.0, "type": "inspect"},
	{"type": "unicode", "s": "é ü 日本 🙂 \u2028 \"q\" \\ \t\n"},
	{"type": "big", "s": strings.Repeat("0123456789abcdef", 20000)}, // > smallFrame
	{},
}

func TestOursWrittenTheirsRead(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, m := range crossMessages {
		body, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(body); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range crossMessages {
		got := nmhost.H{}
		err, ok := theirRead(&buf, &got)
		if !ok || err != nil {
			t.Fatalf("message %d: their reader failed (returned=%v): %v", i, ok, err)
		}
		if !reflect.DeepEqual(map[string]any(got), want) {
			t.Fatalf("message %d differs", i)
		}
	}
	// At the end of input their reader does not return: it Goexits. This
	// is why it is not used at run time.
	if _, ok := theirRead(&buf, &nmhost.H{}); ok {
		t.Fatal("their reader returned at end of input; the note above is stale")
	}
}

func TestTheirsWrittenOursRead(t *testing.T) {
	var buf bytes.Buffer
	for _, m := range crossMessages {
		if err := theirs().PostMessage(&buf, m); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range crossMessages {
		body, err := ReadFrame(&buf)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("message %d differs", i)
		}
	}
	if _, err := ReadFrame(&buf); err != io.EOF {
		t.Fatalf("after the last message: %v, want io.EOF", err)
	}
}

// rawValues are values sent on the raw (secret) path in the tests.
var rawValues = []string{
	"",
	"plain",
	`quote" and backslash\`,
	"tab\tnewline\ncr\r",
	"\x00\x01\x1f\x7f",
	"<script>&amp;</script>",
	"é ü ß 日本 🙂",
	"line\u2028para\u2029end",
	"\ufffd is a real replacement character",
	"/slash/",
}

// Bodies built on the raw (secret) path decode to the same string in their
// implementation.
func TestRawValueBodyReadByTheirs(t *testing.T) {
	for i, s := range rawValues {
		body, err := secretjson.Message(struct {
			Type string `json:"type"`
		}{"insert"}, []byte(s))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteFrame(&buf, body); err != nil {
			t.Fatal(err)
		}
		var got struct{ Value string }
		err, ok := theirRead(&buf, &got)
		if !ok || err != nil {
			t.Fatalf("case %d: their reader failed: %v", i, err)
		}
		if got.Value != s {
			t.Fatalf("case %d: value differed", i)
		}
	}
}

// A Port talks to a peer written with their library.
func TestPortWithTheirPeer(t *testing.T) {
	hostR, peerW := io.Pipe()
	peerR, hostW := io.Pipe()
	p := NewPort(hostR, hostW, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- p.Run(ctx) }()

	peerDone := make(chan struct{})
	go func() {
		defer close(peerDone) // runs on Goexit too
		defer peerW.Close()
		h := theirs()
		for {
			var req struct {
				ID   int64  `json:"id"`
				Type string `json:"type"`
				N    int    `json:"n"`
			}
			if err := h.OnMessage(peerR, &req); err != nil {
				return
			}
			reply := nmhost.H{"id": req.ID, "type": "pong", "n": req.N * 2}
			if err := h.PostMessage(peerW, reply); err != nil {
				return
			}
		}
	}()

	for n := range 20 {
		reply, err := p.Call(ctx, ping{"ping", n})
		if err != nil {
			t.Fatalf("call %d: %v", n, err)
		}
		var got struct{ N int }
		if err := json.Unmarshal(reply, &got); err != nil || got.N != 2*n {
			t.Fatalf("call %d: reply %s", n, reply)
		}
	}
	hostW.Close() // their reader sees EOF and Goexits; the peer closes its end
	<-peerDone
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := p.Call(ctx, ping{"ping", 0}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after the peer left: %v", err)
	}
}
