package agentsock

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxSunPath is the longest socket path: sun_path holds 108 bytes, and we
// keep room for the NUL.
const maxSunPath = 107

// peerOf reads SO_PEERCRED: the uid and pid the peer had when it connected
// (or, for a client, when the host called listen).
func peerOf(fd uintptr) (int, error) {
	cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	if int(cred.Uid) != os.Geteuid() {
		return 0, fmt.Errorf("%w (uid %d)", errForeignPeer, cred.Uid)
	}
	return int(cred.Pid), nil
}
