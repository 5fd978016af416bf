//go:build !windows

package agentsock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// File names inside the socket directory.
const (
	agentName = "agent.sock" // the stable path, owned by the first live host
	hostsName = "hosts"      // every host's own <pid>.sock
	lockName  = "agent.lock" // serialises claims of agent.sock
)

const (
	// probeTimeout bounds the dial that tells a live socket from a stale one.
	probeTimeout = time.Second
	// recheckDelay separates the two probes that must both be refused
	// before a socket counts as stale (macOS refuses a live socket whose
	// backlog is full).
	recheckDelay = 100 * time.Millisecond
)

// SocketPath is the stable agent socket in dir, the path clients try
// first.
func SocketPath(dir string) string { return filepath.Join(dir, agentName) }

// Listener is a host's agent socket: its own hosts/<pid>.sock and, while no
// other live host owns it, agent.sock. It retries the claim of agent.sock
// twice a second until closed.
type Listener struct {
	dir       string
	id        int // the pid in hosts/<pid>.sock
	hostPath  string
	agentPath string
	lockPath  string

	ctx    context.Context // ends on Close
	cancel context.CancelFunc
	conns  chan net.Conn  // accepted on either socket
	wg     sync.WaitGroup // the accept loops and the claim loop
	once   sync.Once

	mu        sync.Mutex
	closed    bool
	host      *net.UnixListener
	hostInfo  os.FileInfo
	agent     *net.UnixListener // nil while another host owns agent.sock
	agentInfo os.FileInfo       // the agent.sock file this listener created
}

// listen makes dir (0700, owned by the user), listens on dir/hosts/<pid>.sock
// (0600) and claims dir/agent.sock unless another live host owns it.
func listen(dir string, cfg listenConfig) (*Listener, error) {
	if err := dirs.Ensure(dir); err != nil {
		return nil, fmt.Errorf("agent socket directory: %w", err)
	}
	hosts := filepath.Join(dir, hostsName)
	if err := dirs.Ensure(hosts); err != nil {
		return nil, fmt.Errorf("agent socket directory: %w", err)
	}
	l := &Listener{
		dir:       dir,
		id:        cfg.id,
		hostPath:  filepath.Join(hosts, strconv.Itoa(cfg.id)+".sock"),
		agentPath: SocketPath(dir),
		lockPath:  filepath.Join(dir, lockName),
		conns:     make(chan net.Conn),
	}
	for _, p := range []string{l.hostPath, l.agentPath} {
		if err := checkPathLen(p); err != nil {
			return nil, err
		}
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())

	ctx, cancel := context.WithTimeout(l.ctx, claimWait)
	defer cancel()
	live, err := clearStale(ctx, l.hostPath)
	if err == nil && live {
		err = errors.New("another live host listens on it")
	}
	if err != nil {
		l.cancel()
		return nil, fmt.Errorf("host socket %s: %w", l.hostPath, err)
	}
	ul, info, err := bindUnix(l.hostPath)
	if err != nil {
		l.cancel()
		return nil, fmt.Errorf("host socket: %w", err)
	}
	l.host, l.hostInfo = ul, info
	l.startAccept(ul)

	// Best effort: a failed claim is retried by the claim loop.
	_ = l.claim(ctx)
	l.prune(ctx)

	l.wg.Add(1)
	go l.claimLoop(cfg.claimEvery)
	return l, nil
}

// Close stops listening and removes the socket files this listener
// created: its hosts/<pid>.sock and, if it still owns it, agent.sock (never
// an agent.sock another host has since put there). Connections already
// accepted are not closed; Serve's context governs them.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		l.cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.closed = true
		// Remove each file while its listener still answers: a racing
		// claim then sees a live socket or no file, never a stale one of
		// ours that it would replace while we remove it.
		if l.agent != nil {
			err = errors.Join(err, removeOwn(l.agentPath, l.agentInfo), l.agent.Close())
			l.agent, l.agentInfo = nil, nil
		}
		err = errors.Join(err, removeOwn(l.hostPath, l.hostInfo), l.host.Close())
	})
	l.wg.Wait()
	if err != nil {
		return fmt.Errorf("closing the agent socket: %w", err)
	}
	return nil
}

