package agentsock

import (
	"errors"
	"fmt"
	"net"
)

// errForeignPeer means the process on the other end runs as another user.
var errForeignPeer = errors.New("the peer runs as another user")

// checkPeer makes sure the process on the other end of c runs as this
// process's user and returns its pid. It works on either end of a
// connection.
func checkPeer(c *net.UnixConn) (pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	var perr error
	if err := raw.Control(func(fd uintptr) { pid, perr = peerOf(fd) }); err != nil {
		return 0, fmt.Errorf("peer credentials: %w", err)
	}
	if perr != nil {
		return 0, fmt.Errorf("peer credentials: %w", perr)
	}
	return pid, nil
}

// checkPathLen gives a clear error for a socket path the OS cannot hold in
// sockaddr_un's sun_path.
func checkPathLen(path string) error {
	if len(path) > maxSunPath {
		return fmt.Errorf("socket path %s is %d bytes, over the %d this OS allows: use a shorter runtime directory (XDG_RUNTIME_DIR or TMPDIR)", path, len(path), maxSunPath)
	}
	return nil
}
