package cdp

import (
	"bufio"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// listenerOwner finds the TCP socket listening on ip:port (or on the
// wildcard address) in /proc/net/tcp{,6} and reports its owner's uid and
// whether that is this process's user. known is false when no such socket
// is listed.
func listenerOwner(ip netip.Addr, port uint16) (uid int, mine, known bool) {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if uid, ok := scanListeners(f, ip, port); ok {
			return uid, uid == os.Getuid(), true
		}
	}
	return 0, false, false
}

// scanListeners reads one /proc/net/tcp-style table.
func scanListeners(path string, ip netip.Addr, port uint16) (int, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || fields[3] != "0A" { // 0A: LISTEN
			continue
		}
		addr, p, ok := parseProcAddr(fields[1])
		if !ok || p != port {
			continue
		}
		if addr.Unmap() != ip && !addr.IsUnspecified() {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			continue
		}
		return uid, true
	}
	return 0, false
}

// parseProcAddr decodes "0100007F:2406": the address as 32-bit words in
// host byte order (little-endian here), the port in hex.
func parseProcAddr(s string) (netip.Addr, uint16, bool) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.Addr{}, 0, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.Addr{}, 0, false
	}
	raw, err := hex.DecodeString(a)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.Addr{}, 0, false
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return addr, uint16(port), true
}
