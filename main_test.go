package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/fill"
)

// isolate points every fillgate directory at a temp dir and the CDP
// fallback at a port nothing listens on.
func isolate(t *testing.T) string {
	root := t.TempDir()
	for _, k := range []string{"HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(root, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, d)
	}
	t.Setenv("FILLGATE_CDP_URL", "http://127.0.0.1:9") // discard port: connection refused
	t.Setenv("BROWSER_CDP_URL", "")
	return root
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestFillExitCodesWithoutABrowser(t *testing.T) {
	isolate(t)
	cases := []struct {
		args   []string
		code   int
		status fill.Status
		detail string
	}{
		{[]string{"fill", "--service", "github.com", "--json"}, 6, fill.StatusFailed, "fillgate install"},
		{[]string{"fill", "--service", "github.com", "--json", "--via", "extension"}, 6, fill.StatusFailed, "fillgate doctor"},
		{[]string{"fill", "--service", "github.com", "--json", "--via", "cdp"}, 6, fill.StatusFailed, "connection refused"},
		{[]string{"fill", "--service", "co.uk", "--json"}, 3, fill.StatusRefused, "public suffix"},
		{[]string{"fill", "--service", "https://github.com", "--json"}, 3, fill.StatusRefused, "without a scheme"},
	}
	for _, c := range cases {
		code, out, _ := runCLI(t, c.args...)
		var res fill.Result
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: output %q is not a JSON result: %v", c.args, out, err)
		}
		if code != c.code || res.Status != c.status || !strings.Contains(res.Detail, c.detail) {
			t.Errorf("%v: exit %d, %+v; want exit %d, %s with %q", c.args, code, res, c.code, c.status, c.detail)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"fill"},
		{"fill", "--service", "github.com", "--field", "username"},
		{"fill", "--service", "github.com", "--via", "smoke-signals"},
		{"fill", "--service", "github.com", "--timeout", "-1s"},
		{"no-such-command"},
	} {
		if code, _, stderr := runCLI(t, args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
}

func TestFillHelpDocumentsExitCodes(t *testing.T) {
	code, out, _ := runCLI(t, "fill", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--service", "--field", "--json", "--timeout", "--via",
		"0  ok", "2  usage", "3  refused", "4  cancelled", "5  no_response", "6  failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("fill --help lacks %q", want)
		}
	}
}

func TestReadableLine(t *testing.T) {
	isolate(t)
	code, out, _ := runCLI(t, "fill", "--service", "co.uk")
	if code != 3 || !strings.HasPrefix(out, "refused: ") || strings.Count(out, "\n") != 1 {
		t.Errorf("exit %d, %q", code, out)
	}
}

func TestHostModeRefusesOtherCallers(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{
		{"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"},
		{"/tmp/x/dev.fillgate.host.json", "evil@example.org"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code == 0 || out != "" || !strings.Contains(stderr, "not fillgate's") {
			t.Errorf("%v: exit %d, stdout %q (must stay empty), stderr %q", args, code, out, stderr)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	root := isolate(t)
	bad := filepath.Join(root, "bad.policy")
	if err := os.WriteFile(bad, []byte("prompt_budget = \"90s\"\nsomething = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := runCLI(t, "policy", "check", bad); code != 1 || !strings.Contains(out, "bad.policy:2:") {
		t.Errorf("bad file: exit %d, %q", code, out)
	}
	if code, out, _ := runCLI(t, "policy", "check"); code != 0 || out == "" {
		t.Errorf("defaults: exit %d, %q", code, out)
	}
	// An invalid policy file refuses fills instead of falling back to the
	// defaults.
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "fillgate")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "policy"), []byte("via = \"sideways\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "fill", "--service", "github.com", "--json")
	if code != 3 || !strings.Contains(out, "policy check") {
		t.Errorf("invalid policy: exit %d, %q", code, out)
	}
}

func TestAuditEmpty(t *testing.T) {
	isolate(t)
	if code, out, _ := runCLI(t, "audit"); code != 0 || !strings.Contains(out, "no requests") {
		t.Errorf("exit %d, %q", code, out)
	}
}

// TestMCP runs `fillgate mcp` as a real subprocess and calls its tool.
func TestMCP(t *testing.T) {
	isolate(t)
	bin, err := builtBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "request_secret" {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	for _, c := range []struct {
		service string
		status  fill.Status
		isErr   bool
	}{{"co.uk", fill.StatusRefused, true}, {"github.com", fill.StatusFailed, true}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_secret", Arguments: map[string]any{"service": c.service}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		var r fill.Result
		if err := json.Unmarshal(b, &r); err != nil || r.Status != c.status || res.IsError != c.isErr {
			t.Errorf("%s: %s (isError %v), %v", c.service, b, res.IsError, err)
		}
	}
}

func TestAuditNeutralisesEscapes(t *testing.T) {
	isolate(t)
	dir := filepath.Join(os.Getenv("XDG_STATE_HOME"), "fillgate")
	if err := audit.Open(dir).Record(fill.AuditEntry{Time: time.Now(), Service: "github.com", Status: fill.StatusOK,
		Agent: fill.Agent{Name: "evil\x1b]0;pwned\x07\u202e", PID: 7}}); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "audit")
	if code != 0 || strings.ContainsAny(out, "\x1b\x07\u202e") || !strings.Contains(out, "github.com") {
		t.Errorf("exit %d, %q", code, out)
	}
}
