//go:build linux

package agents

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fillgateBin is the fillgate binary TestMain builds from this module. It
// is set once, before any test runs, and never changed.
var fillgateBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "fillgate-agents-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "agents: temp dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	fillgateBin = filepath.Join(dir, "fillgate")
	build := exec.Command("go", "build", "-o", fillgateBin, "github.com/fillgate/fillgate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "agents: build fillgate: %v\n", err)
		return 1
	}
	return m.Run()
}
