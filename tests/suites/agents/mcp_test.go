//go:build linux

package agents

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/agenttools"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// fillgateMCP starts `fillgate mcp` with env under d, as an agent's MCP
// client would, and lists its tools (so the SDK client checks every
// result against the tool's output schema).
func fillgateMCP(t testing.TB, ctx context.Context, d *agenttools.Driver, name string, env []string) *agenttools.Server {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := d.Connect(cctx, name, agenttools.Spec{Command: fillgateBin, Args: []string{"mcp"}, Env: vars,
		Stderr: filepath.Join(t.TempDir(), "fillgate-mcp.stderr")})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := s.ListTools(cctx)
	if err != nil || len(tools) != 1 || tools[0].Name != "request_secret" {
		t.Fatalf("fillgate mcp lists %+v, %v", tools, err)
	}
	return s
}

// mcpResult decodes a request_secret result: its structured content, which
// must equal its text content.
func mcpResult(t testing.TB, res *agenttools.Result) fill.Result {
	t.Helper()
	var sc, text fill.Result
	if err := json.Unmarshal(res.StructuredContent, &sc); err != nil || len(res.Content) != 1 ||
		json.Unmarshal([]byte(res.Content[0].Text), &text) != nil || !reflect.DeepEqual(text, sc) {
		t.Fatalf("request_secret returned %d content blocks and structured content that is not a result", len(res.Content))
	}
	if res.IsError != (sc.Status != fill.StatusOK && sc.Status != fill.StatusArmed) {
		t.Errorf("isError %v for status %s; want it set for every status but ok and armed", res.IsError, sc.Status)
	}
	return sc
}

// progressLog records a call's progress notifications.
type progressLog struct {
	mu sync.Mutex
	ps []agenttools.Progress
}

func (l *progressLog) add(p agenttools.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ps = append(l.ps, p)
}

func (l *progressLog) all() []agenttools.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]agenttools.Progress(nil), l.ps...)
}

// progressMessage is a progress notification's message (a phase, or
// whom the request waits for), or "".
func progressMessage(p agenttools.Progress) string {
	if p.Message == nil {
		return ""
	}
	return *p.Message
}

// wantNoLateMessages checks what the driver saw of the server's cancelled
// requests: the one request cancelled, no response for it, and no progress
// for it after the server read the cancellation (one notification may
// have been on its way when the client cancelled), and that the client
// never heard of a request it did not know.
func wantNoLateMessages(t testing.TB, d *agenttools.Driver, rep agenttools.CloseReport) {
	t.Helper()
	if len(rep.Cancelled) != 1 {
		t.Errorf("the client cancelled %d requests, want 1", len(rep.Cancelled))
	}
	if len(rep.LateResponses) != 0 {
		t.Errorf("fillgate mcp answered a cancelled request (ids %s)", rep.LateResponses)
	}
	if len(rep.LateProgress) > 1 {
		t.Errorf("fillgate mcp went on reporting progress for a cancelled request")
	}
	for _, e := range d.ClientErrors() {
		if strings.Contains(e, "unknown message ID") {
			t.Errorf("the SDK client got a response it had not asked for")
		}
	}
}

// TestMCPCancel: the agent's client cancels request_secret while the
// prompt is open (its AbortSignal, so the SDK sends notifications/cancelled):
// no response arrives for that request, and the prompt closes.
func TestMCPCancel(t *testing.T) {
	t.Parallel()
	r := newRig(t, testContext(t, 4*time.Minute), basePolicy)
	d := agenttools.Start(t, nil)
	srv := fillgateMCP(t, r.ctx, d, "fillgate-mcp", r.env)
	tb := r.open(t, r.site1, "/login")
	tb.focus("pw")
	n := r.prompts.Count()
	var progress progressLog // asked for, so there is progress that must stop
	call, err := srv.Start("request_secret", map[string]any{"service": "127.0.0.1"}, agenttools.CallOptions{OnProgress: progress.add})
	if err != nil {
		t.Fatal(err)
	}
	p := r.awaitPrompt(t, n)
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	if err := call.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	var ce *agenttools.CallError
	if _, err := call.Wait(ctx); !errors.As(err, &ce) {
		t.Fatalf("the cancelled call returned %v; want the abort", err)
	}
	r.waitPromptClosed(t, p)
	rep, err := srv.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantNoLateMessages(t, d, rep)
}

