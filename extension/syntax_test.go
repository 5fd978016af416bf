package extension

import (
	"io/fs"
	"os/exec"
	"strings"
	"testing"
)

// TestScriptsParse has Node.js parse every script of the extension (the
// in-page function as the function expression the CDP path hands to the
// browser), so a script that would not even load fails here, at once,
// rather than as a worker that never connects in the browser tests.
func TestScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: tests/setup installs what the tests need") // never skipped
	}
	scripts, err := fs.Glob(Files, "*.js")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, name := range scripts {
		src, err := fs.ReadFile(Files, name)
		if err != nil {
			t.Fatal(err)
		}
		code := string(src)
		if name == "inpage.js" {
			code = "(" + strings.TrimSuffix(strings.TrimSpace(code), ";") + "\n);"
		}
		cmd := exec.Command(node, "--check", "-")
		cmd.Stdin = strings.NewReader(code)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %s", name, out)
		}
	}
}
