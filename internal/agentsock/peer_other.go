//go:build !linux && !darwin && !windows

package agentsock

import (
	"errors"
	"fmt"
)

// maxSunPath is the BSDs' limit: 104 bytes, NUL included.
const maxSunPath = 103

// peerOf refuses every peer: this OS's credential call is not wired up, and
// a socket that cannot check its peer must not serve it.
func peerOf(fd uintptr) (int, error) {
	return 0, fmt.Errorf("peer credentials on this OS: %w", errors.ErrUnsupported)
}
