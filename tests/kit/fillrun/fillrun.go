// Package fillrun runs `fillgate fill --json` as an agent does, in the
// background, and reads back its one JSON result and its exit code.
package fillrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

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
	code := 0
	var exit *exec.ExitError
	switch {
	case r.err == nil, errors.Is(r.err, exec.ErrWaitDelay):
		// It exited 0; with Cmd.WaitDelay set, a process it left
		// holding its output open is no part of its result.
	case errors.As(r.err, &exit):
		code = exit.ExitCode()
	default:
		return fill.Result{}, 0, fmt.Errorf("fillgate fill: %w", r.err)
	}
	var res fill.Result
	dec := json.NewDecoder(bytes.NewReader(r.stdout.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil || dec.More() {
		return fill.Result{}, code, errors.New("fillgate fill --json printed something that is not one result")
	}
	return res, code, nil
}
