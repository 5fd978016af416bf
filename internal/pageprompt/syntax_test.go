//go:build !windows

// Not on Windows: tests/windows runs under Wine, whose prefix has no
// Node.js (as for extension/'s test), and the script is the same on every
// OS.

package pageprompt

import (
	"os/exec"
	"strings"
	"testing"
)

// TestScriptParses has Node.js parse the page's script as the browser gets
// it, so a script that would not even load fails here, at once, rather than
// as a prompt that never takes an answer in the browser tests.
func TestScriptParses(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: tests/setup installs what the tests need") // never skipped
	}
	cmd := exec.Command(node, "--check", "-")
	cmd.Stdin = strings.NewReader(pageScript)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("page/script.js does not parse: %s", out)
	}
}
