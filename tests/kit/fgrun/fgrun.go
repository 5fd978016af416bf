// Package fgrun runs the fillgate binary as a person or an agent does: a
// command to its end (Command), or `fillgate fill --json` in the
// background (Start), whose one JSON result and exit code it reads back
// (Result, or Checked with a test's ledger); and it reads what a first
// `fillgate install --json` reported (Installed).
package fgrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/fillresult"
	"github.com/fillgate/fillgate/tests/kit/ledger"
)

// Command runs cmd (fillgate with its arguments, its environment and any
// stdin) to its end and returns its stdout, stderr and exit code. It fails
// t if cmd could not run.
func Command(t testing.TB, cmd *exec.Cmd) (stdout, stderr []byte, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	code, err := fillresult.ExitCode(cmd.Run())
	if err != nil {
		t.Fatalf("run %s: %v", strings.Join(cmd.Args[:min(2, len(cmd.Args))], " "), err)
	}
	return out.Bytes(), errOut.Bytes(), code
}

// Run is one run of `fillgate fill --json`.
type Run struct {
	Cmd     *exec.Cmd
	stdout  bytes.Buffer
	stderr  bytes.Buffer
	Started time.Time
	Ended   time.Time // set before Done is closed
	done    chan struct{}
	err     error
}

// Start starts cmd, a `fillgate fill --json` command with its environment
// (and whatever else the caller set on it), capturing its output. A run
// still going when the test ends is killed then.
func Start(t testing.TB, cmd *exec.Cmd) *Run {
	t.Helper()
	r := &Run{Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.stdout, &r.stderr
	r.Started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start fillgate fill: %v", err)
	}
	go func() {
		r.err = cmd.Wait()
		r.Ended = time.Now()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// Done is closed once the run has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Awaiting is a context for waiting, at most d, on something the run is
// to bring about (its prompt, its dialog): it also ends as soon as the
// run ends, which then will not bring it about.
func (r *Run) Awaiting(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	go func() {
		select {
		case <-r.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Stdout is what the run printed on its stdout, once it has ended; nil
// while it runs.
func (r *Run) Stdout() []byte { return r.output(&r.stdout) }

// Stderr is what the run printed on its stderr, once it has ended; nil
// while it runs.
func (r *Run) Stderr() []byte { return r.output(&r.stderr) }

func (r *Run) output(b *bytes.Buffer) []byte {
	select {
	case <-r.done:
		return b.Bytes()
	default:
		return nil
	}
}

// Result waits until the run ends (or ctx does) and returns its result and
// exit code. Nothing but that one JSON result may be on its stdout, and it
// may hold no field fill.Result does not know. An error never quotes the
// output.
func (r *Run) Result(ctx context.Context) (fill.Result, int, error) {
	select {
	case <-r.done:
	case <-ctx.Done():
		return fill.Result{}, 0, fmt.Errorf("fillgate fill did not finish: %w", ctx.Err())
	}
	err := r.err
	if errors.Is(err, exec.ErrWaitDelay) {
		// It exited 0; with Cmd.WaitDelay set, a process it left
		// holding its output open is no part of its result.
		err = nil
	}
	code, err := fillresult.ExitCode(err)
	if err != nil {
		return fill.Result{}, 0, fmt.Errorf("fillgate fill: %w", err)
	}
	res, err := fillresult.Decode(r.stdout.Bytes())
	if err != nil {
		return fill.Result{}, code, errors.New("fillgate fill --json printed something that is not one result")
	}
	return res, code, nil
}

// Checked is Result for a test that keeps a ledger: it waits for the run
// (or ctx), keeps what the run printed in l for the final scan, fails t
// if the run printed no one result or exited with a code other than its
// status's, and logs the result as l lets it be shown.
func (r *Run) Checked(t testing.TB, ctx context.Context, l *ledger.Ledger) fill.Result {
	t.Helper()
	res, code, err := r.Result(ctx)
	l.Keep(r.Stdout(), r.Stderr())
	if err != nil {
		t.Fatalf("%v: %s (stderr %s)", err, l.Withheld(r.Stdout()), l.Withheld(r.Stderr()))
	}
	if code != res.Status.ExitCode() {
		t.Errorf("exit code %d for status %s", code, res.Status)
	}
	t.Logf("fillgate fill %s → %s", strings.Join(r.Cmd.Args[2:], " "), l.Withheld(bytes.TrimSpace(r.Stdout())))
	return res
}
