package agentsock

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// maxSunPath is the longest socket path: macOS's sun_path holds 104 bytes,
// NUL included.
const maxSunPath = 103

// xucredVersion is XUCRED_VERSION from <sys/ucred.h>.
const xucredVersion = 0

// peerOf reads LOCAL_PEERCRED (the peer's effective uid) and LOCAL_PEERPID.
func peerOf(fd uintptr) (int, error) {
	cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, fmt.Errorf("LOCAL_PEERCRED: %w", err)
	}
	if cred.Version != xucredVersion {
		return 0, fmt.Errorf("LOCAL_PEERCRED: unknown xucred version %d", cred.Version)
	}
	if int(cred.Uid) != os.Geteuid() {
		return 0, fmt.Errorf("%w (uid %d)", errForeignPeer, cred.Uid)
	}
	pid, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return 0, fmt.Errorf("LOCAL_PEERPID: %w", err)
	}
	return pid, nil
}
