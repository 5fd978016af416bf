package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeConn is an sdk.Connection fed by the test.
type fakeConn struct {
	in      chan jsonrpc.Message
	mu      sync.Mutex
	written []jsonrpc.Message
}

func (f *fakeConn) Read(ctx context.Context) (jsonrpc.Message, error) { return <-f.in, nil }
func (f *fakeConn) Write(_ context.Context, m jsonrpc.Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.written = append(f.written, m)
	return nil
}
func (f *fakeConn) Close() error      { return nil }
func (f *fakeConn) SessionID() string { return "" }

type fakeTransport struct{ c *fakeConn }

func (f fakeTransport) Connect(context.Context) (sdk.Connection, error) { return f.c, nil }

// TestCancelledRequestGetsNoResponse: after notifications/cancelled, the
// response to that request and progress for it are not written; other
// requests are answered as usual.
func TestCancelledRequestGetsNoResponse(t *testing.T) {
	fc := &fakeConn{in: make(chan jsonrpc.Message, 8)}
	conn, err := cancelAware{fakeTransport{fc}}.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id := func(n int64) jsonrpc.ID { i, _ := jsonrpc.MakeID(float64(n)); return i }
	read := func(m jsonrpc.Message) {
		fc.in <- m
		if _, err := conn.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	read(&jsonrpc.Request{ID: id(1), Method: "tools/call", Params: json.RawMessage(`{"name":"request_secret","_meta":{"progressToken":"p1"}}`)})
	read(&jsonrpc.Request{ID: id(2), Method: "tools/call", Params: json.RawMessage(`{"name":"request_secret","_meta":{"progressToken":7}}`)})
	read(&jsonrpc.Request{Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":1,"reason":"stop"}`)})
	progress := func(token string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":` + token + `,"progress":1}`)}
	}
	for _, m := range []jsonrpc.Message{
		progress(`"p1"`), progress(`7`),
		&jsonrpc.Response{ID: id(1), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id(2), Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id(1), Result: json.RawMessage(`{}`)}, // not a request in flight any more: passed on
	} {
		if err := conn.Write(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, m := range fc.written {
		switch m := m.(type) {
		case *jsonrpc.Response:
			got = append(got, "response "+string(mustJSON(m.ID.Raw())))
		case *jsonrpc.Request:
			got = append(got, m.Method+" "+string(m.Params))
		}
	}
	want := []string{`notifications/progress {"progressToken":7,"progress":1}`, "response 2", "response 1"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("written: %q\nwant:    %q", got, want)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }
