// Package pinentry is a small client for GnuPG's pinentry, the dialog
// that asks a person for a secret, over the Assuan protocol on the
// program's standard input and output.
//
// It speaks the subset fillgate needs: OPTION, SETTITLE, SETDESC,
// SETPROMPT, SETOK, SETNOTOK, SETCANCEL, SETERROR, SETTIMEOUT, RESET,
// GETPIN, CONFIRM and BYE. Text it sends is percent-escaped, so that no
// text (a page's account name, say) can end a line or add a command. The
// secret GETPIN returns is read from D lines with a line reader over one
// fixed buffer, unescaped in place into a buffer of fixed capacity that
// the caller owns; every byte of it that passed through the reader is
// zeroed. It never becomes a string.
//
// It never asks pinentry for a terminal fallback (no OPTION ttyname or
// ttytype) or for its own password cache (no OPTION
// allow-external-password-cache, no SETKEYINFO).
package pinentry

import (
	"errors"
	"fmt"
	"time"
)

// Limits of the protocol.
const (
	// MaxLine is the longest Assuan line, without its LF: a longer
	// command is refused before it is sent, a longer response is a
	// protocol error.
	MaxLine = 1000
	// MaxSecret is the most bytes GETPIN takes; more is an error.
	MaxSecret = 4096
)

// GnuPG error codes pinentry answers with (the low 16 bits of an ERR
// code; the high bits name the source).
const (
	CodeTimeout      = 62  // GPG_ERR_TIMEOUT
	CodeCanceled     = 99  // GPG_ERR_CANCELED
	CodeNotConfirmed = 114 // GPG_ERR_NOT_CONFIRMED
)

// Outcomes a dialog can end with besides an answer. Errors from Conn
// match them with errors.Is.
var (
	// ErrCanceled: the person chose Cancel, pressed Escape or closed the
	// window.
	ErrCanceled = errors.New("pinentry: cancelled")
	// ErrNotConfirmed: the person chose the SETNOTOK button of a CONFIRM.
	ErrNotConfirmed = errors.New("pinentry: not confirmed")
	// ErrTimeout: the dialog's SETTIMEOUT ran out.
	ErrTimeout = errors.New("pinentry: timed out")
	// ErrProtocol: pinentry said something this client does not
	// understand, or the connection broke; the Conn is unusable after.
	ErrProtocol = errors.New("pinentry: protocol error")
	// ErrClosed: the connection ended (pinentry exited or was killed).
	ErrClosed = errors.New("pinentry: connection closed")
)

// Error is an ERR line pinentry answered with.
type Error struct {
	// Code is the whole GnuPG error value (source and code).
	Code uint32
	// Message is pinentry's text after the code (its own words, never a
	// secret).
	Message string
}

// Error renders "pinentry: MESSAGE (code N)".
func (e *Error) Error() string {
	return fmt.Sprintf("pinentry: %s (code %d)", e.Message, e.Code)
}

// Is matches ErrCanceled, ErrNotConfirmed and ErrTimeout by the error
// code, whatever its source.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrCanceled:
		return e.Code&0xFFFF == CodeCanceled
	case ErrNotConfirmed:
		return e.Code&0xFFFF == CodeNotConfirmed
	case ErrTimeout:
		return e.Code&0xFFFF == CodeTimeout
	}
	return false
}

// Dialog is what one GETPIN or CONFIRM shows. Empty fields are not sent,
// so pinentry keeps what it had: its defaults in a fresh process, what an
// earlier dialog set otherwise (Conn.Reset clears that in pinentry 1.1
// and later). Text may hold newlines (Description) and any UTF-8; it is
// escaped on the way.
type Dialog struct {
	Title       string // SETTITLE: the window title
	Description string // SETDESC: the text of the dialog
	Prompt      string // SETPROMPT: the label next to the entry of GETPIN
	OK          string // SETOK: the OK button
	NotOK       string // SETNOTOK: a third button of CONFIRM (ErrNotConfirmed)
	Cancel      string // SETCANCEL: the Cancel button
	Error       string // SETERROR: a message shown above the entry
	// Timeout is SETTIMEOUT, in whole seconds rounded up; 0 for none.
	Timeout time.Duration
}
