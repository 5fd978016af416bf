// Package browserproc starts and stops browser processes: each in a
// process group of its own, so that stopping it also stops its helpers and
// the native hosts it started. `fillgate demo` and the end-to-end tests use
// it to run Chromium with a throw-away profile.
package browserproc

import (
	"os/exec"
	"time"
)

// Proc is a process started in its own process group.
type Proc struct {
	Cmd  *exec.Cmd
	done chan struct{}
}

// StartGroup starts cmd in a new process group and waits for it in the
// background.
func StartGroup(cmd *exec.Cmd) (*Proc, error) {
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Stop asks the process group to exit, kills it if it has not after five
// seconds, and waits for the process. It is safe to call more than once.
func (p *Proc) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	signalGroup(p.Cmd, false)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		signalGroup(p.Cmd, true)
		<-p.done
	}
}
