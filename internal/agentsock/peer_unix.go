//go:build !windows

package agentsock

import (
	"fmt"
	"net"
	"syscall"
)

// checkPeer makes sure the process on the other end of c runs as this
// process's user and returns its pid. It works on either end of a
// connection.
func checkPeer(c net.Conn) (pid int, err error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("peer credentials: a %T has no socket", c)
	}
	raw, err := sc.SyscallConn()
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

// checkHost makes sure the host on the other end of a client's
// connection runs as this user. The socket directory is the user's own
// (0700), so what listens in it is the user's.
func checkHost(c net.Conn) error {
	_, err := checkPeer(c)
	return err
}
