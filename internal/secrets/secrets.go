// Package secrets is where a fill's value comes from when the person does
// not type it: the OS keyring or the person's own password store, each a
// small package under internal/secrets behind the Source interface, chosen per
// service by the person's policy (internal/secrets/sources builds them from
// it) and never by the agent.
//
// A value is a []byte the caller zeroes. Errors never hold a value, nor a
// store's own output: they say what failed and the step that mends it
// ("run `bw unlock`…").
package secrets

import (
	"context"
	"errors"
)

// Field kinds, as in internal/fill (fill.FieldPassword, fill.FieldOTP).
const (
	FieldPassword = "password"
	FieldOTP      = "one-time-code"
)

// Request is what a source is told about one fill.
type Request struct {
	// Service is the canonical service (policy.NormalizeService).
	Service string
	// Field is FieldPassword or FieldOTP.
	Field string
	// Account is the user name the page's form shows, "" when none.
	Account string
	// Ask asks the person, in fillgate's prompt, for something a store
	// needs to open (KeePassXC's database password); what names it for
	// the prompt. The caller zeroes nothing: the source zeroes the answer.
	// nil means nobody can be asked (approval = "none").
	Ask func(ctx context.Context, what string) ([]byte, error)
}

// Source is one place a value comes from.
type Source interface {
	// Describe names the source for the prompt, e.g. "from pass:
	// work/github". It holds no secret.
	Describe() string
	// Fetch returns the value for req: a password, or for FieldOTP the
	// one-time code to fill now (computed from a seed, or by the store).
	// The caller zeroes it.
	Fetch(ctx context.Context, req Request) ([]byte, error)
}

// Kind is what sort of failure an Error is.
type Kind string

// Kinds of failure.
const (
	KindLocked   Kind = "locked"    // the store is locked or signed out: Fix names the unlock step
	KindNotFound Kind = "not_found" // no such entry or item
	KindMissing  Kind = "missing"   // the store's program is not installed
	KindTimeout  Kind = "timeout"   // the store did not answer in time
	KindFailed   Kind = "failed"    // anything else
)

// Error is a source's failure. It never holds a value or the store's own
// output (which could hold one).
type Error struct {
	Source string // the store, as the policy names it: pass, keepassxc, …
	Kind   Kind
	Detail string // what went wrong, a sentence fragment
	Fix    string // the step that mends it
}

// Error renders "pass: … ; fix: …".
func (e *Error) Error() string {
	s := e.Source + ": " + e.Detail
	if e.Fix != "" {
		s += "; " + e.Fix
	}
	return s
}

// FixHint is the step that mends it.
func (e *Error) FixHint() string { return e.Fix }

// Is matches errors of the same Kind, so errors.Is(err, ErrLocked) works.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Source == "" && t.Kind == e.Kind
}

// Targets for errors.Is.
var (
	ErrLocked   = &Error{Kind: KindLocked}
	ErrNotFound = &Error{Kind: KindNotFound}
	ErrMissing  = &Error{Kind: KindMissing}
	ErrTimeout  = &Error{Kind: KindTimeout}
)

// FirstLine cuts v at its first line break (\n or \r\n), zeroing the rest:
// password stores print the password on the first line and other fields
// after it.
func FirstLine(v []byte) []byte {
	for i, c := range v {
		if c == '\n' {
			end := i
			if end > 0 && v[end-1] == '\r' {
				end--
			}
			clear(v[end:])
			return v[:end]
		}
	}
	return v
}

// TrimNewline drops one trailing newline (\n or \r\n), zeroing it.
func TrimNewline(v []byte) []byte {
	if n := len(v); n > 0 && v[n-1] == '\n' {
		v[n-1] = 0
		v = v[:n-1]
		if n := len(v); n > 0 && v[n-1] == '\r' {
			v[n-1] = 0
			v = v[:n-1]
		}
	}
	return v
}
