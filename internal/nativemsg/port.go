package nativemsg

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by calls on a port whose input has ended (the
// browser side disconnected) or whose Run has returned.
var ErrClosed = errors.New("nativemsg: port closed")

// ReplyError is a reply of type "error": the other side understood the
// request and refused or failed it.
type ReplyError struct {
	Code   string // e.g. no_tab, no_access, bad_request, internal
	Detail string // human-readable; never holds a secret
}

// Error implements error.
func (e *ReplyError) Error() string {
	if e.Detail == "" {
		return "error reply: " + e.Code
	}
	return "error reply: " + e.Code + ": " + e.Detail
}

// Option configures a Port.
type Option func(*Port)

// WithLogger makes the port report skipped frames and unexpected replies
// to l. Log records never hold a frame's content.
func WithLogger(l *slog.Logger) Option {
	return func(p *Port) {
		if l != nil {
			p.log = l
		}
	}
}

// Port correlates requests and replies over one native-messaging
// connection. Requests carry a numeric "id" the port assigns; the reply with
// the same id completes the call. Every other message (no id, or an id
// nobody waits for) goes to the notice handler.
type Port struct {
	r        io.Reader
	w        *Writer
	onNotice func(json.RawMessage)
	log      *slog.Logger

	nextID  atomic.Int64
	running atomic.Bool

	mu      sync.Mutex
	pending map[int64]chan json.RawMessage
	closed  bool
	done    chan struct{}
}

// NewPort returns a port that reads frames from r and writes them to w.
// onNotice (may be nil) receives every message that is not the reply to a
// pending call; it runs on Run's goroutine, in arrival order, so it must
// not block for long and must not wait for a Call. Nothing is read until
// Run is called.
func NewPort(r io.Reader, w io.Writer, onNotice func(json.RawMessage), opts ...Option) *Port {
	p := &Port{
		r:        r,
		w:        NewWriter(w),
		onNotice: onNotice,
		log:      slog.New(slog.DiscardHandler),
		pending:  make(map[int64]chan json.RawMessage),
		done:     make(chan struct{}),
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Done is closed when the port has ended: its input ended or Run returned.
func (p *Port) Done() <-chan struct{} { return p.done }

// Run reads and dispatches messages until the input ends (it returns nil),
// reading fails, or ctx ends (it returns ctx.Err()). Then the port is closed:
// pending and later calls fail with ErrClosed.
//
// Reads cannot be interrupted, so when ctx ends Run returns at once but a
// goroutine stays blocked in r.Read until r returns; close r to release it.
// Run may be called only once.
func (p *Port) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("nativemsg: Run called twice")
	}
	defer p.close()

	type frame struct {
		body []byte
		err  error
	}
	frames := make(chan frame)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		br := bufio.NewReader(p.r)
		for {
			body, err := ReadFrame(br)
			select {
			case frames <- frame{body, err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case f := <-frames:
			if f.err != nil {
				if errors.Is(f.err, io.EOF) {
					return nil
				}
				return fmt.Errorf("read message: %w", f.err)
			}
			p.dispatch(f.body)
		}
	}
}

// envelope is the part of every message the port looks at.
type envelope struct {
	ID     *int64 `json:"id"`
	Type   string `json:"type"`
	Error  string `json:"error"`
	Detail string `json:"detail"`
}

// parseEnvelope decodes body's id and type. The reason it returns on
// failure is a fixed phrase, never part of the body.
func parseEnvelope(body []byte) (envelope, string) {
	var env envelope
	if len(body) == 0 {
		return env, "empty message"
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return env, "not a JSON object"
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return env, "malformed JSON or a non-integer id"
	}
	return env, ""
}

func (p *Port) dispatch(body []byte) {
	env, bad := parseEnvelope(body)
	if bad != "" {
		p.log.Warn("nativemsg: skipped a message", "reason", bad)
		return
	}
	if env.ID != nil {
		p.mu.Lock()
		ch, ok := p.pending[*env.ID]
		delete(p.pending, *env.ID)
		p.mu.Unlock()
		if ok {
			ch <- body // buffered: never blocks
			return
		}
	}
	if p.onNotice != nil {
		p.onNotice(body)
	}
}

func (p *Port) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
}

// Notify sends msg, which must marshal to a JSON object without an "id",
// and waits for no reply.
func (p *Port) Notify(msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode notice: %w", err)
	}
	if err := p.w.WriteFrame(body); err != nil {
		return fmt.Errorf("send notice: %w", err)
	}
	return nil
}

// Call sends req, which must marshal to a JSON object without an "id" key,
// with a fresh id and waits for the reply with that id, ctx's end, or the
// port's end (ErrClosed). A reply of type "error" is returned as a
// *ReplyError; any other reply is returned whole.
func (p *Port) Call(ctx context.Context, req any) (json.RawMessage, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	if t := bytes.TrimSpace(body); len(t) < 2 || t[0] != '{' {
		return nil, errors.New("encode request: not a JSON object")
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	if probe.ID != nil {
		return nil, errors.New("encode request: it already has an id")
	}
	return p.CallRaw(ctx, func(id int64) ([]byte, error) {
		return withID(bytes.TrimSpace(body), id), nil
	})
}

// withID returns the JSON object obj with "id":id as its first member.
func withID(obj []byte, id int64) []byte {
	out := make([]byte, 0, len(obj)+24)
	out = append(out, `{"id":`...)
	out = strconv.AppendInt(out, id, 10)
	rest := bytes.TrimLeft(obj[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// CallRaw is Call for a request whose body holds a secret. The port picks
// the id and build returns the complete body (a JSON object carrying that
// "id"), with the secret written by internal/secretjson, never through
// encoding/json or a Go string. The port zeroes the body, and its own
// frame buffer, as soon as they are written or refused; build's caller must
// not keep another copy.
func (p *Port) CallRaw(ctx context.Context, build func(id int64) ([]byte, error)) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id := p.nextID.Add(1)
	ch := make(chan json.RawMessage, 1)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	p.pending[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}()

	body, err := build(id)
	if err != nil {
		clear(body)
		return nil, fmt.Errorf("build request: %w", err)
	}
	if !json.Valid(body) {
		clear(body)
		return nil, errors.New("build request: not valid JSON")
	}
	err = p.w.WriteFrame(body)
	clear(body)
	if err != nil {
		return nil, fmt.Errorf("send request: %w", err)
	}

	select {
	case reply := <-ch:
		return decodeReply(reply)
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a reply: %w", ctx.Err())
	case <-p.done:
		select {
		case reply := <-ch: // it arrived just before the end
			return decodeReply(reply)
		default:
			return nil, ErrClosed
		}
	}
}

func decodeReply(reply json.RawMessage) (json.RawMessage, error) {
	env, _ := parseEnvelope(reply) // dispatch already checked it
	if env.Type == "error" {
		return nil, &ReplyError{Code: env.Error, Detail: env.Detail}
	}
	return reply, nil
}
