package agentsock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// pipeBuffer is each direction's buffer of a pipe instance: a request or
// message line fits (MaxRequest, maxMessage bound them; bigger ones block
// until read, as on a socket).
const pipeBuffer = 64 << 10

// pipeListener is a net.Listener on a named pipe that admits only this
// user. Its first instance is created with FILE_FLAG_FIRST_PIPE_INSTANCE,
// so it fails when anyone already holds the name (a host, or a squatter
// waiting for clients), and it always keeps one instance of its own
// waiting, made before a connected one is handed out: the name never
// lapses while it listens, for someone else to take.
//
// It is ours and not go-winio's ListenPipe because that one's first
// instance is a placeholder opened without read or write access, which
// Windows keeps from clients but Wine connects the first client to, where
// nobody ever answers it. Connections are go-winio's files (overlapped
// I/O, deadlines), and clients dial with go-winio.
type pipeListener struct {
	path string
	sa   *windows.SecurityAttributes
	stop windows.Handle // a manual-reset event Close sets

	mu       sync.Mutex
	closed   bool
	next     windows.Handle // the instance the next Accept waits on, or 0
	inAccept sync.WaitGroup
	once     sync.Once
}

// listenPipe creates the first instance of the pipe at path, with a
// security descriptor that admits only this process's user.
func listenPipe(path string) (*pipeListener, error) {
	sid, err := userSID()
	if err != nil {
		return nil, err
	}
	// Owner: the user. DACL: protected (nothing inherited), one entry,
	// full access for the user. No entry for SYSTEM or Administrators:
	// nothing but the user's own programs has a reason to ask for a
	// fill.
	sd, err := windows.SecurityDescriptorFromString("O:" + sid.String() + "D:P(A;;GA;;;" + sid.String() + ")")
	if err != nil {
		return nil, fmt.Errorf("the pipe's security descriptor: %w", err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	h, err := createInstance(path, sa, true)
	if err != nil {
		return nil, err
	}
	stop, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	return &pipeListener{path: path, sa: sa, stop: stop, next: h}, nil
}

// errPipeTaken means a pipe of that name exists already.
var errPipeTaken = errors.New("another process holds a pipe of that name")

func createInstance(path string, sa *windows.SecurityAttributes, first bool) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, fmt.Errorf("listening on %s: %w", path, err)
	}
	flags := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	h, err := windows.CreateNamedPipe(name, flags,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		windows.PIPE_UNLIMITED_INSTANCES, pipeBuffer, pipeBuffer, 0, sa)
	if first && errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return 0, fmt.Errorf("listening on %s: %w", path, errPipeTaken)
	}
	if err != nil {
		return 0, fmt.Errorf("listening on %s: %w", path, err)
	}
	return h, nil
}

// Accept waits for a client on the pipe's waiting instance.
func (l *pipeListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, net.ErrClosed
	}
	l.inAccept.Add(1)
	l.mu.Unlock()
	defer l.inAccept.Done()
	for {
		h, err := l.take()
		if err != nil {
			return nil, err
		}
		err = l.connect(h)
		if errors.Is(err, windows.ERROR_NO_DATA) {
			// The client came and went before we saw it.
			windows.CloseHandle(h)
			continue
		}
		if err != nil {
			windows.CloseHandle(h)
			return nil, err
		}
		l.prepare()
		f, err := winio.NewOpenFile(h)
		if err != nil {
			windows.CloseHandle(h)
			return nil, fmt.Errorf("accepting on %s: %w", l.path, err)
		}
		return &pipeConn{pipeFile: f.(pipeFile), path: l.path}, nil
	}
}

// take returns the waiting instance, or makes one.
func (l *pipeListener) take() (windows.Handle, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, net.ErrClosed
	}
	if h := l.next; h != 0 {
		l.next = 0
		return h, nil
	}
	return createInstance(l.path, l.sa, false)
}

