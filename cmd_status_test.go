//go:build !windows

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
)

// statusHost is a host on the agent socket that only answers status.
type statusHost struct{ st agentsock.HostStatus }

func (h statusHost) serve(_ context.Context, c *agentsock.Conn) {
	st := h.st
	switch c.Request().Op {
	case agentsock.OpStatus:
		c.Answer(agentsock.Message{Type: agentsock.TypeStatus, Status: &st})
	case agentsock.OpPeek:
		c.Answer(agentsock.Message{Type: agentsock.TypePeek, Status: &st, Active: &agentsock.ActiveTab{Field: fill.FieldNone}})
	default:
		c.Result(fill.Result{Status: fill.StatusRefused})
	}
}

// serveStatus runs a host that reports st in the isolated runtime dir.
func serveStatus(t *testing.T, st agentsock.HostStatus) {
	t.Helper()
	dir, err := dirs.Runtime(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	l, err := agentsock.Listen(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = agentsock.Serve(ctx, l, statusHost{st}.serve); close(done) }()
	t.Cleanup(func() { cancel(); <-done; l.Close() })
}

func TestStatusSaysWherePromptsOpen(t *testing.T) {
	isolate(t)
	st := agentsock.HostStatus{Version: "0.1.0", PID: 4242, Browser: "chromium", BrowserName: "chromium", Profile: "/p",
		Extension: agentsock.ExtensionStatus{Connected: true, Version: "0.1.0"},
		Drive:     &fill.Drive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port", "a DevTools endpoint is live on 127.0.0.1:9222 (DevToolsActivePort)"}}}
	serveStatus(t, st)

	code, out, errOut := runCLI(t, "status")
	if code != 0 {
		t.Fatalf("status exited %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{
		"PROMPTS\n",
		"on your desktop (the browser can be driven)\n",
		"chromium (pid 4242) can be driven by a program: the browser was started with --remote-debugging-port; a DevTools endpoint is live on 127.0.0.1:9222 (DevToolsActivePort).\n" +
			"  Prompts for it open as a native dialog on your desktop, outside the browser, and logins for it happen in fillgate's clean room",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status printed\n%s\nwithout %q", out, want)
		}
	}

	code, out, _ = runCLI(t, "status", "--json")
	var hs []agentsock.HostStatus
	if code != 0 || json.Unmarshal([]byte(out), &hs) != nil || len(hs) != 1 || hs[0].Drive == nil || !hs[0].Drive.Driven || len(hs[0].Drive.Reasons) != 2 {
		t.Fatalf("status --json exited %d and printed %s", code, out)
	}
}

func TestStatusWithPromptBrowserWarns(t *testing.T) {
	isolate(t)
	path, err := dirs.PolicyFile(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("prompt = \"browser\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A host that does not report its prompt mode: the local policy's applies.
	serveStatus(t, agentsock.HostStatus{Version: "0.1.0", PID: 4242, BrowserName: "chromium",
		Extension: agentsock.ExtensionStatus{Connected: true, Version: "0.1.0"},
		Drive:     &fill.Drive{Driven: true, Reasons: []string{"navigator.webdriver is on (automation)"}}})
	_, out, _ := runCLI(t, "status")
	for _, want := range []string{"in the browser, which a program can drive\n", `Prompts for it still open in the browser (prompt = "browser" in your policy), where that program could read or answer them`} {
		if !strings.Contains(out, want) {
			t.Errorf("status printed\n%s\nwithout %q", out, want)
		}
	}
}

func TestPromptsWhere(t *testing.T) {
	driven, free := &fill.Drive{Driven: true}, &fill.Drive{}
	cases := []struct {
		d    *fill.Drive
		mode string
		want string
	}{
		{free, policy.PromptAuto, "in the browser"},
		{driven, policy.PromptAuto, "on your desktop (the browser can be driven)"},
		{nil, policy.PromptAuto, "(the host does not say)"},
		{free, policy.PromptNative, "on your desktop"},
		{nil, policy.PromptNative, "on your desktop"},
		{driven, policy.PromptBrowser, "in the browser, which a program can drive"},
		{free, policy.PromptBrowser, "in the browser"},
	}
	for _, c := range cases {
		if got := promptsWhere(c.d, c.mode); got != c.want {
			t.Errorf("promptsWhere(%+v, %s) = %q; want %q", c.d, c.mode, got, c.want)
		}
	}
	if n := driveNote(agentsock.HostStatus{Drive: free}, policy.PromptAuto); n != "" {
		t.Errorf("a note for a browser nothing drives: %q", n)
	}
	if n := driveNote(agentsock.HostStatus{PID: 1, BrowserName: "x", Drive: &fill.Drive{Driven: true, Reasons: []string{"a\x1b[2Jb"}}}, policy.PromptAuto); strings.Contains(n, "\x1b") {
		t.Errorf("a reason's control characters reach the terminal: %q", n)
	}
}

// TestStatusSaysASecondConnectionWasRefused: a host that refused a second
// native-messaging connection for its browser and profile (a page of the
// extension in a tab playing the extension) says so in the audit log, and
// `fillgate status` shows it under the table for a day.
func TestStatusSaysASecondConnectionWasRefused(t *testing.T) {
	isolate(t)
	st := agentsock.HostStatus{Version: "0.1.0", PID: 4242, Browser: "chromium", BrowserName: "chromium", Profile: "/p",
		Extension: agentsock.ExtensionStatus{Connected: true, Version: "0.1.0"}}
	serveStatus(t, st)
	stateDir, err := dirs.State(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	log := audit.Open(stateDir)
	for _, e := range []fill.AuditEntry{
		{Time: time.Now().Add(-48 * time.Hour), Status: fill.StatusRefused, Detail: "an old one", Event: fill.EventSecondConnection},
		{Time: time.Now(), Status: fill.StatusOK, Service: "github.com", Detail: "a fill"},
		{Time: time.Now(), Status: fill.StatusRefused, Detail: "refused a second native-messaging connection from chromium", Event: fill.EventSecondConnection},
	} {
		if err := log.Record(e); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, "status")
	if code != 0 {
		t.Fatalf("status exited %d: %s%s", code, out, errOut)
	}
	if strings.Count(out, "A second connection to the host was refused at") != 1 || !strings.Contains(out, "from chromium") || strings.Contains(out, "an old one") {
		t.Errorf("status printed\n%s\nwant the one refusal of the last day", out)
	}
}
