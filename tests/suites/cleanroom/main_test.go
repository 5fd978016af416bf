//go:build linux

package cleanroom

import (
	"os"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/fgbin"
)

// fillgateBin is the fillgate binary TestMain builds; set before any test
// runs and never changed.
var fillgateBin string

func TestMain(m *testing.M) { os.Exit(fgbin.Main(m, "cleanroom", &fillgateBin)) }
