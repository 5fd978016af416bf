package agenttools

import (
	"os"
	"path/filepath"
)

// The servers' entry points, relative to Dir.
const (
	PlaywrightMCPScript     = "node_modules/@playwright/mcp/cli.js"
	ChromeDevToolsMCPScript = "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"
)

// Quiet is the environment every agent tool gets: no browser download, no
// update check, no usage statistics, nothing sent off this machine.
func Quiet(home string) map[string]string {
	return map[string]string{
		"HOME":                             home,
		"XDG_CACHE_HOME":                   filepath.Join(home, ".cache"),
		"XDG_CONFIG_HOME":                  filepath.Join(home, ".config"),
		"PATH":                             os.Getenv("PATH"),
		"LANG":                             "C.UTF-8",
		"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
		"PUPPETEER_SKIP_DOWNLOAD":          "1",
		"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1",
		"CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS":    "1",
	}
}

// Workspace is where one agent tool runs and writes: its HOME, its
// working directory and its output folder, all under Root, which a test
// scans for the secret.
type Workspace struct {
	Root   string
	Home   string // HOME and the XDG dirs
	Dir    string // the working directory (the workspace root of the tool)
	Output string // Playwright MCP's --output-dir; chrome-devtools-mcp's files
	Stderr string // the server's stderr
}

// NewWorkspace makes the dirs of a workspace under root.
func NewWorkspace(root string) (Workspace, error) {
	w := Workspace{
		Root:   root,
		Home:   filepath.Join(root, "home"),
		Dir:    filepath.Join(root, "work"),
		Output: filepath.Join(root, "work", "output"),
		Stderr: filepath.Join(root, "stderr.log"),
	}
	for _, d := range []string{w.Home, w.Dir, w.Output} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return Workspace{}, err
		}
	}
	return w, nil
}

// PlaywrightMCP is @playwright/mcp attached to a running browser over CDP
// (cdpEndpoint: http://127.0.0.1:PORT or its ws:// URL), saving its
// snapshots and other output files in w.Output.
func PlaywrightMCP(node, cdpEndpoint string, w Workspace) Spec {
	return Spec{
		Command: node,
		Args: []string{filepath.Join(Dir(), PlaywrightMCPScript),
			"--cdp-endpoint", cdpEndpoint, "--output-dir", w.Output,
			"--image-responses", "allow", "--file-paths", "absolute"},
		Env:    Quiet(w.Home),
		Dir:    w.Dir,
		Stderr: w.Stderr,
	}
}

// ChromeDevToolsMCP is chrome-devtools-mcp attached to a running browser
// (browserURL: http://127.0.0.1:PORT), its file tools confined to w.Dir.
func ChromeDevToolsMCP(node, browserURL string, w Workspace) Spec {
	return Spec{
		Command: node,
		Args: []string{filepath.Join(Dir(), ChromeDevToolsMCPScript),
			"--browserUrl", browserURL, "--workspace", w.Dir,
			"--no-usage-statistics", "--no-performance-crux", "--logFile", filepath.Join(w.Root, "cdmcp.log")},
		Env:    Quiet(w.Home),
		Dir:    w.Dir,
		Stderr: w.Stderr,
	}
}
