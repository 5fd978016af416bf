package fgrun

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// sh starts a shell script that stands for `fillgate fill --json`.
func sh(t *testing.T, script string) *Run {
	return Start(t, exec.Command("sh", "-c", script))
}

func TestResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		name, script string
		status       fill.Status
		code         int
		ok           bool
	}{
		{"one result", `echo '{"status":"ok","service":"s","field":"password","via":"extension","detail":"d"}'`, fill.StatusOK, 0, true},
		{"its exit code", `echo '{"status":"refused"}'; exit 3`, fill.StatusRefused, 3, true},
		{"two results", `echo '{"status":"ok"}'; echo '{"status":"ok"}'`, "", 0, false},
		{"an unknown field", `echo '{"status":"ok","value":"x"}'`, "", 0, false},
		{"no result", `echo hello >&2; exit 1`, "", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := sh(t, c.script)
			res, code, err := r.Result(ctx)
			if (err == nil) != c.ok || code != c.code || res.Status != c.status {
				t.Errorf("got %+v, exit %d, %v; want status %q, exit %d, ok %v", res, code, err, c.status, c.code, c.ok)
			}
			if r.Ended.Before(r.Started) || len(r.Stdout())+len(r.Stderr()) == 0 {
				t.Errorf("started %v, ended %v, stdout %q, stderr %q", r.Started, r.Ended, r.Stdout(), r.Stderr())
			}
		})
	}
}

func TestStillRunning(t *testing.T) {
	r := sh(t, `echo partial; exec sleep 60`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, _, err := r.Result(ctx); err == nil {
		t.Fatal("a run that goes on has a result")
	}
	if r.Stdout() != nil || r.Stderr() != nil {
		t.Error("the output of a run that goes on is readable")
	}
	select {
	case <-r.Done():
		t.Error("done while it runs")
	default:
	}
	waiting, stop := r.Awaiting(context.Background(), 50*time.Millisecond)
	defer stop()
	<-waiting.Done() // by its deadline: the run goes on
	ended := sh(t, `exit 0`)
	waiting, stop = ended.Awaiting(context.Background(), time.Minute)
	defer stop()
	select {
	case <-waiting.Done(): // the run ended
	case <-time.After(30 * time.Second):
		t.Error("the wait did not end with the run")
	}
	// The test's end kills it (Start's cleanup); Done then closes.
}
