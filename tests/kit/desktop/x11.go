//go:build unix

package desktop

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// sendDeleteWindow sends window a WM_DELETE_WINDOW client message, as a
// window manager does when the person clicks the close button. It speaks
// the few X11 requests this needs over the display's Unix socket, so no
// window manager (and no program that would destroy or kill the window
// instead) is needed.
func sendDeleteWindow(ctx context.Context, display string, window uint32) error {
	n, _, _ := strings.Cut(strings.TrimPrefix(display, ":"), ".")
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "unix", "/tmp/.X11-unix/X"+n)
	if err != nil {
		return fmt.Errorf("connect to display %s: %w", display, err)
	}
	defer conn.Close()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	_ = conn.SetDeadline(deadline)
	x := &xconn{rw: conn}
	if err := x.setup(); err != nil {
		return err
	}
	protocols, err := x.internAtom("WM_PROTOCOLS")
	if err != nil {
		return err
	}
	deleteWindow, err := x.internAtom("WM_DELETE_WINDOW")
	if err != nil {
		return err
	}
	// SendEvent: propagate false, the window, no event mask, and a
	// ClientMessage of format 32: WM_PROTOCOLS, [WM_DELETE_WINDOW,
	// CurrentTime].
	req := make([]byte, 44)
	req[0] = 25
	le.PutUint16(req[2:], 11)
	le.PutUint32(req[4:], window)
	ev := req[12:]
	ev[0], ev[1] = 33, 32
	le.PutUint32(ev[4:], window)
	le.PutUint32(ev[8:], protocols)
	le.PutUint32(ev[12:], deleteWindow)
	if _, err := conn.Write(req); err != nil {
		return err
	}
	// GetInputFocus: a round trip, so an error for SendEvent (a window
	// that is gone) comes back before its reply.
	if _, err := conn.Write([]byte{43, 0, 1, 0}); err != nil {
		return err
	}
	_, err = x.reply()
	return err
}

// le is X11's byte order as this client announces it.
var le = binary.LittleEndian

// xconn is a minimal X11 client connection.
type xconn struct {
	rw io.ReadWriter
}

// setup sends the connection setup (no authorization: Xvfb started
// without -auth takes local clients) and reads the server's answer.
func (x *xconn) setup() error {
	if _, err := x.rw.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		return err
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(x.rw, head); err != nil {
		return fmt.Errorf("X11 setup: %w", err)
	}
	rest := make([]byte, 4*int(le.Uint16(head[6:])))
	if _, err := io.ReadFull(x.rw, rest); err != nil {
		return fmt.Errorf("X11 setup: %w", err)
	}
	if head[0] != 1 {
		reason := rest
		if int(head[1]) <= len(rest) {
			reason = rest[:head[1]]
		}
		return fmt.Errorf("the X server refused the connection: %s", reason)
	}
	return nil
}

// internAtom returns the atom named name, creating it if need be.
func (x *xconn) internAtom(name string) (uint32, error) {
	pad := (4 - len(name)%4) % 4
	req := make([]byte, 8+len(name)+pad)
	req[0] = 16
	le.PutUint16(req[2:], uint16(len(req)/4))
	le.PutUint16(req[4:], uint16(len(name)))
	copy(req[8:], name)
	if _, err := x.rw.Write(req); err != nil {
		return 0, err
	}
	r, err := x.reply()
	if err != nil {
		return 0, fmt.Errorf("InternAtom %s: %w", name, err)
	}
	return le.Uint32(r[8:]), nil
}

// reply reads packets until a reply, and returns it, or the X error that
// came first.
func (x *xconn) reply() ([]byte, error) {
	var xerr error
	for {
		p := make([]byte, 32)
		if _, err := io.ReadFull(x.rw, p); err != nil {
			return nil, err
		}
		switch p[0] {
		case 0:
			if xerr == nil {
				xerr = fmt.Errorf("X error %d (resource %d, request %d)", p[1], le.Uint32(p[4:]), p[10])
			}
		case 1:
			if extra := le.Uint32(p[4:]); extra > 0 {
				more := make([]byte, 4*int(extra))
				if _, err := io.ReadFull(x.rw, more); err != nil {
					return nil, err
				}
				p = append(p, more...)
			}
			if xerr != nil {
				return nil, xerr
			}
			return p, nil
		}
		// Events: none were asked for; skip any.
	}
}
