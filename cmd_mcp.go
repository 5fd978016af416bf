package main

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fillgate/fillgate/host/fill"
	"github.com/fillgate/fillgate/host/trigger"
	"github.com/fillgate/fillgate/manifest"
)

type mcpCmd struct{}

func (mcpCmd) Help() string {
	return `Add it to your agent, e.g. for Claude Code:
  claude mcp add --scope user fillgate -- fillgate mcp
The tool returns the same result as fillgate fill --json; never the value.`
}

// secretArgs are request_secret's arguments.
type secretArgs struct {
	Service string `json:"service" jsonschema:"the site the secret is for, e.g. github.com; the page's host must be it or a subdomain of it"`
	Field   string `json:"field,omitempty" jsonschema:"password (default) or otp for a one-time code"`
	Tab     string `json:"tab,omitempty" jsonschema:"optional: pin the browser tab (the extension's tab id or a CDP target id)"`
	Frame   *int64 `json:"frame,omitempty" jsonschema:"optional: pin the frame (the extension's frame id)"`
}

const toolDescription = `Ask the human to type a password or one-time code into the login field that is focused in their browser. ` +
	`The human answers in a local fillgate page; the value goes straight into the page and is never returned to you. ` +
	`Before calling, focus the password (or code) field on the login page. ` +
	`Result: status ok | cancelled | refused | no_response | failed, with detail. ` +
	`After no_response do not call again for the same service: follow "fallback".`

func (mcpCmd) Run(a *app) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "fillgate", Version: manifest.Version}, nil)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "request_secret",
		Title:       "Type a secret into the browser",
		Description: toolDescription,
		Meta:        mcp.Meta{"anthropic/requiresUserInteraction": true},
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, in secretArgs) (*mcp.CallToolResult, fill.Result, error) {
		ctx, cancel := a.bound(ctx) // a stop signal ends the call, and its prompt
		defer cancel()
		res := requestSecret(ctx, a, req, in)
		return &mcp.CallToolResult{IsError: res.Status == fill.StatusFailed}, res, nil
	})
	return s.Run(a.ctx, &mcp.StdioTransport{})
}

func requestSecret(ctx context.Context, a *app, req *mcp.CallToolRequest, in secretArgs) fill.Result {
	field, err := fill.NormalizeField(in.Field)
	if err != nil {
		return fill.Result{Status: fill.StatusRefused, Service: in.Service, Detail: err.Error()}
	}
	freq := fill.Request{Service: in.Service, Field: field, Frame: in.Frame}
	var cdpTab string
	freq.Tab, cdpTab = splitTab(in.Tab)
	token := req.Params.GetProgressToken()
	step := 0.0
	progress := func(p fill.Progress) {
		if token == nil {
			return
		}
		step++
		msg := p.Phase
		if p.Phase == fill.PhaseWaiting {
			msg = fmt.Sprintf("waiting for the human in the browser until %s", p.Deadline.Format("15:04:05"))
		}
		_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: msg, Progress: step, Total: 3})
	}
	return trigger.Fill(ctx, freq, trigger.Options{Client: "fillgate mcp", Tab: cdpTab, Env: a.env, OnProgress: progress})
}
