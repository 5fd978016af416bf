package fakeext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
)

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for i, lit := range []string{
		`""`, `"plain"`, `"q\"b\\s\/"`, `"\b\f\n\r\t"`, `"\u0001\u001f"`,
		`"\u00e9 é"`, `"\ud83d\ude42 🙂"`, `"\u2028\u2029"`, `"lone \ud800 x"`, `"\ud800\u0041"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("case %d: bad test literal: %v", i, err)
		}
		got, ok := unquote([]byte(lit))
		if !ok || string(got) != want {
			t.Errorf("case %d: unquote differs from encoding/json", i)
		}
	}
	for i, bad := range []string{``, `"`, `x`, `"a`, `"a"b"`, "\"\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `"\"`} {
		if _, ok := unquote([]byte(bad)); ok {
			t.Errorf("bad case %d accepted", i)
		}
	}
}

func TestRedact(t *testing.T) {
	body := []byte(`{"id":4,"type":"insert","value":"hunter2-marker","kind":"password"}`)
	got := redact(body)
	if bytes.Contains(got, []byte("hunter2-marker")) {
		t.Fatal("value not redacted")
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	if m["value"] != "[redacted]" || m["kind"] != "password" || m["type"] != "insert" {
		t.Fatalf("redacted record %s", got)
	}
	if string(redact([]byte(`{"type":"ping"}`))) != `{"type":"ping"}` {
		t.Fatal("a message without a value changed")
	}
}

// start runs a fake on pipes and gives the test a raw port to it.
func start(t *testing.T, opt Options) (*Ext, *nativemsg.Port, chan json.RawMessage) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ext, hostR, hostW := Connect(ctx, opt)
	notices := make(chan json.RawMessage, 16)
	port := nativemsg.NewPort(hostR, hostW, func(m json.RawMessage) { notices <- m })
	go func() { _ = port.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		ext.Close()
		hostR.Close()
		hostW.Close()
	})
	return ext, port, notices
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestHelloAndRequests(t *testing.T) {
	ext, port, notices := start(t, Options{UserAgent: "UA", Page: Page{Tab: 1, Origins: []string{"https://a.test"}, Field: fill.FieldInfo{Kind: fill.FieldPassword}}})
	var hello struct {
		Type      string
		UserAgent string `json:"user_agent"`
	}
	if err := json.Unmarshal(<-notices, &hello); err != nil || hello.Type != "hello" || hello.UserAgent != "UA" {
		t.Fatal("first message is not hello")
	}
	if _, err := port.Call(ctxT(t), map[string]string{"type": "frobnicate"}); err == nil || !strings.Contains(err.Error(), "bad_request") {
		t.Fatalf("unknown request: %v", err)
	}
	if _, err := port.Call(ctxT(t), map[string]any{"type": "close_prompt", "window": 5}); err == nil {
		t.Fatal("closing an unknown window succeeded")
	}
	if err := ext.CloseWindow(5); err == nil {
		t.Fatal("the human closed a window that was never opened")
	}
	reply, err := port.Call(ctxT(t), map[string]string{"type": "inspect"})
	if err != nil {
		t.Fatal(err)
	}
	var in struct{ Token string }
	if err := json.Unmarshal(reply, &in); err != nil || in.Token == "" {
		t.Fatalf("inspect reply %s", reply)
	}
	// A well-formed insert without a value is a bad request, not an insert.
	_, err = port.Call(ctxT(t), map[string]any{"type": "insert", "tab": 1, "frame": 0, "token": in.Token,
		"origins": []string{"https://a.test"}, "kind": "password"})
	var re *nativemsg.ReplyError
	if !errors.As(err, &re) || re.Code != "bad_request" || ext.Inserts() != 0 {
		t.Fatalf("insert without a value: %v", err)
	}
	if ext.ValueEquals(nil) || ext.ValueEquals([]byte{}) {
		t.Fatal("ValueEquals is true with nothing inserted")
	}
}

func TestRecordsMalformedAndNotices(t *testing.T) {
	ext, port, _ := start(t, Options{NoHello: true})
	if err := port.Notify(map[string]string{"type": "outcome", "service": "a.test"}); err != nil {
		t.Fatal(err)
	}
	m, err := ext.Wait(ctxT(t), OfType("outcome"))
	if err != nil || m.ID != nil {
		t.Fatalf("outcome notice: %+v, %v", m, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ext.Wait(ctx, OfType("never")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after ctx end: %v", err)
	}
}

func TestDisconnectEndsHostInput(t *testing.T) {
	ext, port, _ := start(t, Options{})
	ext.Disconnect()
	<-port.Done()
	<-ext.Done()
	if _, err := port.Call(ctxT(t), map[string]string{"type": "ping"}); !errors.Is(err, nativemsg.ErrClosed) {
		t.Fatalf("call after disconnect: %v", err)
	}
}

func TestRunOverPlainReaderWriter(t *testing.T) {
	// Any reader/writer pair works; end of input ends Run cleanly.
	inR, inW := io.Pipe()
	pr, pw := io.Pipe()
	ext := New(inR, pw, Options{NoHello: true})
	done := make(chan error, 1)
	go func() { done <- ext.Run(context.Background()) }()
	go func() { _ = nativemsg.WriteFrame(inW, []byte(`{"id":1,"type":"ping"}`)) }()
	body, err := nativemsg.ReadFrame(pr)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != `{"id":1,"type":"pong"}` {
		t.Fatalf("reply %s", body)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
