//go:build linux

package agents

import (
	"os"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/fgbin"
)

// fillgateBin is the fillgate binary TestMain builds from this module. It
// is set once, before any test runs, and never changed.
var fillgateBin string

func TestMain(m *testing.M) { os.Exit(fgbin.Main(m, "agents", &fillgateBin)) }
