// Package remember keeps the secrets a person gives fillgate to remember
// in the OS keyring: it takes one typed at the terminal (never echoed) or
// piped in and stores it, lists the live leases granted on what is kept,
// and ends the leases on a value that was forgotten or replaced.
package remember

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/totp"
)

// MaxSecret is the most a secret read here may be: what every OS keyring
// holds.
const MaxSecret = keychain.LinuxMaxValue

// InputError is a secret the person gave that cannot be kept: none, one
// too long, one that is not a TOTP seed, or no terminal to type it at.
// It never quotes the secret. The person fixes it by giving the secret
// again, otherwise.
type InputError struct{ Err error }

// Error implements error.
func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap returns the fault.
func (e *InputError) Unwrap() error { return e.Err }

// Input is where the secret comes from.
type Input struct {
	// Stdin holds the secret: read to its end when Piped, else the
	// terminal it is typed at.
	Stdin io.Reader
	// Piped says to read Stdin to its end (one trailing newline is
	// dropped) instead of asking at the terminal.
	Piped bool
	// Prompt asks for the secret at the terminal; it is written to
	// Terminal once echo is off, and a newline after the secret.
	Prompt   string
	Terminal io.Writer
}

// Store reads the secret for it from in and stores it in k. It checks
// first that k is usable, so that nobody types a secret the keyring
// cannot keep; a TOTP seed must parse. The secret is zeroed once stored.
func Store(ctx context.Context, k *keychain.Keyring, it keychain.Item, in Input) error {
	if err := k.Available(ctx); err != nil {
		return err
	}
	value, err := read(in)
	if err != nil {
		return err
	}
	defer clear(value)
	if it.Field == keychain.FieldOTP {
		if _, err := totp.Parse(value); err != nil {
			return &InputError{err}
		}
	}
	return k.Set(ctx, it, value)
}

// read reads the secret: from in.Stdin to its end when piped, else at the
// terminal without echo.
func read(in Input) ([]byte, error) {
	if in.Piped {
		v, err := readSecret(in.Stdin, MaxSecret)
		if err != nil {
			return nil, err
		}
		if len(v) == 0 {
			return nil, &InputError{errors.New("standard input held no secret")}
		}
		return v, nil
	}
	f, ok := in.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, &InputError{errors.New("standard input is not a terminal: run this in one, or pipe the secret in with --stdin")}
	}
	v, err := readHidden(f, func() { fmt.Fprint(in.Terminal, in.Prompt) }, MaxSecret)
	fmt.Fprintln(in.Terminal)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, &InputError{errors.New("no secret typed; nothing stored")}
	}
	return v, nil
}

// readSecret reads r to its end into one buffer of max bytes (so no copy
// is left behind by growing it), drops one trailing newline (\n or \r\n),
// and refuses more than max bytes. On an error the buffer is zeroed.
func readSecret(r io.Reader, max int) ([]byte, error) {
	tooLong := &InputError{fmt.Errorf("the secret on standard input is longer than %d bytes; nothing stored", max)}
	buf := make([]byte, max+2) // room for a trailing \r\n
	n := 0
	for {
		if n == len(buf) {
			var one [1]byte
			m, _ := io.ReadFull(r, one[:])
			clear(one[:])
			if m > 0 {
				clear(buf)
				return nil, tooLong
			}
			break
		}
		m, err := r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			clear(buf)
			return nil, fmt.Errorf("read the secret from standard input: %w", err)
		}
	}
	v := buf[:n]
	for _, end := range []byte{'\n', '\r'} {
		if l := len(v); l > 0 && v[l-1] == end {
			v[l-1] = 0
			v = v[:l-1]
		} else if end == '\n' {
			break
		}
	}
	if len(v) > max {
		clear(buf)
		return nil, tooLong
	}
	return v, nil
}
