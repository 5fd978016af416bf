package pinentry

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Process is one running pinentry and the session with it. The program
// runs in a process group (on Unix a session) of its own, with no
// controlling terminal, and dies, with everything it started, when the
// ctx given to Start ends or Close is called; on Linux also when fillgate
// dies (Pdeathsig).
type Process struct {
	*Conn
	cmd  *exec.Cmd
	stop func() bool
	in   *os.File // pinentry's stdin, our end
	out  *os.File // pinentry's stdout, our end
	// exited is closed once the program was reaped.
	exited chan struct{}
	once   sync.Once
	kill   func()
	errTxt *capped // the start of what it printed on stderr
}

// Start runs program (an absolute path) with exactly env as its whole
// environment ("KEY=value"; nil is empty, never fillgate's own) and no
// arguments, and reads its greeting. ctx bounds the program's life: when
// it ends, the program's process group is killed. The caller must Close
// the Process.
func Start(ctx context.Context, program string, env []string) (*Process, error) {
	if !filepath.IsAbs(program) {
		return nil, fmt.Errorf("pinentry: %q is not an absolute path", program)
	}
	cmd := exec.Command(program)
	cmd.Env = append([]string{}, env...)
	cmd.Dir = string(filepath.Separator)
	ownGroup(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pinentry: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = inR.Close()
		_ = inW.Close()
		return nil, fmt.Errorf("pinentry: pipe: %w", err)
	}
	errTxt := &capped{max: 512}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errTxt
	// Wait gives up on stderr shortly after the program exits, even if
	// something it started still holds it.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	// The child has its ends now (or never will).
	_ = inR.Close()
	_ = outW.Close()
	if err != nil {
		_ = inW.Close()
		_ = outR.Close()
		return nil, fmt.Errorf("pinentry: start %s: %w", program, err)
	}
	p := &Process{cmd: cmd, in: inW, out: outR, exited: make(chan struct{}), errTxt: errTxt}
	p.kill = func() { killGroup(cmd) }
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	p.Conn = NewConn(outR, inW, p.kill)
	p.stop = context.AfterFunc(ctx, p.kill)
	if err := p.Greet(ctx); err != nil {
		p.Close()
		if ctx.Err() == nil {
			if msg := p.errTxt.firstLine(); msg != "" {
				err = fmt.Errorf("%w (it said: %s)", err, msg)
			}
		}
		return nil, fmt.Errorf("pinentry: %s did not start a session: %w", filepath.Base(program), err)
	}
	return p, nil
}

// Pid is the program's process id (also its process group's).
func (p *Process) Pid() int {
	return p.cmd.Process.Pid
}

// Exited is closed once the program has exited and was reaped.
func (p *Process) Exited() <-chan struct{} {
	return p.exited
}

// Close says BYE (when the session is still usable and no dialog is
// shown, waiting at most a moment), kills the program's process group and
// waits for the program. It is safe to call more than once, and from
// another goroutine while a dialog is shown: that dialog's call then
// returns an error matching ErrClosed.
func (p *Process) Close() {
	p.once.Do(func() {
		p.stop()
		c := p.Conn
		if c.mu.TryLock() {
			if c.broken == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				_ = c.exchange(ctx, []byte("BYE\n"), nil)
				cancel()
			}
			c.mu.Unlock()
		}
		p.kill()
		_ = p.in.Close()
		<-p.exited
		_ = p.out.Close() // a read still blocked on it returns
		c.mu.Lock()
		c.fail(ErrClosed)
		c.mu.Unlock()
	})
}

// capped keeps the first max bytes written to it (pinentry's stderr,
// which holds its complaints, never a secret) and drops the rest.
type capped struct {
	mu  sync.Mutex
	max int
	b   []byte
}

// Write keeps what fits.
func (c *capped) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// firstLine is the first non-empty line kept, printable.
func (c *capped) firstLine() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for l := range strings.SplitSeq(string(c.b), "\n") {
		if l = strings.TrimSpace(printable(l)); l != "" {
			return l
		}
	}
	return ""
}
