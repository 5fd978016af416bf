package agentsock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// ErrNoHost means no host answered on any socket in the directory: no
// browser with the extension is running (or its host cannot be reached).
// The CLI can say how to fix that, or fall back to CDP.
var ErrNoHost = errors.New("no fillgate host is running")

// HostError is a host's error message.
type HostError struct {
	Code   string // CodeBadRequest, CodeForbidden, ...
	Detail string
}

// Error implements error.
func (e *HostError) Error() string {
	return fmt.Sprintf("the host refused the request (%s): %s", e.Code, e.Detail)
}

const (
	// PeekWait bounds the answers to a peek of the other hosts, when a
	// host answers a status for all of them or routes a fill.
	PeekWait = 2 * time.Second
	// statusWait bounds one host's answer to a status request.
	statusWait = 3 * time.Second
	// maxMessage bounds one message line from a host.
	maxMessage = 1 << 20
)

// Fill asks the host serving dir for a fill and waits for the result,
// passing progress messages to onProgress (which may be nil). client names
// the caller for display ("fillgate fill"). It tries agent.sock, then each
// hosts/*.sock, skipping sockets nobody answers on and hosts that run as
// another user; when none is left it returns an error wrapping ErrNoHost.
// Once a host has the request, its answer is final: a fill is never sent
// twice. Cancelling ctx hangs up, which cancels the fill on the host.
func Fill(ctx context.Context, dir string, req fill.Request, client string, onProgress func(fill.Progress)) (fill.Result, error) {
	c, err := dialAny(ctx, dir)
	if err != nil {
		return fill.Result{}, err
	}
	return fillOn(ctx, c, req, client, onProgress)
}

// FillAt is Fill through the one socket at path (a forwarded agent
// socket, say). A socket nobody answers on is an error wrapping ErrNoHost.
func FillAt(ctx context.Context, path string, req fill.Request, client string, onProgress func(fill.Progress)) (fill.Result, error) {
	c, err := Dial(ctx, path)
	if err != nil {
		return fill.Result{}, fmt.Errorf("%w: %w", ErrNoHost, err)
	}
	return fillOn(ctx, c, req, client, onProgress)
}

func fillOn(ctx context.Context, c net.Conn, req fill.Request, client string, onProgress func(fill.Progress)) (fill.Result, error) {
	defer c.Close()
	m, err := roundTrip(ctx, c, newFillRequest(req, client), TypeResult, onProgress)
	if err != nil {
		return fill.Result{}, err
	}
	return *m.Result, nil
}

// Status asks the hosts serving dir for their status, the owner of
// agent.sock first, each with what its browser's active tab has focused.
// The first host that answers lists them all; when none does, it returns
// an error wrapping ErrNoHost.
func Status(ctx context.Context, dir string) ([]HostStatus, error) {
	for _, path := range candidates(dir) {
		hs, err := StatusAt(ctx, path)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err == nil {
			return hs, nil
		}
	}
	return nil, fmt.Errorf("%w (no socket in %s answered)", ErrNoHost, dir)
}

// StatusAt asks the host at path for the status of every host it knows
// (itself first).
func StatusAt(ctx context.Context, path string) ([]HostStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, statusWait+PeekWait)
	defer cancel()
	m, err := call(ctx, path, Request{Op: OpStatus, All: true}, TypeStatus)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoHost, err)
	}
	if len(m.Hosts) == 0 {
		return []HostStatus{*m.Status}, nil
	}
	return m.Hosts, nil
}

// OwnStatusAt asks the host at path for its own status only, without
// asking its browser what the active tab shows.
func OwnStatusAt(ctx context.Context, path string) (HostStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, statusWait)
	defer cancel()
	m, err := call(ctx, path, Request{Op: OpStatus}, TypeStatus)
	if err != nil {
		return HostStatus{}, fmt.Errorf("%w: %w", ErrNoHost, err)
	}
	if m.Status == nil {
		return HostStatus{}, fmt.Errorf("%w: a status with no host", ErrNoHost)
	}
	return *m.Status, nil
}

