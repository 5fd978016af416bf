//go:build linux

package undriven

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// errNoOwner: no process of the browser's holds the connection (yet).
var errNoOwner = errors.New("no process of the browser holds the connection")

// connFromBrowser reports whether the client end of the loopback TCP
// connection from client to server (both ip:port, IPv4) is held by the
// person's browser: the browser process browserPID or one under it (its
// network service), with nothing but the browser's own program between
// them. A clean room is a headless browser the native host starts, so its
// connections are under browserPID too, but under the host, another
// program: they are not the person's browser's.
func connFromBrowser(client, server string, browserPID int) (bool, error) {
	inode, err := clientInode(client, server)
	if err != nil {
		return false, err
	}
	exe := func(pid int) string {
		l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
		return l
	}
	browser := exe(browserPID)
	if browser == "" {
		return false, fmt.Errorf("the browser (pid %d) does not run", browserPID)
	}
	parents := parentsOf()
	for pid := range parents {
		if !under(pid, browserPID, parents) || !holds(pid, inode) {
			continue
		}
		for p := pid; p != browserPID; p = parents[p] {
			if exe(p) != browser {
				return false, nil
			}
		}
		return true, nil
	}
	return false, errNoOwner
}

// clientInode finds, in /proc/net/tcp, the socket inode of the end of the
// connection whose local address is client and remote address server.
func clientInode(client, server string) (string, error) {
	local, err := procAddr(client)
	if err != nil {
		return "", err
	}
	remote, err := procAddr(server)
	if err != nil {
		return "", err
	}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ...
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && fs[1] == local && fs[2] == remote && fs[9] != "0" {
			return fs[9], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no connection from %s to %s in /proc/net/tcp: %w", client, server, errNoOwner)
}

// procAddr writes the IPv4 address addr (ip:port) as /proc/net/tcp does:
// the address's four bytes in host (little-endian) order, then the port,
// in upper-case hex.
func procAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	ip := net.ParseIP(host).To4()
	n, err := strconv.Atoi(port)
	if ip == nil || err != nil {
		return "", fmt.Errorf("not an IPv4 address and port: %q", addr)
	}
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], n), nil
}

// parentsOf maps every running process to its parent.
func parentsOf() map[int]int {
	out := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		fs := strings.Fields(string(b[i+1:]))
		if len(fs) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fs[1]); err == nil {
			out[pid] = ppid
		}
	}
	return out
}

// under reports whether pid is root or one of its descendants.
func under(pid, root int, parents map[int]int) bool {
	for p := pid; p > 1; p = parents[p] {
		if p == root {
			return true
		}
	}
	return pid == root
}

// holds reports whether process pid has the socket inode open.
func holds(pid int, inode string) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	want := "socket:[" + inode + "]"
	for _, fd := range fds {
		if l, err := os.Readlink(dir + "/" + fd.Name()); err == nil && l == want {
			return true
		}
	}
	return false
}
