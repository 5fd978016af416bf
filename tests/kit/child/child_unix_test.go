//go:build unix

package child

import (
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// recorder is a testing.TB whose cleanups and errors the test runs and
// reads itself.
type recorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper()          {}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

func TestStartEndsTheHelperWithTheTest(t *testing.T) {
	// cat ends when its stdin closes: the test's end waits for it.
	r := &recorder{TB: t}
	cmd := exec.Command("cat")
	Start(r, cmd)
	r.end()
	if len(r.errs) != 0 || cmd.ProcessState == nil {
		t.Errorf("a helper that reads stdin to its end: errors %q, waited for %v", r.errs, cmd.ProcessState != nil)
	}

	// sleep does not read stdin: it is killed, and the test told.
	r = &recorder{TB: t}
	cmd = exec.Command("sleep", "600")
	Start(r, cmd)
	start := time.Now()
	r.end()
	if len(r.errs) != 1 || cmd.ProcessState == nil || cmd.ProcessState.Success() {
		t.Errorf("a helper that ignores its stdin: errors %q, state %v", r.errs, cmd.ProcessState)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("it was killed after %v", took)
	}
}
