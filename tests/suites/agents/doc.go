// Package agents tests fillgate against the tools agents use to read the
// browser, as an agent would use them: Playwright MCP (attached with
// --cdp-endpoint) and chrome-devtools-mcp (--browserUrl), pinned in
// tests/kit/agenttools and driven by the official MCP TypeScript SDK client,
// and `fillgate mcp` itself driven by that same client.
//
// One headless Chromium runs the real extension (unpacked by `fillgate
// install`, which also writes the host manifest the browser starts the
// host from) with a debugging port, so both paths are exercised against
// the same browser: the extension, and `fillgate fill --via cdp`. That
// browser can be driven (its debugging port is how the agent tools attach),
// so by default fillgate logs in in its clean room and hands the agent's tab
// the session; the tests of what the tools see of a field a fill typed into
// set driven = "in-page", the person's consent to type into that browser.
// After every ok fill the agent tools read the page (snapshots, the tools
// that save snapshots to their output folder, screenshots), and the secret
// must be in none of their results or files, and not in the page.
//
// The tests run on Linux with Debian's chromium and the npm packages
// tests/setup installs; without them they fail, never skip. Run them with
// `go test ./tests/suites/agents/`.
package agents
