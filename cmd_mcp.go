package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/request"
)

type mcpCmd struct {
	Socket string `help:"Ask the fillgate host on this socket (e.g. one forwarded from your desktop with ssh -R) instead of the local one." type:"path"`
}

func (mcpCmd) Help() string {
	return `Add it to your agent, e.g. for Claude Code:
  claude mcp add --scope user fillgate -- fillgate mcp
The tool returns the same result as fillgate fill --json; never the value.
The call waits for the human (90 s by default): give the client a request
timeout that is reset on progress; fillgate reports progress every few
seconds while the prompt is open.`
}

// toolName is the one tool fillgate mcp serves.
const toolName = "request_secret"

const toolDescription = `Ask the human to type a password or one-time code into the login field that is focused in their browser. ` +
	`The human answers in a fillgate dialog on their desktop, or a local fillgate page; the value goes straight into the page and is never returned to you. ` +
	`Before calling, focus the password (or code) field on the login page. ` +
	`By default fillgate then submits the login form and leaves no value in the page; with then=none a value the human types stays in the field, where any tool reading the page can see it (a saved value is always submitted). ` +
	`The call waits for the human: it can take as long as the prompt's budget (90 s by default, up to 15 minutes); progress is reported every few seconds meanwhile. ` +
	`Result: status ok | cancelled | refused | no_response | failed, with detail; isError is true for every status but ok. ` +
	`After no_response do not call again for the same service: follow "fallback".`

func (c mcpCmd) Run(a *app) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "fillgate", Version: manifest.Version}, nil)
	s.AddTool(&mcp.Tool{
		Name:         toolName,
		Title:        "Type a secret into the browser",
		Description:  toolDescription,
		InputSchema:  inputSchema(),
		OutputSchema: outputSchema(),
		Meta:         mcp.Meta{"anthropic/requiresUserInteraction": true},
		Annotations:  toolAnnotations(),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := a.bound(ctx) // a stop signal ends the call, and its prompt
		defer cancel()
		in, res, ok := parseArgs(req.Params.Arguments)
		if ok {
			res = requestSecret(ctx, a, c.Socket, req, in)
		}
		return toolResult(res), nil
	})
	s.AddReceivingMiddleware(onlyOurTool)
	return s.Run(a.ctx, cancelAware{&mcp.StdioTransport{}})
}

// toolAnnotations are the tool's hints, each set on purpose: it changes
// the user's browser (it types into their page and, by default, submits
// the login form, which sends the value to the site: an open world), it is
// not idempotent (every call asks the human again), and a client should
// confirm it with the user before running it (destructive).
func toolAnnotations() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:           "Type a secret into the browser",
		ReadOnlyHint:    false,
		DestructiveHint: new(true),
		IdempotentHint:  false,
		OpenWorldHint:   new(true),
	}
}

// toolResult is res as a tool result: the result object as structured
// content and as its JSON text, with isError set for every status but ok
// (the value is not in the field: the agent must not go on as if it were).
func toolResult(res fill.Result) *mcp.CallToolResult {
	b, err := json.Marshal(res)
	if err != nil { // cannot happen: a Result is plain strings
		b = []byte(`{"status":"failed","service":"","detail":"cannot encode the result"}`)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           res.Status != fill.StatusOK,
	}
}

// onlyOurTool answers a tools/call of any other tool with an error that
// does not quote the name it was given (which could be anything, of any
// size).
func onlyOurTool(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil && ctr.Params.Name != toolName {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool: fillgate has one tool, " + toolName}
		}
		return next(ctx, method, req)
	}
}

// requestSecret runs one checked request, with progress for a client that
// asked for it.
func requestSecret(ctx context.Context, a *app, socket string, req *mcp.CallToolRequest, in secretArgs) fill.Result {
	freq := fill.Request{Service: in.Service, Field: in.Field, Then: in.Then, Tab: in.Tab, Frame: in.Frame}
	var onProgress func(fill.Progress)
	if token := req.Params.GetProgressToken(); token != nil {
		p := newProgress(ctx, progressEvery, func(ctx context.Context, n float64, msg string) {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: n})
		})
		defer p.stop()
		onProgress = p.phase
	}
	return request.Fill(ctx, freq, request.Options{Client: "fillgate mcp", Tab: in.CDPTab, Socket: socket, Env: a.env, OnProgress: onProgress})
}

// progressEvery is how often progress goes to the client while the prompt
// waits for the human: well within 10 s, so a client whose request timeout
// is reset on progress keeps waiting.
const progressEvery = 5 * time.Second

// progress reports a request's phases, and while the prompt is open a
// countdown every p.every, as MCP progress notifications with an
// increasing progress value. Nothing is sent once the request's context
// has ended or stop returned.
type progress struct {
	ctx   context.Context
	every time.Duration
	send  func(ctx context.Context, n float64, msg string)

	mu sync.Mutex // held while sending, so n increases in the order sent
	n  float64

	cmu     sync.Mutex
	waiting context.CancelFunc // ends the countdown of the open prompt
	done    chan struct{}      // closed when that countdown has ended
}

// newProgress reports through send, with a countdown every every.
func newProgress(ctx context.Context, every time.Duration, send func(ctx context.Context, n float64, msg string)) *progress {
	return &progress{ctx: ctx, every: every, send: send}
}

// notify sends one notification unless the request has ended.
func (p *progress) notify(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return
	}
	p.n++
	p.send(p.ctx, p.n, msg)
}

// phase hears one phase of the request.
func (p *progress) phase(ph fill.Progress) {
	p.stop()
	if ph.Phase != fill.PhaseWaiting {
		p.notify(ph.Phase)
		return
	}
	p.notify(waitingMessage(ph))
	ctx, cancel := context.WithCancel(p.ctx)
	done := make(chan struct{})
	p.cmu.Lock()
	p.waiting, p.done = cancel, done
	p.cmu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(p.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.notify(waitingMessage(ph))
			}
		}
	}()
}

// stop ends the countdown, if one runs, and waits for it; no countdown
// notification is sent after it returns.
func (p *progress) stop() {
	p.cmu.Lock()
	cancel, done := p.waiting, p.done
	p.waiting, p.done = nil, nil
	p.cmu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// waitingMessage says whom the request waits for, where, and how long.
func waitingMessage(ph fill.Progress) string {
	msg := "waiting for the human to answer the fillgate prompt " + whereWords(ph.Where)
	if ph.Deadline.IsZero() {
		return msg
	}
	left := max(time.Until(ph.Deadline).Round(time.Second), 0)
	return fmt.Sprintf("%s: %d s left", msg, int(left/time.Second))
}

// whereWords says where the person answers.
func whereWords(where string) string {
	if where == fill.WhereDesktop {
		return "in a dialog on their desktop"
	}
	return "in the browser"
}
