package agentsock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// writeTimeout bounds one message write, so a client that stops reading
// cannot stall the fill flow.
const writeTimeout = 10 * time.Second

// maxConns bounds the connections served at once (each holds a goroutine
// and a read buffer until its request is read or it times out). One over it
// is told the host is busy and closed at once, so a flood of connections
// costs bounded memory and the host keeps serving once it ebbs.
const maxConns = 1024

// Handler answers the one request of a connection: it runs in the
// connection's own goroutine and answers through c; the connection closes
// when it returns. For a fill, ctx ends when the client hangs up or a
// message cannot be written (cause fill.ErrAgentGone), or when Serve's
// context ends; for the other ops it is Serve's.
type Handler func(ctx context.Context, c *Conn)

// Conn is one request on the agent socket, read and checked: what was
// asked, by which process, and the way back. Its methods are safe to call
// from any goroutine until the Handler returns.
type Conn struct {
	req     Request
	fill    fill.Request // req as a fill, for OpFill
	peerPID int
	socket  string // the listener's own endpoint

	mu     sync.Mutex
	nc     net.Conn
	cancel context.CancelFunc // ends a fill's context; nil for the other ops
	done   bool               // the last message went out (or could not)
}

// Request is the request as it came, checked for the wire (PROTOCOL.md
// section 1): a known op, and for a fill a service, a known field and
// then, and a timeout_ms that is not negative.
func (c *Conn) Request() Request { return c.req }

// Fill is a fill request as fill.Request: the wire's fields converted, its
// field and then normalized.
func (c *Conn) Fill() fill.Request { return c.fill }

// PeerPID is the pid of the process on the other end of the socket.
func (c *Conn) PeerPID() int { return c.peerPID }

// Progress sends one progress message of a fill, or, when p carries the
// fill's early answer (p.Result), that answer as its result; after the
// answer it sends nothing.
func (c *Conn) Progress(p fill.Progress) {
	if p.Result != nil {
		c.Result(*p.Result)
		return
	}
	c.send(Message{Type: TypeProgress, Phase: p.Phase, Deadline: p.Deadline, Where: p.Where}, false)
}

// Answer sends m, the last message: nothing is sent after it. The status
// of the answering host (m.Status) gets this listener's endpoint when the
// handler left it empty and, when the request asked for debug, how many
// goroutines the host runs.
func (c *Conn) Answer(m Message) {
	if m.Status != nil && (m.Status.Socket == "" || c.req.Debug && m.Type == TypeStatus) {
		st := *m.Status
		if st.Socket == "" {
			st.Socket = c.socket
		}
		if c.req.Debug && m.Type == TypeStatus {
			// After the handler did its work (asked the other hosts):
			// this connection's own goroutine and the server's are all
			// that is counted of it.
			st.Goroutines = runtime.NumGoroutine()
		}
		m.Status = &st
	}
	c.send(m, true)
}

// Result answers a fill with res.
func (c *Conn) Result(res fill.Result) { c.Answer(Message{Type: TypeResult, Result: &res}) }

// Error answers with an error message: code (CodeBadRequest, ...) and a
// detail that never echoes what the client sent.
func (c *Conn) Error(code, detail string) { c.Answer(errorMessage(code, detail)) }

func (c *Conn) send(m Message, last bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	c.done = last
	if err := writeMessage(c.nc, m); err != nil {
		c.done = true
		if c.cancel != nil {
			c.cancel() // the client is gone or stuck
		}
	}
}

// Serve answers connections from l, each in its own goroutine, with h,
// until ctx ends; then it waits for the requests under way (whose contexts
// end too) and returns nil. It returns an error if l is closed first.
//
// Every connection is checked first: a peer that runs as another user gets
// a forbidden error and is closed before anything is read from it. Then
// its one request is read and checked (a bad one gets a bad_request error,
// and h never sees it).
func Serve(ctx context.Context, l *Listener, h Handler) error {
	return serve(ctx, l, h, ReadTimeout)
}

type server struct {
	l           *Listener
	h           Handler
	readTimeout time.Duration
}

