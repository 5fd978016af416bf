//go:build unix

package standins

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// MidStep is a clock in the middle of a TOTP time step (10 s into it),
// for a source that would wait for a fresh step near its end: with it, a
// wait is a test failure (it panics).
type MidStep struct{}

// Now is 10 s into a 30 s step.
func (MidStep) Now() time.Time { return time.Unix(1_700_000_010, 0) }

// After panics: nothing should wait mid-step.
func (MidStep) After(time.Duration) <-chan time.Time { panic("waited mid-step") }

// Case is one run of a source against a stand-in: what the source is
// asked, the arguments the store must get, and how the store answers.
type Case struct {
	Name string
	Req  secrets.Request
	// Args are the arguments the store must be run with.
	Args []string
	// Code, Stderr and Out are the store's answer: its exit code, and what
	// it prints (on stderr when Stderr).
	Code   int
	Stderr bool
	Out    []byte
	// Want is the value the source must return (compared, never printed);
	// WantErr, when set instead, the error it must return (errors.Is) and
	// WantFix a part of its message.
	Want    []byte
	WantErr error
	WantFix string
}

// RunCases runs each case: fetch starts the source's Fetch; the stand-in
// (under d) is checked while it runs (its argv, its environment: only
// names in allowed, and no secret in either) and answers as the case says.
func RunCases(t *testing.T, d *Dir, allowed []string, fetch func(context.Context, secrets.Request) ([]byte, error), secretsToScan [][]byte, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			type res struct {
				v   []byte
				err error
			}
			done := make(chan res, 1)
			returned := make(chan struct{})
			go func() {
				v, err := fetch(context.Background(), c.Req)
				done <- res{v, err}
				close(returned)
			}()
			run := d.NextOr(returned)
			if run == nil {
				r := <-done
				t.Fatalf("the source returned without running the store: %v", r.err)
			}
			if !slices.Equal(run.Args, c.Args) {
				t.Errorf("argv = %q; want %q", run.Args, c.Args)
			}
			for _, n := range run.EnvNames() {
				if !slices.Contains(allowed, n) && !(strings.HasPrefix(n, "OP_") && slices.Contains(allowed, "OP_*")) {
					t.Errorf("the store got %s in its environment", n)
				}
			}
			if bytes.Contains(run.Environ(), []byte("junk-env")) {
				t.Error("the store got variables it does not need")
			}
			for _, s := range append(slices.Clone(secretsToScan), c.Out) {
				if len(s) >= 8 {
					leakscan.Bytes(t, s, "the store's argv", run.Cmdline())
					leakscan.Bytes(t, s, "the store's environment", run.Environ())
				}
			}
			out := c.Out
			// What a store prints on stderr is never repeated: a marker
			// in it must not reach the error.
			marker := leakscan.NewSecret(t)
			if c.Stderr {
				out = append(slices.Clone(out), append([]byte(" "), marker...)...)
			}
			run.Answer(c.Code, c.Stderr, out)
			r := <-done
			switch {
			case c.WantErr != nil:
				if !errors.Is(r.err, c.WantErr) || !strings.Contains(r.err.Error(), c.WantFix) {
					t.Errorf("error = %v; want %v saying %q", r.err, c.WantErr, c.WantFix)
				}
				if r.err != nil {
					leakscan.Bytes(t, marker, "the error (the store's stderr)", []byte(r.err.Error()))
				}
			case r.err != nil:
				t.Errorf("Fetch: %v", r.err)
			case !bytes.Equal(r.v, c.Want):
				t.Error("value differed")
			}
		})
	}
}
