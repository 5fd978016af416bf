//go:build linux

// Package bench is fillgate's benchmark of issue 12: every machine step of
// a fill on both paths, side by side with the references, in one run on
// one browser (BenchmarkFigures). tests/bench/run runs it and writes
// RESULTS.md; tests/run runs it as a smoke (two iterations, no
// thresholds).
package bench

import (
	"os"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/fgbin"
)

// fillgateBin is the fillgate binary TestMain builds from this module.
var fillgateBin string

func TestMain(m *testing.M) { os.Exit(fgbin.Main(m, "bench", &fillgateBin)) }