func serve(ctx context.Context, l *Listener, h Handler, readTimeout time.Duration) error {
	s := &server{l: l, h: h, readTimeout: readTimeout}
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, maxConns)
	for {
		c, err := l.accept(ctx)
		if ctx.Err() != nil {
			if c != nil {
				c.Close()
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("agent socket: %w", err)
		}
		select {
		case slots <- struct{}{}:
			wg.Go(func() {
				defer func() { <-slots }()
				s.handle(ctx, c)
			})
		default:
			wg.Go(func() { s.busy(c) })
		}
	}
}

// busy turns a connection away: the host serves maxConns already.
func (s *server) busy(c net.Conn) {
	defer c.Close()
	_ = writeMessage(c, errorMessage(CodeBusy, fmt.Sprintf("the host is serving %d connections; try again in a moment", maxConns)))
}

func (s *server) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(s.readTimeout))
	peerPID, err := checkPeer(c)
	if err != nil {
		_ = writeMessage(c, errorMessage(CodeForbidden, "this socket serves only the user running the host"))
		return
	}
	r := bufio.NewReader(c)
	req, msg := readRequest(r, s.readTimeout)
	if msg != nil {
		if msg.Type != "" {
			_ = writeMessage(c, *msg)
		}
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	conn := &Conn{req: req, peerPID: peerPID, socket: s.l.Path(), nc: c}
	if req.Op != OpFill {
		s.h(ctx, conn)
		return
	}
	conn.fill, _ = req.fillRequest() // checked by readRequest

	// A fill's context ends when the client hangs up (a read returns) or
	// a reply cannot be written, with cause fill.ErrAgentGone, or when
	// Serve's context ends, with its cause.
	fctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(fill.ErrAgentGone) }
	defer cancel()
	conn.cancel = cancel
	hungUp := make(chan struct{})
	go func() {
		defer close(hungUp)
		// One request per connection: anything more is ignored, and the
		// read ends with the client's hang-up (or our own close).
		_, _ = io.Copy(io.Discard, r)
		cancel()
	}()
	defer func() { c.Close(); <-hungUp }()
	s.h(fctx, conn)
}

// readRequest reads and checks the one request line. When it fails, the
// returned message is what to answer (empty Type: close silently, as for a
// probe that connects and hangs up).
func readRequest(r *bufio.Reader, timeout time.Duration) (Request, *Message) {
	line, err := readLine(r, MaxRequest)
	switch {
	case errors.Is(err, errTooLarge):
		return Request{}, ptr(errorMessage(CodeBadRequest, fmt.Sprintf("request over %d bytes", MaxRequest)))
	case errors.Is(err, os.ErrDeadlineExceeded):
		return Request{}, ptr(errorMessage(CodeBadRequest, fmt.Sprintf("no complete request within %v of connecting", timeout)))
	case errors.Is(err, io.EOF) && len(line) == 0:
		return Request{}, &Message{}
	case errors.Is(err, io.EOF):
		return Request{}, ptr(errorMessage(CodeBadRequest, "the request must end with a newline"))
	case err != nil:
		return Request{}, &Message{}
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Request{}, ptr(errorMessage(CodeBadRequest, "the request is not one JSON object"))
	}
	switch req.Op {
	case OpStatus, OpPeek:
	case OpFill:
		if _, err := req.fillRequest(); err != nil {
			return Request{}, ptr(errorMessage(CodeBadRequest, err.Error()))
		}
	default:
		return Request{}, ptr(errorMessage(CodeBadRequest, "unknown op: use fill, status or peek"))
	}
	return req, nil
}

// errTooLarge means a line went past its limit.
var errTooLarge = errors.New("line too long")

// readLine reads up to and including the first newline, refusing lines
// over limit bytes. On any other error it returns what it read so far.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errTooLarge
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func writeMessage(c net.Conn, m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encoding a %s message: %w", m.Type, err)
	}
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing a %s message: %w", m.Type, err)
	}
	return nil
}

func errorMessage(code, detail string) Message {
	return Message{Type: TypeError, Error: code, Detail: detail}
}

func ptr[T any](v T) *T { return &v }
