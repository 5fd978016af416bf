package fgrun

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// standIn is what the test binary does when it stands for `fillgate fill
// --json` (a program of this package's own, so the test runs on every OS).
type standIn struct {
	Out, Err []string
	Code     int
	Sleep    bool
}

const standInEnv = "FGRUN_TEST_STAND_IN"

func TestMain(m *testing.M) {
	if spec := os.Getenv(standInEnv); spec != "" {
		var s standIn
		if err := json.Unmarshal([]byte(spec), &s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(125)
		}
		for _, l := range s.Out {
			fmt.Println(l)
		}
		for _, l := range s.Err {
			fmt.Fprintln(os.Stderr, l)
		}
		if s.Sleep {
			time.Sleep(time.Minute)
		}
		os.Exit(s.Code)
	}
	os.Exit(m.Run())
}

// run starts the test binary as a stand-in for `fillgate fill --json`.
func run(t *testing.T, s standIn) *Run {
	spec, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), standInEnv+"="+string(spec))
	return Start(t, cmd)
}

func TestResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		name   string
		run    standIn
		status fill.Status
		code   int
		ok     bool
	}{
		{"one result", standIn{Out: []string{`{"status":"ok","service":"s","field":"password","via":"extension","detail":"d"}`}}, fill.StatusOK, 0, true},
		{"its exit code", standIn{Out: []string{`{"status":"refused"}`}, Code: 3}, fill.StatusRefused, 3, true},
		{"two results", standIn{Out: []string{`{"status":"ok"}`, `{"status":"ok"}`}}, "", 0, false},
		{"an unknown field", standIn{Out: []string{`{"status":"ok","value":"x"}`}}, "", 0, false},
		{"no result", standIn{Err: []string{"hello"}, Code: 1}, "", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, c.run)
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
	r := run(t, standIn{Out: []string{"partial"}, Sleep: true})
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
	ended := run(t, standIn{})
	waiting, stop = ended.Awaiting(context.Background(), time.Minute)
	defer stop()
	select {
	case <-waiting.Done(): // the run ended
	case <-time.After(30 * time.Second):
		t.Error("the wait did not end with the run")
	}
	// The test's end kills it (Start's cleanup); Done then closes.
}
