package agentid

import (
	"os"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/child"
)

func TestClient(t *testing.T) {
	for in, want := range map[string]string{
		"fillgate fill":           "fillgate fill",
		"fillgate mcp":            "fillgate mcp",
		"fillgate demo":           "fillgate demo",
		"evil\x1b[2J\nname\x00":   "",
		"fillgate fill, trust me": "",
		strings.Repeat("é", 100):  "",
	} {
		if got := Client(in); got != want {
			t.Errorf("Client(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestForwardedOnlyFromFillgate(t *testing.T) {
	self := Self()
	named := &fill.Agent{Name: "claude", PID: 42, Via: "made up"}
	if a, ok := Forwarded(named, os.Getpid(), self); !ok || a.Name != "claude" || a.PID != 42 || a.Via != "" {
		t.Errorf("from this executable: %+v, %v; want the agent, with its made-up client dropped", a, ok)
	}
	// A copy of this binary under another name: neither fillgate nor this
	// executable.
	other := startIdle(t, child.CopySelf(t, t.TempDir(), "other"+exeSuffix()))
	if _, ok := Forwarded(named, other, self); ok {
		t.Error("a peer that is not fillgate named the agent")
	}
	if _, ok := Forwarded(nil, os.Getpid(), self); ok {
		t.Error("a request without an agent counted as forwarded")
	}
	if _, ok := Forwarded(named, os.Getpid(), ""); ok {
		t.Error("an agent was taken without knowing this executable")
	}
}

// TestOfIsThisProcessesAgent: the CDP path's agent, behind its own pid,
// skips this executable: the test's parent.
func TestOfIsThisProcessesAgent(t *testing.T) {
	a := Of(os.Getpid())
	want := os.Getppid()
	if want == 0 {
		want = os.Getpid() // no parent to walk to (Wine, started from Linux)
	}
	if a.PID != want || a.PeerPID != os.Getpid() {
		t.Errorf("Of(this process) = %+v; want the parent %d", a, want)
	}
}