// candidates lists the endpoints to try: the stable one (agent.sock),
// then each host's own (hosts/*.sock) in pid order.
func candidates(dir string) []string {
	hosts := hostEndpoints(dir)
	sort.Slice(hosts, func(i, j int) bool { return endpointID(hosts[i]) < endpointID(hosts[j]) })
	return append([]string{SocketPath(dir)}, hosts...)
}

// dialAny connects to the first candidate that answers.
func dialAny(ctx context.Context, dir string) (net.Conn, error) {
	var errs []error
	for _, path := range candidates(dir) {
		c, err := Dial(ctx, path)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connecting to the host: %w", ctx.Err())
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w in %s: %w", ErrNoHost, dir, errors.Join(errs...))
}

// Dial connects to the host endpoint at path and checks that the host runs
// as this user.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	if err := checkPathLen(path); err != nil {
		return nil, err
	}
	c, err := dialEndpoint(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", path, err)
	}
	if err := checkHost(c); err != nil {
		c.Close()
		return nil, fmt.Errorf("connecting to %s: %w", path, err)
	}
	return c, nil
}

// roundTrip sends req and reads messages until one of type want (or an
// error message). Progress goes to onProgress; unknown types are ignored.
func roundTrip(ctx context.Context, c net.Conn, req Request, want string, onProgress func(fill.Progress)) (Message, error) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	fail := func(err error) (Message, error) {
		if ctx.Err() != nil {
			return Message{}, fmt.Errorf("waiting for the host: %w", ctx.Err())
		}
		return Message{}, err
	}

	b, err := json.Marshal(req)
	if err != nil {
		return Message{}, fmt.Errorf("encoding the request: %w", err)
	}
	if _, err := c.Write(append(b, '\n')); err != nil {
		return fail(fmt.Errorf("sending the request: %w", err))
	}
	r := bufio.NewReader(c)
	for {
		m, err := Receive(r)
		if err != nil {
			switch {
			case errors.Is(err, io.EOF):
				err = errors.New("the host hung up without an answer")
			case errors.Is(err, errTooLarge):
				err = fmt.Errorf("a message over %d bytes", maxMessage)
			}
			return fail(fmt.Errorf("reading the host's answer: %w", err))
		}
		switch {
		case m.Type == TypeError:
			return Message{}, &HostError{Code: m.Error, Detail: m.Detail}
		case m.Type == TypeProgress && onProgress != nil:
			onProgress(fill.Progress{Phase: m.Phase, Deadline: m.Deadline, Where: m.Where})
		case m.Type == want && want == TypeResult && m.Result != nil,
			m.Type == want && (want == TypeStatus || want == TypePeek) && m.Status != nil:
			return m, nil
		}
	}
}

// ErrNotJSON is wrapped by Receive's error for a line that is not a JSON
// message.
var ErrNotJSON = errors.New("not JSON")

// Receive reads the next message a host sent, from r over its connection.
// Its error is the read's (io.EOF once the host hung up), one for a line
// over the limit of a message, or one wrapping ErrNotJSON.
func Receive(r *bufio.Reader) (Message, error) {
	line, err := readLine(r, maxMessage)
	if err != nil {
		return Message{}, err
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return Message{}, fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	return m, nil
}

// Peek asks the host at path what its browser's active tab has focused:
// the answer's Status is the host's, its Active the tab (nil when the
// browser did not answer).
func Peek(ctx context.Context, path string) (Message, error) {
	return call(ctx, path, Request{Op: OpPeek}, TypePeek)
}

// call sends one request to the host at path and returns its answer of
// type want.
func call(ctx context.Context, path string, req Request, want string) (Message, error) {
	c, err := Dial(ctx, path)
	if err != nil {
		return Message{}, err
	}
	defer c.Close()
	return roundTrip(ctx, c, req, want, nil)
}
