// Package mcp is fillgate's MCP server: one tool, request_secret, served
// over stdio, with its schema, the caps on its arguments, its results and
// errors, progress while the human answers, and a transport that honours
// the client's cancellations.
package mcp

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/request"
)

// Options configure the server.
type Options struct {
	// Socket, when set, is the fillgate host's socket to ask (e.g. one
	// forwarded with ssh -R) instead of the local one.
	Socket string
	// Env reads the environment, as os.Getenv.
	Env func(string) string
}

// toolName is the one tool fillgate mcp serves.
const toolName = "request_secret"

// toolDescription tells the agent what the tool does, how long a call
// takes, and what its results mean.
const toolDescription = `Ask the human to type a password or one-time code into the login field that is focused in their browser. ` +
	`The human answers in a fillgate dialog on their desktop, or a local fillgate page; the value goes straight into the page and is never returned to you. ` +
	`Before calling, focus the password (or code) field on the login page. ` +
	`By default fillgate then submits the login form and leaves no value in the page; with then=none a value the human types stays in the field, where any tool reading the page can see it (a saved value is always submitted). ` +
	`The call waits for the human: it can take as long as the prompt's budget (90 s by default, up to 15 minutes); progress is reported every few seconds meanwhile. ` +
	`For a passkey sign-in (field passkey) with the login page open, call with no_wait=true: once the tab is armed you get status armed; then click the site's passkey button. ` +
	`Result: status ok | armed | cancelled | refused | no_response | failed, with detail; isError is true for every status but ok and armed. ` +
	`After no_response do not call again for the same service: follow "fallback".`

// Serve runs the server on stdin and stdout until the client leaves or
// ctx ends. A tool call in progress ends when ctx ends (a stop signal),
// with ctx's cause, and closes its prompt.
func Serve(ctx context.Context, opts Options) error {
	s := sdk.NewServer(&sdk.Implementation{Name: "fillgate", Version: manifest.Version}, nil)
	s.AddTool(&sdk.Tool{
		Name:         toolName,
		Title:        "Type a secret into the browser",
		Description:  toolDescription,
		InputSchema:  inputSchema(),
		OutputSchema: outputSchema(),
		Meta:         sdk.Meta{"anthropic/requiresUserInteraction": true},
		Annotations:  toolAnnotations(),
	}, func(callCtx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		callCtx, cancel := bound(callCtx, ctx) // a stop signal ends the call, and its prompt
		defer cancel()
		in, res, ok := parseArgs(req.Params.Arguments)
		if ok {
			res = requestSecret(callCtx, opts, req, in)
		}
		return toolResult(res), nil
	})
	s.AddReceivingMiddleware(onlyOurTool)
	return s.Run(ctx, cancelAware{&sdk.StdioTransport{}})
}

// bound is ctx, ended also when run ends, with run's cause: the server
// serves each call on a context of its own, and a stop signal must end
// it too.
func bound(ctx, run context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(run, func() { cancel(context.Cause(run)) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// toolAnnotations are the tool's hints, each set on purpose: it changes
// the user's browser (it types into their page and, by default, submits
// the login form, which sends the value to the site: an open world), it is
// not idempotent (every call asks the human again), and a client should
// confirm it with the user before running it (destructive).
func toolAnnotations() *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{
		Title:           "Type a secret into the browser",
		ReadOnlyHint:    false,
		DestructiveHint: new(true),
		IdempotentHint:  false,
		OpenWorldHint:   new(true),
	}
}

// toolResult is res as a tool result: the result object as structured
// content and as its JSON text, with isError set for every status but ok
// and armed (the value is not in the field: the agent must not go on as if
// it were; armed asks it to go on, by clicking the page's passkey button).
func toolResult(res fill.Result) *sdk.CallToolResult {
	b, err := json.Marshal(res)
	if err != nil { // cannot happen: a Result is plain strings
		b = []byte(`{"status":"failed","service":"","detail":"cannot encode the result"}`)
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           res.Status != fill.StatusOK && res.Status != fill.StatusArmed,
	}
}

// onlyOurTool answers a tools/call of any other tool with an error that
// does not quote the name it was given (which could be anything, of any
// size).
func onlyOurTool(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if ctr, ok := req.(*sdk.CallToolRequest); ok && ctr.Params != nil && ctr.Params.Name != toolName {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool: fillgate has one tool, " + toolName}
		}
		return next(ctx, method, req)
	}
}

// requestSecret runs one checked request, with progress for a client that
// asked for it.
func requestSecret(ctx context.Context, opts Options, req *sdk.CallToolRequest, in secretArgs) fill.Result {
	freq := fill.Request{Service: in.Service, Field: in.Field, Then: in.Then, Tab: in.Tab, Frame: in.Frame, NoWait: in.NoWait}
	var onProgress func(fill.Progress)
	if token := req.Params.GetProgressToken(); token != nil {
		p := newProgress(ctx, progressEvery, func(ctx context.Context, n float64, msg string) {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: n})
		})
		defer p.stop()
		onProgress = p.phase
	}
	return request.Fill(ctx, freq, request.Options{Client: "fillgate mcp", Tab: in.CDPTab, Socket: opts.Socket, Env: opts.Env, OnProgress: onProgress})
}
