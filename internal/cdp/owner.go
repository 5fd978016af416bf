package cdp

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// checkListenerOwner refuses a loopback endpoint whose listening socket
// belongs to another user: loopback TCP is open to every local user, so
// anyone could listen on 127.0.0.1:9222 and play the browser, reporting
// any origin and receiving the value. hostport is a dial address
// ("127.0.0.1:9222"). Where the OS cannot tell, it allows.
func checkListenerOwner(hostport string) error {
	host, portStr, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil // no explicit port: the HTTP client's default; nothing to look up
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.Unmap().IsLoopback() {
		return nil
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil
	}
	uid, mine, known := listenerOwner(ip.Unmap(), uint16(port))
	if known && !mine {
		return fmt.Errorf("the listener on port %d belongs to uid %d, not to you", port, uid)
	}
	return nil
}
