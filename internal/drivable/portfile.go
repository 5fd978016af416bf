package drivable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// errWSAConnRefused is how Windows says a connection was refused
// (WSAECONNREFUSED), which syscall.ECONNREFUSED is not there.
const errWSAConnRefused = syscall.Errno(10061)

// The files a live endpoint leaves in a profile.
const (
	// devToolsPortFile is Chromium's (and older Firefox's CDP): the port
	// on its first line. Chromium writes it for --remote-debugging-port and
	// for the chrome://inspect remote-debugging switch (Chrome 144+), which
	// chrome-devtools-mcp --autoConnect reads.
	devToolsPortFile = "DevToolsActivePort"
	// marionettePortFile is Firefox's (115+) while Marionette listens: the
	// port.
	marionettePortFile = "MarionetteActivePort"
	// bidiServerFile is Firefox's while its Remote Agent serves WebDriver
	// BiDi: {"ws_host": ..., "ws_port": ...}.
	bidiServerFile = "WebDriverBiDiServer.json"
)

// endpoints names what each file announces, for a reason.
var endpoints = map[string]string{
	devToolsPortFile:   "a DevTools endpoint",
	marionettePortFile: "Marionette",
	bidiServerFile:     "a WebDriver BiDi endpoint",
}

const (
	// dialTimeout bounds one loopback connection attempt.
	dialTimeout = 200 * time.Millisecond
	// liveFor is how long a connection attempt's outcome is reused.
	liveFor = time.Second
)

// portFile is one file to look at: name in dir.
type portFile struct {
	dir, name string
}

// liveness is the outcome of a connection attempt to a port.
type liveness struct {
	at   time.Time
	addr string // the address that took the connection, "" when none did
}

// liveFile returns the reason f gives when it announces a port that takes
// a connection on loopback, "" when there is no such file or its port
// refuses connections (a stale file). What cannot be told (a file that
// cannot be read, or holds no port) is a reason too.
func (p *Probe) liveFile(ctx context.Context, f portFile) string {
	data, err := readSmall(filepath.Join(f.dir, f.name))
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("fillgate cannot read %s in the browser's profile, so it cannot rule out a live endpoint", f.name)
	}
	port, ok := parsePort(f.name, data)
	if !ok {
		return fmt.Sprintf("%s in the browser's profile holds no port fillgate can read, so it cannot rule out a live endpoint", f.name)
	}
	addr, err := p.reach(ctx, port)
	switch {
	case err != nil:
		return fmt.Sprintf("fillgate could not tell whether the endpoint in %s is live", f.name)
	case addr == "":
		return ""
	}
	return fmt.Sprintf("%s is live on %s (%s)", endpoints[f.name], addr, f.name)
}

// parsePort reads the port a file announces.
func parsePort(name string, data []byte) (int, bool) {
	var port int
	if name == bidiServerFile {
		var s struct {
			Port int `json:"ws_port"`
		}
		if json.Unmarshal(data, &s) != nil {
			return 0, false
		}
		port = s.Port
	} else {
		line, _, _ := bytes.Cut(data, []byte("\n"))
		n, err := strconv.Atoi(string(bytes.TrimSpace(line)))
		if err != nil {
			return 0, false
		}
		port = n
	}
	return port, port > 0 && port <= 65535
}

// reach returns the loopback address on which port takes a connection, or
// "" when neither 127.0.0.1 nor ::1 does. An outcome is reused for
// liveFor. The error is ctx's when it ended before an answer.
func (p *Probe) reach(ctx context.Context, port int) (string, error) {
	now := p.cfg.Now()
	p.mu.Lock()
	l, ok := p.live[port]
	p.mu.Unlock()
	if ok && !now.Before(l.at) && now.Sub(l.at) < liveFor {
		return l.addr, nil
	}
	addr, err := dialLoopback(ctx, port)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	for k, e := range p.live {
		if now.Sub(e.at) >= liveFor || now.Before(e.at) {
			delete(p.live, k)
		}
	}
	p.live[port] = liveness{at: now, addr: addr}
	p.mu.Unlock()
	return addr, nil
}

// dialLoopback connects to port on 127.0.0.1, then on ::1, and closes at
// once. It returns the address that took the connection, "" when both
// refused it (or ::1 is not there), or an error when it cannot tell: ctx
// ended, or a connection attempt neither succeeded nor was refused (it
// timed out).
func dialLoopback(ctx context.Context, port int) (string, error) {
	d := net.Dialer{Timeout: dialTimeout}
	for _, host := range []string{"127.0.0.1", "::1"} {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		c, err := d.DialContext(ctx, "tcp", addr)
		switch {
		case err == nil:
			_ = c.Close()
			return addr, nil
		case ctx.Err() != nil:
			return "", fmt.Errorf("connect to %s: %w", addr, ctx.Err())
		case refused(err) || host == "::1" && unreachable(err):
		default:
			return "", fmt.Errorf("connect to %s: %w", addr, err)
		}
	}
	return "", nil
}

// refused reports whether a connection attempt was refused: nothing
// listens on the port.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, errWSAConnRefused)
}

// unreachable reports whether an address cannot be reached at all (no
// IPv6 loopback on this machine).
func unreachable(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EAFNOSUPPORT)
}
