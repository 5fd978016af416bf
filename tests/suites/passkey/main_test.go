//go:build linux

package passkey

import (
	"os"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/fgbin"
)

// fillgateBin is the fillgate binary TestMain builds from this module.
var fillgateBin string

func TestMain(m *testing.M) { os.Exit(fgbin.Main(m, "passkey", &fillgateBin)) }
