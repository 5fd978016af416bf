package nativeprompt

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fillgate/fillgate/internal/pinentry"
)

// session is one pinentry's session (a *pinentry.Process).
type session interface {
	GetPIN(ctx context.Context, d pinentry.Dialog) ([]byte, error)
	Confirm(ctx context.Context, d pinentry.Dialog) error
	Close()
}

// pinentryBackend shows each dialog in a pinentry process of its own, so
// that nothing one dialog set (a third button, an error text) carries
// over to the next, and no dialog outlives its step.
type pinentryBackend struct {
	program string
	env     []string
	// start runs the program; tests replace it.
	start func(ctx context.Context, program string, env []string) (session, error)
}

// newPinentry is the backend for program, run with exactly env.
func newPinentry(program string, env []string) *pinentryBackend {
	return &pinentryBackend{program: program, env: env,
		start: func(ctx context.Context, program string, env []string) (session, error) {
			return pinentry.Start(ctx, program, env)
		}}
}

// name is the program's file name.
func (b *pinentryBackend) name() string {
	return filepath.Base(b.program)
}

// getPIN shows d with GETPIN.
func (b *pinentryBackend) getPIN(ctx context.Context, d dialog) ([]byte, error) {
	s, err := b.open(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	v, err := s.GetPIN(ctx, convert(d))
	if err != nil {
		return nil, b.outcome(ctx, err)
	}
	return v, nil
}

// confirm shows d with CONFIRM.
func (b *pinentryBackend) confirm(ctx context.Context, d dialog) (choice, error) {
	s, err := b.open(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	err = s.Confirm(ctx, convert(d))
	switch {
	case err == nil:
		return choiceOK, nil
	case errors.Is(err, pinentry.ErrNotConfirmed) && d.notOK != "":
		return choiceNotOK, nil
	}
	return 0, b.outcome(ctx, err)
}

// open starts the program for one dialog.
func (b *pinentryBackend) open(ctx context.Context) (session, error) {
	s, err := b.start(ctx, b.program, b.env)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %w", b.name(), err)
	}
	return s, nil
}

// outcome maps pinentry's end of a dialog to the flow's.
func (b *pinentryBackend) outcome(ctx context.Context, err error) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, pinentry.ErrCanceled):
		return errCancelled
	case errors.Is(err, pinentry.ErrTimeout):
		return fmt.Errorf("%s gave up waiting: %w", b.name(), context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: %w", b.name(), err)
}

// convert is d in pinentry's terms.
func convert(d dialog) pinentry.Dialog {
	p := pinentry.Dialog{Title: d.title, Description: d.text, Prompt: d.prompt,
		OK: d.ok, NotOK: d.notOK, Cancel: d.cancel, Error: d.problem}
	if !d.deadline.IsZero() {
		p.Timeout = max(time.Until(d.deadline), time.Second)
	}
	return p
}