// TestMCPTimeouts: the official SDK client's default request timeout is
// 60 s, shorter than the prompt's budget. A client that does not reset it
// on progress gives up at 60 s (and fillgate closes the prompt and sends
// nothing more for it); one that resets it on progress keeps waiting past
// 60 s and gets the result. Both requests wait at once, in one browser,
// for two sites; the one that resets its timeout starts first, so when
// the other gives up it has waited longer than 60 s.
func TestMCPTimeouts(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 5*time.Minute)
	r := newRig(t, ctx, basePolicy+"prompt_budget = \"150s\"\n")
	d := agenttools.Start(t, nil)
	patient := fillgateMCP(t, ctx, d, "fillgate-mcp-reset", r.env)
	plain := fillgateMCP(t, ctx, d, "fillgate-mcp-default", r.env)

	secret := r.Secret(t)
	tb2 := r.open(t, r.site2, "/login")
	tb2.focus("pw")
	n := r.prompts.Count()
	var kept progressLog
	started := time.Now()
	waiting, err := patient.Start("request_secret", map[string]any{"service": "127.0.0.2"},
		agenttools.CallOptions{ResetTimeoutOnProgress: true, OnProgress: kept.add})
	if err != nil {
		t.Fatal(err)
	}
	pKept := r.awaitPrompt(t, n)

	tb1 := r.open(t, r.site1, "/login")
	tb1.focus("pw")
	var dropped progressLog
	givesUp, err := plain.Start("request_secret", map[string]any{"service": "127.0.0.1"}, agenttools.CallOptions{OnProgress: dropped.add})
	if err != nil {
		t.Fatal(err)
	}
	pDropped := r.awaitPrompt(t, n+1)

	var ce *agenttools.CallError
	_, err = givesUp.Wait(ctx)
	if !errors.As(err, &ce) || ce.Code == nil || *ce.Code != agenttools.CodeRequestTimeout || ce.MS < 60_000 || ce.MS > 90_000 {
		t.Fatalf("the client without resetTimeoutOnProgress: %v after %d ms; want its request timeout at 60 s", err, ce.MS)
	}
	r.waitPromptClosed(t, pDropped) // fillgate dropped that request
	if len(dropped.all()) < 3 {
		t.Errorf("%d progress notifications in 60 s; want them every few seconds", len(dropped.all()))
	}

	select {
	case <-waiting.Done():
		res, err := waiting.Wait(ctx)
		t.Fatalf("the client with resetTimeoutOnProgress gave up too: %v, %v", res, err)
	default:
	}
	if time.Since(started) < 60*time.Second || r.prompts.Window(pKept.id).Closed {
		t.Fatalf("the waiting request has not outlived the SDK's default timeout with its prompt open")
	}
	pKept.send(secret)
	res, err := waiting.Wait(ctx)
	if err != nil {
		t.Fatalf("the client with resetTimeoutOnProgress: %v", err)
	}
	leakscan.Bytes(t, secret, "request_secret's result", []byte(res.Text()))
	if got := mcpResult(t, res); got.Status != fill.StatusOK || got.Origin != r.site2.origin || res.MS < 60_000 {
		t.Errorf("result %+v after %d ms; want ok after more than 60 s", got, res.MS)
	}
	ps := kept.all()
	for i := 1; i < len(ps); i++ {
		if gap := ps[i].MS - ps[i-1].MS; gap > 10_000 {
			t.Errorf("%d ms between two progress notifications (%q, then %q); want at most 10 s", gap, progressMessage(ps[i-1]), progressMessage(ps[i]))
		}
		if ps[i].Progress <= ps[i-1].Progress {
			t.Errorf("progress went from %v to %v; it must increase", ps[i-1].Progress, ps[i].Progress)
		}
	}
	if len(ps) == 0 || res.MS-ps[len(ps)-1].MS > 10_000 {
		last := ""
		if len(ps) > 0 {
			last = progressMessage(ps[len(ps)-1])
		}
		t.Errorf("no progress in the last 10 s before the result (the last: %q)", last)
	}

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	rep, err := plain.Close(cctx)
	if err != nil {
		t.Fatal(err)
	}
	wantNoLateMessages(t, d, rep)
	if rep, err = patient.Close(cctx); err != nil || len(rep.Cancelled) != 0 {
		t.Errorf("closing the patient client: %+v, %v", rep, err)
	}
	leakscan.Agent(t, secret, "the MCP clients' output", d.Output())
	r.scanFillgate(t, secret)
}

// TestMCPArgumentsThroughTheSDK sends request_secret bad arguments as an
// agent's SDK client would: each is refused at once with a clean message,
// isError set, and nothing of a long argument echoed back.
func TestMCPArgumentsThroughTheSDK(t *testing.T) {
	t.Parallel()
	ctx := testContext(t, 2*time.Minute)
	root := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "FILLGATE_CDP_URL=http://127.0.0.1:9"}
	for _, k := range []string{"HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		d := filepath.Join(root, strings.ToLower(k))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, k+"="+d)
	}
	d := agenttools.Start(t, nil)
	srv := fillgateMCP(t, ctx, d, "fillgate-mcp", env)
	long := strings.Repeat("x", 10_000)
	huge := strings.Repeat("y", 1<<20)
	for _, c := range []struct {
		name   string
		args   map[string]any
		detail string
	}{
		{"null service", map[string]any{"service": nil}, "service is required"},
		{"number service", map[string]any{"service": 7}, "service must be a string; got a number"},
		{"10 kB service", map[string]any{"service": long}, "service is too long (10000 bytes"},
		{"1 MB service", map[string]any{"service": huge}, "service is too long (1048576 bytes"},
		{"field not in the enum", map[string]any{"service": "github.com", "field": "pin"}, "is not one of password, otp"},
		{"then not in the enum", map[string]any{"service": "github.com", "then": "later"}, "is not one of submit, none"},
		{"frame not a whole number", map[string]any{"service": "github.com", "frame": 0.5}, "frame must be a whole number"},
		{"tab not an id", map[string]any{"service": "github.com", "tab": "tab-1"}, "is neither an extension tab id"},
	} {
		res, err := srv.Call(ctx, "request_secret", c.args, agenttools.CallOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		raw, _ := json.Marshal(res)
		got := mcpResult(t, res)
		if got.Status != fill.StatusRefused || !res.IsError || !strings.Contains(got.Detail, c.detail) || len(raw) > 1024 ||
			strings.Contains(string(raw), strings.Repeat("x", 64)) || strings.Contains(string(raw), strings.Repeat("y", 64)) {
			t.Errorf("%s: %d-byte result %s; want refused saying %q, no echo", c.name, len(raw), firstBytes(raw, 400), c.detail)
		}
	}
	// A well-formed request without a browser: failed, isError.
	res, err := srv.Call(ctx, "request_secret", map[string]any{"service": "github.com", "field": "otp", "then": "none"}, agenttools.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := mcpResult(t, res); got.Status != fill.StatusFailed || got.Service != "github.com" {
		t.Errorf("result %+v; want failed (no browser)", got)
	}
}

func firstBytes(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
