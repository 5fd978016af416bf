package agentsock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"time"
)

// The agent endpoints: every host listens on one of its own and, while no
// other live host holds it, on the stable one clients try first. On Unix
// both are AF_UNIX sockets in a 0700 directory (listener_unix.go); on
// Windows they are named pipes that admit only the user
// (listener_windows.go). Each of those files defines Listener, listen,
// SocketPath, claim, Close and the host endpoints of a directory; the
// methods below are shared and use the fields both Listeners have (ctx,
// conns, wg, mu, hostPath, agent).

const (
	// claimEvery is how often a listener checks the stable endpoint: a
	// host that does not own it takes it over within about this long
	// once its owner is gone (a dial of a local socket; cheap).
	claimEvery = 500 * time.Millisecond
	// claimWait bounds one claim: waiting for the lock and probing.
	claimWait = 2 * time.Second
	// lockPoll is how often a waiting claim retries the lock.
	lockPoll = 10 * time.Millisecond
	// acceptBackoff is the pause after a failed accept (e.g. out of fds).
	acceptBackoff = 50 * time.Millisecond
)

// errLocked means another host holds the claim lock.
var errLocked = errors.New("another host holds the agent.sock lock")

// listenConfig holds what tests may change.
type listenConfig struct {
	id         int           // the pid in the host's own endpoint name
	claimEvery time.Duration // the period of the claim loop
}

// Listen listens on the host's own endpoint in dir and claims the stable
// one (SocketPath) unless another live host owns it. It fails only when
// the host's own endpoint cannot be set up: the stable one is claimed
// later when it cannot be now.
func Listen(dir string) (*Listener, error) {
	return listen(dir, listenConfig{id: os.Getpid(), claimEvery: claimEvery})
}

// ListenAs is Listen with id in place of this process's pid in the name
// of the host's own endpoint, so that one process can run several hosts
// (tests of routing among them).
func ListenAs(dir string, id int) (*Listener, error) {
	return listen(dir, listenConfig{id: id, claimEvery: claimEvery})
}

// Path is the host's own endpoint.
func (l *Listener) Path() string { return l.hostPath }

// Others lists the endpoints of the other hosts in the listener's
// directory (hosts/<id>.sock, or their pipes), in name order.
func (l *Listener) Others() []string {
	return slices.DeleteFunc(hostEndpoints(l.dir), func(p string) bool { return p == l.hostPath })
}

// OwnsAgentSocket reports whether this listener currently serves the
// stable endpoint, SocketPath(dir).
func (l *Listener) OwnsAgentSocket() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.agent != nil
}

// accept returns the next connection from either endpoint.
func (l *Listener) accept(ctx context.Context) (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.ctx.Done():
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Listener) startAccept(ln net.Listener) {
	l.wg.Add(1)
	go l.acceptLoop(ln)
}

func (l *Listener) acceptLoop(ln net.Listener) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(acceptBackoff):
			}
			continue
		}
		select {
		case l.conns <- c:
		case <-l.ctx.Done():
			c.Close()
			return
		}
	}
}

func (l *Listener) claimLoop(every time.Duration) {
	defer l.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(l.ctx, claimWait)
		_ = l.claim(ctx) // retried on the next tick
		cancel()
	}
}

// lock waits for the claim lock until ctx ends.
func lock(ctx context.Context, path string) (unlock func(), err error) {
	for {
		unlock, err := tryLock(path)
		if !errors.Is(err, errLocked) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s: %w", path, errLocked)
		case <-time.After(lockPoll):
		}
	}
}
