// Package nativeprompt asks the person in a dialog the desktop draws,
// outside every browser, where no program driving a browser can read,
// type or click: fill.Native.
//
// Each system has its own dialog behind one small API (platform, in the
// _linux, _darwin, _windows and _unix files):
//
//   - Linux and the other Unix systems: a graphical pinentry (GnuPG's
//     secret-entry dialog; see package pinentry), found only in the
//     system's own directories, never on $PATH.
//   - macOS: pinentry-mac when the policy names it or a root-owned one is
//     installed; otherwise an osascript dialog with a hidden answer.
//   - Windows: the policy's pinentry when it names one; otherwise the
//     system's credential dialog (CredUIPromptForWindowsCredentialsW) to
//     type, and message boxes to choose.
//
// The macOS and Windows dialogs are written from their documentation and
// only compiled here, never run: they are unproven.
//
// What the dialogs show mirrors the loopback page (internal/pageprompt): the
// agent, the exact origin, the field kind, the account the page shows
// (marked as the page's), where a saved value comes from (the entry, which
// only this dialog may name), and, before the person answers, whether a
// typed value will stay in the page. Text that an agent or a page chose is
// stripped of control characters and cut to a bounded length.
//
// A same-user program that can send input to the desktop (xdotool on X11,
// UI Automation on Windows, System Events on macOS) can still answer these
// dialogs: they keep the answer away from programs that drive the
// browser, not from every program the person runs.
package nativeprompt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// Config is how a Dialog finds and runs the system's dialog.
type Config struct {
	// Program is the policy's pinentry (an absolute path); "" looks for a
	// graphical one in the system's own directories (never $PATH).
	Program string
	// Env reads the environment the dialog needs (DISPLAY,
	// WAYLAND_DISPLAY, ...); nil reads fillgate's own.
	Env func(string) string
	// Logger gets what happened (never a value); nil discards it.
	Logger *slog.Logger
}

// Dialog asks the person natively. It implements fill.Native.
type Dialog struct {
	cfg Config
	// platform picks the dialog to show now (see the per-OS files);
	// tests replace it.
	platform func(Config) (backend, error)
}

var _ fill.Native = (*Dialog)(nil)

// New returns a Dialog for cfg.
func New(cfg Config) *Dialog {
	if cfg.Env == nil {
		cfg.Env = os.Getenv
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dialog{cfg: cfg, platform: platform}
}

// Available reports whether a dialog can be shown here; its error says
// why not and how to mend it.
func (d *Dialog) Available() error {
	_, err := d.platform(d.cfg)
	return err
}

// Ask shows the dialogs for info and returns the person's answer: a
// typed value, an approval of the saved one (with the account and what
// the store needs), or Cancelled. It returns an error wrapping
// context.DeadlineExceeded when info.Budget runs out, ctx's error when
// ctx ends, and one wrapping fill.ErrNoDialog when no dialog could be
// shown or it ended without an answer. Every dialog is gone when Ask
// returns. The caller owns and zeroes the answer's Value and Asked.
func (d *Dialog) Ask(ctx context.Context, info fill.PromptInfo) (fill.Answer, error) {
	if info.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, info.Budget)
		defer cancel()
	}
	b, err := d.platform(d.cfg)
	if err != nil {
		return fill.Answer{}, fmt.Errorf("%w: %v", fill.ErrNoDialog, err)
	}
	deadline, _ := ctx.Deadline()
	f := &flow{b: b, t: newTexts(info, deadline), info: info, deadline: deadline}
	start := time.Now()
	a, err := f.run(ctx)
	log := d.cfg.Logger.With("dialog", b.name(), "took", time.Since(start).Round(time.Millisecond))
	switch {
	case err == nil:
		log.Debug("native dialog answered", "cancelled", a.Cancelled, "approved", a.Approved, "typed", a.Value != nil)
		return a, nil
	case ctx.Err() != nil:
		err = fmt.Errorf("nativeprompt: %w", ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
	default:
		err = fmt.Errorf("%w: %w", fill.ErrNoDialog, err)
	}
	a.Zero()
	log.Info("native dialog ended without an answer", "err", err)
	return fill.Answer{}, err
}

// choice is the button that ended a confirmation.
type choice int

// The buttons of a confirmation.
const (
	choiceOK    choice = iota // dialog.ok
	choiceNotOK               // dialog.notOK
)

// errCancelled: the person cancelled the dialog (its Cancel button,
// Escape, closing the window).
var errCancelled = errors.New("cancelled")

// dialog is one dialog to show. Every text is display text already.
type dialog struct {
	title  string
	text   string // the description; lines end with \n
	prompt string // the entry's label ("Password:")
	// user is the user name a credential dialog shows next to the entry
	// (Windows): the account the page shows, or the service.
	user   string
	ok     string // the OK button
	notOK  string // a third button, "" for none
	cancel string // the Cancel button
	// problem is shown above the entry ("Nothing was typed. ..."), or "".
	problem string
	// deadline is when the dialog gives up by itself; zero for never.
	deadline time.Time
}

// backend shows one dialog at a time: the system's own.
type backend interface {
	// name names the dialog program for logs and errors.
	name() string
	// getPIN shows d with a hidden entry and returns what the person
	// typed (the caller zeroes it), errCancelled, an error wrapping
	// context.DeadlineExceeded when d.deadline passed, or another error
	// when no dialog could be shown or it broke.
	getPIN(ctx context.Context, d dialog) ([]byte, error)
	// confirm shows d with its buttons and returns which was chosen, or
	// errors as getPIN.
	confirm(ctx context.Context, d dialog) (choice, error)
}

// picker is a backend that can show a list to pick an account from; a
// backend that cannot gets one dialog per account (cycle).
type picker interface {
	// pick shows accounts in a list and returns the index of the one
	// chosen, or errors as backend.getPIN.
	pick(ctx context.Context, d dialog, accounts []string) (int, error)
}