// prepare makes the instance the next Accept will wait on, so that the
// pipe always has one of ours; if it cannot, the next Accept tries again.
func (l *pipeListener) prepare() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed || l.next != 0 {
		return
	}
	if h, err := createInstance(l.path, l.sa, false); err == nil {
		l.next = h
	}
}

// connect waits until a client opens instance h or the listener closes.
func (l *pipeListener) connect(h windows.Handle) error {
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return fmt.Errorf("accepting on %s: %w", l.path, err)
	}
	defer windows.CloseHandle(ev)
	ov := &windows.Overlapped{HEvent: ev}
	err = windows.ConnectNamedPipe(h, ov)
	switch {
	case err == nil, errors.Is(err, windows.ERROR_PIPE_CONNECTED):
		return nil
	case !errors.Is(err, windows.ERROR_IO_PENDING):
		return fmt.Errorf("accepting on %s: %w", l.path, err)
	}
	which, err := windows.WaitForMultipleObjects([]windows.Handle{ev, l.stop}, false, windows.INFINITE)
	var n uint32
	if err != nil || which != windows.WAIT_OBJECT_0 {
		_ = windows.CancelIoEx(h, ov)
		_ = windows.GetOverlappedResult(h, ov, &n, true)
		if err != nil {
			return fmt.Errorf("accepting on %s: %w", l.path, err)
		}
		return net.ErrClosed
	}
	if err := windows.GetOverlappedResult(h, ov, &n, false); err != nil {
		if errors.Is(err, windows.ERROR_NO_DATA) {
			return err
		}
		return fmt.Errorf("accepting on %s: %w", l.path, err)
	}
	return nil
}

// Close stops accepting and closes the waiting instance. Connections
// already accepted stay open.
func (l *pipeListener) Close() error {
	l.once.Do(func() {
		l.mu.Lock()
		l.closed = true
		h := l.next
		l.next = 0
		l.mu.Unlock()
		_ = windows.SetEvent(l.stop)
		if h != 0 {
			windows.CloseHandle(h)
		}
		l.inAccept.Wait()
		windows.CloseHandle(l.stop)
	})
	return nil
}

// Addr is the pipe's path.
func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.path) }

// pipeFile is what go-winio's files offer: overlapped reads and writes
// with deadlines, and the handle.
type pipeFile interface {
	io.ReadWriteCloser
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
	Fd() uintptr
}

// pipeConn is the server's end of one connection.
type pipeConn struct {
	pipeFile
	path string
}

func (c *pipeConn) LocalAddr() net.Addr  { return pipeAddr(c.path) }
func (c *pipeConn) RemoteAddr() net.Addr { return pipeAddr(c.path) }

func (c *pipeConn) SetDeadline(t time.Time) error {
	return errors.Join(c.SetReadDeadline(t), c.SetWriteDeadline(t))
}

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }

// pipeExists reports whether anyone holds a pipe named path: an instance
// answered (it is closed again at once; a host takes that for a probe and
// says nothing), all of them are busy, or one exists this user may not
// open. Only "not found" means the name is free.
func pipeExists(path string) (bool, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false, err
	}
	h, err := windows.CreateFile(name, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.SECURITY_SQOS_PRESENT|windows.SECURITY_ANONYMOUS, 0)
	switch {
	case err == nil:
		windows.CloseHandle(h)
		return true, nil
	case errors.Is(err, windows.ERROR_FILE_NOT_FOUND), errors.Is(err, windows.ERROR_PATH_NOT_FOUND):
		return false, nil
	case errors.Is(err, windows.ERROR_PIPE_BUSY), errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return true, nil
	}
	return false, fmt.Errorf("probing %s: %w", path, err)
}

// dialEndpoint connects to the pipe at path, waiting while every
// instance is busy, until ctx ends. go-winio dials with anonymous
// impersonation: a server that is not what it claims cannot act as us.
func dialEndpoint(ctx context.Context, path string) (net.Conn, error) {
	return winio.DialPipeContext(ctx, path)
}
