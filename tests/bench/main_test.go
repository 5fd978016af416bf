//go:build linux

// Package bench is fillgate's benchmark of issue 12: every machine step of
// a fill on both paths, side by side with the references, in one run on
// one browser (BenchmarkFigures). tests/bench/run runs it and writes
// RESULTS.md; tests/run runs it as a smoke (two iterations, no
// thresholds).
package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fillgateBin is the fillgate binary TestMain builds from this module.
var fillgateBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fillgate-bench-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
	fillgateBin = filepath.Join(dir, "fillgate")
	build := exec.Command("go", "build", "-o", fillgateBin, "github.com/fillgate/fillgate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if build.Run() == nil {
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
