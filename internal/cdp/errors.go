package cdp

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/fillgate/fillgate/internal/fill"
)

// Reason says in a few words why the CDP path failed or refused. Error
// messages are built from it, the endpoint and a safe detail only.
type Reason string

// The reasons an Error carries.
const (
	ReasonBadURL          Reason = "not a usable CDP URL"
	ReasonNotLoopback     Reason = "not loopback, and the policy does not allow that host"
	ReasonNotTLS          Reason = "not loopback, so it must use wss:// or https:// (over ws:// or http:// the value would cross the network in clear)"
	ReasonHostMismatch    Reason = "the WebSocket URL it returned points to another host"
	ReasonOtherUser       Reason = "it is run by another user"
	ReasonNotCDP          Reason = "it does not answer like a CDP endpoint"
	ReasonRefused         Reason = "connection refused"
	ReasonTimeout         Reason = "timed out"
	ReasonUnreachable     Reason = "cannot connect"
	ReasonNoPageTarget    Reason = "no page target"
	ReasonTabNotFound     Reason = "no page target has the id given with --tab"
	ReasonTabNotActive    Reason = "the tab given with --tab is not the active tab of its window; bring it to the front, or leave --tab out"
	ReasonNumericTab      Reason = "a numeric tab or frame id names an extension tab; on the CDP path name the tab by its DevTools target id"
	ReasonNoFocusedField  Reason = "no focused field"
	ReasonNoMatch         Reason = "no page target's focused frame matches the service"
	ReasonAmbiguous       Reason = "several page targets match the service; name one with --tab"
	ReasonGone            Reason = "the connection to the browser was lost"
	ReasonProtocol        Reason = "the browser answered unexpectedly"
	ReasonUnknownInspect  Reason = "the inspection is not from this connection"
	ReasonValueNotUTF8    Reason = "the value is not valid UTF-8"
	ReasonFrameNotFound   Reason = "cannot follow the focus into a frame"
	ReasonPromptNotOpened Reason = "cannot open the prompt"
)

// Error is a failure of the CDP path. Its message names the endpoint that
// was tried (and where that came from) and why; never page content, URL
// paths, titles or a value. The wrapped error is kept for errors.Is (for
// example context.DeadlineExceeded) but is not part of the message.
type Error struct {
	Endpoint Endpoint
	Reason   Reason
	// Detail adds safe words, for example the candidates' origins.
	Detail string
	err    error
}

// Error renders "CDP endpoint http://127.0.0.1:9222 (from default): reason:
// detail".
func (e *Error) Error() string {
	s := fmt.Sprintf("CDP endpoint %s: %s", e.Endpoint, e.Reason)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.err }

// Status is the fill outcome this error amounts to: refused when a check
// said no (the endpoint, or which tab to use), failed when something broke.
// The Engine can read it with errors.As and an interface{ Status() fill.Status }.
func (e *Error) Status() fill.Status {
	switch e.Reason {
	case ReasonNotLoopback, ReasonNotTLS, ReasonHostMismatch, ReasonOtherUser, ReasonNoPageTarget, ReasonTabNotFound, ReasonTabNotActive,
		ReasonNumericTab, ReasonNoFocusedField, ReasonNoMatch, ReasonAmbiguous:
		return fill.StatusRefused
	}
	return fill.StatusFailed
}

func newError(ep Endpoint, r Reason, detail string, err error) *Error {
	return &Error{Endpoint: ep, Reason: r, Detail: detail, err: err}
}

// Winsock's own numbers for a refused and a timed-out connection: on
// Windows a dial fails with these, never with syscall.ECONNREFUSED or
// ETIMEDOUT (which Go invents there), and no Unix errno has them.
const (
	wsaECONNREFUSED = syscall.Errno(10061)
	wsaETIMEDOUT    = syscall.Errno(10060)
)

// connectReason classifies a failure to reach the endpoint without quoting
// the underlying error, which may hold the full WebSocket URL.
func connectReason(err error) Reason {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, wsaECONNREFUSED):
		return ReasonRefused
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, wsaETIMEDOUT):
		return ReasonTimeout
	}
	var to interface{ Timeout() bool }
	if errors.As(err, &to) && to.Timeout() {
		return ReasonTimeout
	}
	return ReasonUnreachable
}
