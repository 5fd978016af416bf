package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fillgate/fillgate/internal/fill"
)

// buildEnv is the environment the test binary started with, for go
// build: the tests' isolate moves HOME, and with it the Go toolchain's
// default build and module caches, which would make every build start
// from nothing (minutes on two cores).
var buildEnv = os.Environ()

// binDir holds the fillgate binary the tests build; TestMain removes it.
var binDir = sync.OnceValues(func() (string, error) { return os.MkdirTemp("", "fillgate-mcp-test-") })

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := binDir(); err == nil {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// builtBinary builds fillgate once for the tests that run it as a
// subprocess.
var builtBinary = sync.OnceValues(func() (string, error) {
	// tests/windows runs these tests under Wine, where there is no Go
	// toolchain: it names the fillgate.exe it cross-built from this tree.
	if bin := os.Getenv("FILLGATE_TEST_BINARY"); bin != "" {
		return bin, nil
	}
	dir, err := binDir()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "fillgate")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = buildEnv
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %v\n%s", err, out)
	}
	return bin, nil
})

// mcpTool is the one tool fillgate mcp serves.
const mcpTool = "request_secret"

// mcpSession runs `fillgate mcp` as a subprocess of the test, isolated
// from the user's set-up, and connects the Go SDK client to it.
func mcpSession(t *testing.T) *mcp.ClientSession {
	t.Helper()
	isolate(t)
	bin, err := builtBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "mcp")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestMCPToolSchema(t *testing.T) {
	cs := mcpSession(t)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("tools: %+v, %v", tools, err)
	}
	tool := tools.Tools[0]
	raw, _ := json.Marshal(tool.InputSchema)
	var in struct {
		Type       string
		Required   []string
		Additional *bool `json:"additionalProperties"`
		Properties map[string]struct {
			Type      string
			Enum      []string
			MaxLength int
			Pattern   string
			Minimum   *float64
		}
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	p := in.Properties
	if in.Type != "object" || strings.Join(in.Required, ",") != "service" || in.Additional == nil || *in.Additional ||
		p["service"].Type != "string" || p["service"].MaxLength != 260 ||
		strings.Join(p["field"].Enum, ",") != "password,otp,one-time-code,passkey" ||
		strings.Join(p["then"].Enum, ",") != "submit,none" ||
		p["tab"].Type != "string" || p["tab"].Pattern == "" ||
		p["frame"].Type != "integer" || p["frame"].Minimum == nil || *p["frame"].Minimum != 0 {
		t.Errorf("input schema %s", raw)
	}
	out, _ := json.Marshal(tool.OutputSchema)
	if !strings.Contains(string(out), `"no_response"`) {
		t.Errorf("output schema %s", out)
	}
	a := tool.Annotations
	if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint || a.IdempotentHint ||
		a.OpenWorldHint == nil || !*a.OpenWorldHint {
		t.Errorf("annotations %+v", a)
	}
	if tool.Meta["anthropic/requiresUserInteraction"] != true {
		t.Errorf("meta %v", tool.Meta)
	}
	for _, want := range []string{"can take as long", "progress is reported", "isError is true for every status but ok", "then=none"} {
		if !strings.Contains(tool.Description, want) {
			t.Errorf("the description does not say %q", want)
		}
	}
}

// TestMCPArgumentErrors sends bad arguments: each is refused with a clean
// message that never echoes more than a short prefix of what was sent.
func TestMCPArgumentErrors(t *testing.T) {
	cs := mcpSession(t)
	long := strings.Repeat("a", 10_000) + ".example"
	huge := strings.Repeat("b", 1<<20)
	cases := []struct {
		name   string
		args   any
		detail string
	}{
		{"no arguments", nil, "service is required"},
		{"null service", map[string]any{"service": nil}, "service is required"},
		{"empty service", map[string]any{"service": " "}, "service is required"},
		{"number service", map[string]any{"service": 42}, "service must be a string; got a number"},
		{"object service", map[string]any{"service": map[string]any{"x": 1}}, "service must be a string; got an object"},
		{"10 kB service", map[string]any{"service": long}, `service is too long (10008 bytes; at most 260): it starts "aaaaaaaaaaaaaaaaaaaaaaaa"…`},
		{"1 MB service", map[string]any{"service": huge}, "service is too long (1048576 bytes"},
		{"unknown field", map[string]any{"service": "github.com", "field": "username"}, `field "username" is not one of password, otp, one-time-code`},
		{"field type", map[string]any{"service": "github.com", "field": true}, "field must be a string; got a boolean"},
		{"then", map[string]any{"service": "github.com", "then": "later"}, `then "later" is not one of submit, none`},
		{"tab garbage", map[string]any{"service": "github.com", "tab": "<script>\u202e"}, `tab "<script>\u202e" is neither`},
		{"tab too long", map[string]any{"service": "github.com", "tab": huge}, "tab is too long"},
		{"tab zero", map[string]any{"service": "github.com", "tab": 0}, "tab must be a whole number from 1"},
		{"tab array", map[string]any{"service": "github.com", "tab": []int{1}}, "tab must be a string; got an array"},
		{"frame fraction", map[string]any{"service": "github.com", "frame": 1.5}, "frame must be a whole number from 0"},
		{"frame negative", map[string]any{"service": "github.com", "frame": -1}, "frame must be a whole number from 0"},
		{"frame string", map[string]any{"service": "github.com", "frame": "0"}, "frame must be a whole number; got a string"},
		{"unknown argument", map[string]any{"service": "github.com", huge: 1}, `unknown argument "bbbbbbbbbbbbbbbbbbbbbbbb"…`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpTool, Arguments: c.args})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			if len(b) > 1024 {
				t.Fatalf("the result is %d bytes long: it echoes the arguments", len(b))
			}
			var r fill.Result
			sc, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(sc, &r); err != nil || r.Status != fill.StatusRefused || !res.IsError || r.Service != "" {
				t.Fatalf("result %s; want refused, isError, no service", b)
			}
			if !strings.Contains(r.Detail, c.detail) || strings.Contains(r.Detail, "reflect") {
				t.Errorf("detail %q; want it to say %q", r.Detail, c.detail)
			}
			var text fill.Result
			if len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &text) != nil || text != r {
				t.Errorf("the text content is not the result's JSON: %s", b)
			}
		})
	}
	// A call of another tool is answered without quoting its name.
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: huge})
	if err == nil || strings.Contains(err.Error(), "bbbbbbbb") || !strings.Contains(err.Error(), "fillgate has one tool") {
		t.Errorf("another tool: %v", err)
	}
}

// TestMCPNullsMeanNotGiven: an optional argument sent as null is taken as
// absent, so the request goes ahead (and fails here: no browser).
func TestMCPNullsMeanNotGiven(t *testing.T) {
	cs := mcpSession(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpTool, Arguments: map[string]any{
		"service": "github.com", "field": nil, "then": nil, "tab": nil, "frame": nil,
	}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := json.Marshal(res.StructuredContent)
	var r fill.Result
	if err := json.Unmarshal(sc, &r); err != nil || r.Status != fill.StatusFailed || r.Service != "github.com" || !res.IsError {
		t.Errorf("result %s (isError %v)", sc, res.IsError)
	}
}