// claim takes agent.sock unless a live host (this one included) serves it.
// Claims are serialised between hosts by the lock file.
func (l *Listener) claim(ctx context.Context) error {
	unlock, err := lock(ctx, l.lockPath)
	if err != nil {
		return err
	}
	defer unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return net.ErrClosed
	}
	if l.agent != nil {
		if isSameFile(l.agentPath, l.agentInfo) {
			return nil
		}
		// Our agent.sock was removed or replaced: no client reaches this
		// listener any more.
		l.agent.Close()
		l.agent, l.agentInfo = nil, nil
	}
	live, err := clearStale(ctx, l.agentPath)
	if err != nil {
		return fmt.Errorf("claiming %s: %w", l.agentPath, err)
	}
	if live {
		return nil
	}
	ul, info, err := bindUnix(l.agentPath)
	if err != nil {
		return fmt.Errorf("claiming %s: %w", l.agentPath, err)
	}
	l.agent, l.agentInfo = ul, info
	l.startAccept(ul)
	return nil
}

// prune removes the hosts/<pid>.sock files of hosts that died without
// closing them: the pid is gone and nothing answers on the socket.
func (l *Listener) prune(ctx context.Context) {
	hosts := filepath.Dir(l.hostPath)
	entries, err := os.ReadDir(hosts)
	if err != nil {
		return
	}
	for _, e := range entries {
		s, ok := strings.CutSuffix(e.Name(), ".sock")
		pid, err := strconv.Atoi(s)
		if !ok || err != nil || pid == l.id || procinfo.Alive(pid) {
			continue
		}
		_, _ = clearStale(ctx, filepath.Join(hosts, e.Name()))
	}
}

// clearStale reports whether a live listener answers on path. When none
// does, it makes sure path is free: a socket refused twice is its dead
// owner's leftover and is removed. Anything else at path is left alone and
// reported as an error.
func clearStale(ctx context.Context, path string) (live bool, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return false, fmt.Errorf("%s is not a socket: remove it", path)
	}
	for try := range 2 {
		if try > 0 {
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(recheckDelay):
			}
		}
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		c, err := dialUnix(pctx, path)
		cancel()
		switch {
		case err == nil:
			c.Close()
			return true, nil
		case errors.Is(err, fs.ErrNotExist):
			return false, nil
		case !isRefused(err):
			// Busy or unreadable: never take a socket we cannot prove dead.
			return false, fmt.Errorf("probing %s: %w", path, err)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("removing the stale socket: %w", err)
	}
	return false, nil
}

// bindUnix listens on path with mode 0600. The listener never unlinks path
// itself: Close removes it only after checking it is still ours.
func bindUnix(path string) (*net.UnixListener, os.FileInfo, error) {
	ul, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("listening on %s: %w", path, err)
	}
	ul.SetUnlinkOnClose(false)
	fail := func(err error) (*net.UnixListener, os.FileInfo, error) {
		ul.Close()
		_ = os.Remove(path)
		return nil, nil, err
	}
	if err := restrict(path); err != nil {
		return fail(fmt.Errorf("restricting %s: %w", path, err))
	}
	info, err := os.Lstat(path)
	if err != nil {
		return fail(fmt.Errorf("checking %s: %w", path, err))
	}
	return ul, info, nil
}

func dialUnix(ctx context.Context, path string) (*net.UnixConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	return c.(*net.UnixConn), nil
}

// dialEndpoint connects to the socket at path.
func dialEndpoint(ctx context.Context, path string) (net.Conn, error) { return dialUnix(ctx, path) }

// hostEndpoints lists the hosts/<pid>.sock files in dir, in name order.
func hostEndpoints(dir string) []string {
	hosts, _ := filepath.Glob(filepath.Join(dir, hostsName, "*.sock"))
	return hosts
}

// endpointID is the pid in a hosts/<pid>.sock path (0 for agent.sock).
func endpointID(path string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(path), ".sock"))
	return n
}

// isSameFile reports whether path is still the file described by info.
func isSameFile(path string, info os.FileInfo) bool {
	fi, err := os.Lstat(path)
	return err == nil && os.SameFile(fi, info)
}

// removeOwn removes path if it is still the file described by info.
func removeOwn(path string, info os.FileInfo) error {
	if !isSameFile(path, info) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", path, err)
	}
	return nil
}
