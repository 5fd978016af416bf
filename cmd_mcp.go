package main

import "github.com/fillgate/fillgate/internal/mcp"

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

// Run serves the MCP tool on stdin and stdout until the client leaves; a
// stop signal ends the calls in progress, and their prompts.
func (c mcpCmd) Run(a *app) error {
	return mcp.Serve(a.ctx, mcp.Options{Socket: c.Socket, Env: a.env})
}
