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

// Handler answers requests. Fill runs one fill for agent and reports its
// steps through progress (safe to call from any goroutine until Fill
// returns); ctx ends when the client disconnects or Serve's context ends.
// Status describes the host. Peek reports what the browser's active tab
// has focused, and Serves whether that is a login field of kind field for
// service (as the policy reads the service); the router uses both to send
// a fill to the one browser that shows its login field. Refused hears
// (for the audit log) a fill the router refused itself.
type Handler interface {
	Fill(ctx context.Context, req fill.Request, agent fill.Agent, progress func(fill.Progress)) fill.Result
	Status() HostStatus
	Peek(ctx context.Context) (ActiveTab, error)
	Serves(service, field string, t ActiveTab) bool
	Refused(agent fill.Agent, res fill.Result)
}

// Serve answers connections from l, each in its own goroutine, until ctx
// ends; then it waits for the requests under way (whose contexts end too)
// and returns nil. It returns an error if l is closed first.
//
// Every connection is checked first: a peer that runs as another user gets
// a forbidden error and is closed before anything is read from it.
func Serve(ctx context.Context, l *Listener, h Handler) error {
	return serve(ctx, l, h, ReadTimeout)
}

type server struct {
	l           *Listener
	h           Handler
	self        string // our own executable, resolved
	readTimeout time.Duration
}

func serve(ctx context.Context, l *Listener, h Handler, readTimeout time.Duration) error {
	s := &server{l: l, h: h, self: selfExe(), readTimeout: readTimeout}
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

	switch req.Op {
	case OpStatus:
		st := s.status()
		m := Message{Type: TypeStatus, Status: &st}
		if req.All {
			m.Hosts = s.statusAll(ctx)
		}
		if req.Debug {
			// After the other hosts were asked: this connection's own
			// goroutine and the server's are all that is counted of it.
			st.Goroutines = runtime.NumGoroutine()
		}
		_ = writeMessage(c, m)
	case OpPeek:
		st := s.status()
		m := Message{Type: TypePeek, Status: &st}
		if t, err := s.h.Peek(ctx); err == nil {
			m.Active = &t
		}
		_ = writeMessage(c, m)
	case OpFill:
		s.fill(ctx, c, r, req, peerPID)
	}
}

// status is the handler's status with this listener's socket.
func (s *server) status() HostStatus {
	st := s.h.Status()
	if st.Socket == "" {
		st.Socket = s.l.Path()
	}
	return st
}

// statusAll is the status of every live host, this one first, each with
// its browser's active tab.
func (s *server) statusAll(ctx context.Context) []HostStatus {
	peers := s.peers(ctx, s.otherHosts())
	out := make([]HostStatus, len(peers))
	for i, p := range peers {
		out[i] = p.status
		out[i].ActiveTab = p.active
	}
	return out
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

// fill runs one fill. Its context ends when the client hangs up (a read
// returns) or a reply cannot be written, with cause fill.ErrAgentGone, or
// when Serve's context ends, with its cause.
func (s *server) fill(ctx context.Context, c net.Conn, r *bufio.Reader, req Request, peerPID int) {
	freq, _ := req.fillRequest() // checked by readRequest
	fctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(fill.ErrAgentGone) }
	defer cancel()

	hungUp := make(chan struct{})
	go func() {
		defer close(hungUp)
		// One request per connection: anything more is ignored, and the
		// read ends with the client's hang-up (or our own close).
		_, _ = io.Copy(io.Discard, r)
		cancel()
	}()
	defer func() { c.Close(); <-hungUp }()

	w := &replier{c: c, cancel: cancel}
	if agent, ok := s.forwardedAgent(req, peerPID); ok {
		// Another host routed it here: run it, whatever this browser shows.
		res := s.h.Fill(fctx, freq, agent, w.progress)
		w.last(Message{Type: TypeResult, Result: &res})
		return
	}
	agent := findAgent(peerPID, s.self)
	agent.Via = cleanClient(req.Client)
	target, refused := s.route(fctx, freq)
	switch {
	case refused != nil:
		s.h.Refused(agent, *refused)
		w.last(Message{Type: TypeResult, Result: refused})
	case target != "":
		req.Agent = nil
		forward(fctx, target, req, agent, w)
	default:
		res := s.h.Fill(fctx, freq, agent, w.progress)
		w.last(Message{Type: TypeResult, Result: &res})
	}
}

// replier writes a fill's messages in order, from any goroutine, and drops
// progress that comes after the result.
type replier struct {
	mu     sync.Mutex
	c      net.Conn
	cancel context.CancelFunc
	done   bool
}

func (w *replier) progress(p fill.Progress) {
	w.send(Message{Type: TypeProgress, Phase: p.Phase, Deadline: p.Deadline, Where: p.Where}, false)
}

func (w *replier) last(m Message) { w.send(m, true) }

func (w *replier) send(m Message, last bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = last
	if err := writeMessage(w.c, m); err != nil {
		w.done = true
		w.cancel() // the client is gone or stuck
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
