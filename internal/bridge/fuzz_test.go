package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// maxErr bounds an error the bridge builds from a reply: it names the
// request and at most a short prefix of a reply's type, however long the
// reply.
const maxErr = 300

// maxLogPerMessage bounds what one message from the extension may add to
// the host's log.
const maxLogPerMessage = 400

// FuzzHandleNotice: any message from the extension that is not a reply
// is taken apart without a panic, changes the extension's status only as
// a hello or paused notice says, keeps the list of early prompt_closed
// notices bounded, and adds a bounded line to the log.
func FuzzHandleNotice(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","version":"0.1.0","user_agent":"UA","paused":true,"instance":"i"}`,
		`{"type":"paused","paused":true}`, `{"type":"prompt_closed","window":7}`, `{"type":"prompt_closed","window":-1}`,
		`{"type":"x"}`, `{"id":1,"type":"pong"}`, `{"id":null,"type":"hello"}`, `{"type":"hello","version":5}`,
		`[]`, `null`, `{`, ``, `{"type":"paused","paused":"yes"}`, `{"type":"hello","type":"paused"}`,
		`{"type":"` + string(bytes.Repeat([]byte("t"), 5000)) + `"}`, "{\"type\":\"hel\xfflo\"}", `{"type":"prompt_closed","window":1e3}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		logs := &syncbuf.Buffer{}
		port := nativemsg.NewPort(bytes.NewReader(nil), io.Discard, nil)
		b := New(port, WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		before := b.Status()
		for range maxEarly + 2 {
			b.HandleNotice(raw)
		}
		if len(logs.Bytes()) > (maxEarly+2)*maxLogPerMessage {
			t.Fatalf("%d notices logged %d bytes", maxEarly+2, len(logs.Bytes()))
		}
		b.mu.Lock()
		early, windows := len(b.early), len(b.windows)
		b.mu.Unlock()
		if early > maxEarly || windows != 0 {
			t.Fatalf("%d early prompt_closed remembered (at most %d), %d windows", early, maxEarly, windows)
		}
		var env struct {
			Type string `json:"type"`
			ID   *int64 `json:"id"`
		}
		var hello helloNotice
		var paused pausedNotice
		after := b.Status()
		switch {
		case json.Unmarshal(raw, &env) != nil || env.ID != nil:
			if after != before {
				t.Fatalf("a malformed message or a stray reply changed the status")
			}
		case env.Type == "hello" && json.Unmarshal(raw, &hello) == nil:
			want := ExtensionStatus{Connected: true, Version: hello.Version, UserAgent: hello.UserAgent, Paused: hello.Paused, Instance: hello.Instance}
			if after != want {
				t.Fatalf("after hello the status is %+v", after)
			}
		case env.Type == "paused" && json.Unmarshal(raw, &paused) == nil:
			if after.Paused != paused.Paused || after.Connected {
				t.Fatalf("after paused the status is %+v", after)
			}
		default:
			if after != before {
				t.Fatalf("a %s notice changed the status", shortType(env.Type))
			}
		}
	})
}

// peer is a scripted extension: it answers each request with what the
// fuzz target gave (the request's id put in front when it is a JSON
// object), then with an error reply, so every call ends however the
// fuzzed reply was read.
func peer(t *testing.T, r io.Reader, w io.Writer, reply []byte) {
	for {
		body, err := nativemsg.ReadFrame(r)
		if err != nil {
			return
		}
		var req struct{ ID int64 }
		if json.Unmarshal(body, &req) != nil {
			t.Errorf("the bridge sent a request that is not JSON")
			return
		}
		id := strconv.FormatInt(req.ID, 10)
		first := reply
		if t := bytes.TrimLeft(reply, " \t\r\n"); len(t) > 0 && t[0] == '{' {
			first = append([]byte(`{"id":`+id+`,`), t[1:]...)
		}
		if nativemsg.WriteFrame(w, first) != nil ||
			nativemsg.WriteFrame(w, []byte(`{"id":`+id+`,"type":"error","error":"fuzz"}`)) != nil {
			return
		}
	}
}

// FuzzReply: whatever the extension answers to each request the bridge
// makes (ping, inspect, peek, open_prompt, close_prompt, insert), the call
// ends without a panic, succeeds only on a reply of the type the protocol
// names for it, and fails with a short error that names the request.
func FuzzReply(f *testing.F) {
	for _, s := range []string{
		`{"type":"pong"}`, `{"type":"inspected","tab":1,"frame":0,"token":"t","origins":["https://a.test"],"field":{"kind":"password"}}`,
		`{"type":"peeked","origin":"https://a.test","field":{"kind":"password"}}`, `{"type":"prompt_opened","window":3}`,
		`{"type":"prompt_opened"}`, `{"type":"ok"}`, `{"type":"inserted","matched":true,"submitted":true}`,
		`{"type":"not_inserted","reason":"focus_moved"}`, `{"type":"not_inserted"}`, `{"type":"error","error":"not_active"}`,
		`{"type":"error","error":"no_tab","detail":"d"}`, `{"type":"inspected","origins":5}`, `{"type":"inserted","matched":"x"}`,
		`{"type":"` + string(bytes.Repeat([]byte("p"), 3000)) + `"}`, `{"id":"x","type":"pong"}`, `{"id":99,"type":"pong"}`,
		`[1]`, `7`, ``, `{`, `{"type":null}`, "{\"type\":\"pong\xff\"}",
	} {
		for kind := range uint8(6) {
			f.Add(kind, []byte(s))
		}
	}
	value := []byte("fuzz-value")
	f.Fuzz(func(t *testing.T, kind uint8, reply []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		hostR, peerW := io.Pipe()
		peerR, hostW := io.Pipe()
		defer peerW.Close()
		defer hostW.Close()
		logs := &syncbuf.Buffer{}
		var b *Bridge
		port := nativemsg.NewPort(hostR, hostW, func(m json.RawMessage) { b.HandleNotice(m) })
		b = New(port, WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
		go func() { _ = port.Run(ctx) }()
		go peer(t, peerR, peerW, reply)

		var env struct{ Type string }
		matched := json.Unmarshal(reply, &env) == nil
		var err error
		want := ""
		switch kind % 6 {
		case 0:
			want, err = "pong", b.Ping(ctx)
		case 1:
			want = "inspected"
			_, err = b.Inspect(ctx, fill.Request{})
		case 2:
			want = "peeked"
			_, err = b.Peek(ctx)
		case 3:
			want = "prompt_opened"
			_, err = b.OpenPrompt(ctx, "http://127.0.0.1:1/x")
		case 4:
			want = "ok"
			w := &window{b: b, id: 3, closed: make(chan struct{})}
			err = w.Close(ctx)
		case 5:
			var v fill.Verdict
			v, err = b.Insert(ctx, fill.Inspection{Tab: 1, Origins: []string{"https://a.test"}, Field: fill.FieldInfo{Kind: fill.FieldPassword}}, value, fill.InsertOptions{})
			if err == nil && env.Type != "inserted" && env.Type != "not_inserted" {
				t.Fatalf("insert succeeded on a %s reply", shortType(env.Type))
			}
			if err == nil && !v.Inserted && v.Reason == "" {
				t.Fatalf("an insert that was not made has no reason")
			}
			want = env.Type
		}
		if err == nil && (!matched || env.Type != want) {
			t.Fatalf("the call succeeded on a reply of type %s", shortType(env.Type))
		}
		if err != nil {
			if len(err.Error()) > maxErr {
				t.Fatalf("an error of %d bytes", len(err.Error()))
			}
			if bytes.Contains([]byte(err.Error()), value) {
				t.Fatalf("the error holds the value")
			}
		}
		if bytes.Contains(logs.Bytes(), value) {
			t.Fatalf("the log holds the value")
		}
	})
}
