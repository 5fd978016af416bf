package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelAware is a transport that honours notifications/cancelled as the
// MCP spec asks: no response is sent for a request the client cancelled,
// and no more progress for it. The go-sdk (v1.8.0) cancels the handler's
// context but still writes the response the handler returns; this
// connection drops it, and the progress notifications that carry the
// request's progress token.
//
// (Wrapping the SDK's stdio connection hides one unexported hook from the
// SDK: it can no longer tell the connection the negotiated protocol
// version, which the connection uses only to refuse JSON-RPC batches from
// clients of protocol 2025-06-18 and later.)
type cancelAware struct{ sdk.Transport }

// Connect implements sdk.Transport.
func (t cancelAware) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c, calls: map[jsonrpc.ID]*call{}, tokens: map[any]jsonrpc.ID{}}, nil
}

// cancelConn is the connection cancelAware makes.
type cancelConn struct {
	sdk.Connection
	mu     sync.Mutex
	calls  map[jsonrpc.ID]*call // the client's requests that have no response yet
	tokens map[any]jsonrpc.ID   // their progress tokens
}

// call is one of the client's requests in flight.
type call struct {
	token     any // its progress token, or nil
	cancelled bool
}

// Read implements sdk.Connection: it notes every request the client sends
// and every cancellation.
func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok {
		return msg, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case req.IsCall():
		cl := &call{token: progressToken(req.Params)}
		c.calls[req.ID] = cl
		if cl.token != nil {
			c.tokens[cl.token] = req.ID
		}
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			break
		}
		if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
			if cl, ok := c.calls[id]; ok {
				cl.cancelled = true
			}
		}
	}
	return msg, nil
}

// Write implements sdk.Connection: the response to a cancelled request,
// and progress for it, are dropped.
func (c *cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.mu.Lock()
	drop := false
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if cl, ok := c.calls[m.ID]; ok {
			drop = cl.cancelled
			delete(c.calls, m.ID)
			if cl.token != nil {
				delete(c.tokens, cl.token)
			}
		}
	case *jsonrpc.Request:
		if m.Method == "notifications/progress" {
			if id, ok := c.tokens[progressToken(m.Params)]; ok {
				drop = c.calls[id].cancelled
			}
		}
	}
	c.mu.Unlock()
	if drop {
		return nil
	}
	return c.Connection.Write(ctx, msg)
}

// progressToken is the progress token of a request's params
// (_meta.progressToken) or of a progress notification's (progressToken),
// as a comparable value, or nil.
func progressToken(params json.RawMessage) any {
	var p struct {
		Token any `json:"progressToken"`
		Meta  struct {
			Token any `json:"progressToken"`
		} `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return nil
	}
	t := p.Token
	if t == nil {
		t = p.Meta.Token
	}
	switch t.(type) {
	case string, float64:
		return t
	}
	return nil
}
