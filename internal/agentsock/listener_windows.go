package agentsock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/windows"

	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// On Windows the endpoints are named pipes, which Wine has and every
// Windows has, whose peer can be named (GetNamedPipeClientProcessId) and
// which vanish with their last handle: a host that dies leaves no stale
// endpoint to tell from a live one. Pipe names are global, so each is
// derived from the user and the directory:
//
//	\\.\pipe\fillgate-<key>-agent   the stable endpoint (SocketPath)
//	\\.\pipe\fillgate-<key>-<pid>   each host's own
//
// The directory holds what a pipe cannot: hosts\<pid>.pipe, an empty
// file per live host (Windows cannot list pipes by prefix reliably, and
// Wine cannot list them at all), and agent.lock, which serialises claims.
const (
	pipePrefix = `\\.\pipe\fillgate-`
	hostsName  = "hosts"      // a <pid>.pipe marker per host
	lockName   = "agent.lock" // serialises claims of the stable pipe
	markerExt  = ".pipe"
)

// Listener is a host's pipes: its own and, while no other live host
// holds it, the stable one. It retries the claim of the stable pipe
// twice a second until closed.
type Listener struct {
	dir       string
	id        int
	hostPath  string // the host's own pipe
	agentPath string // the stable pipe
	lockPath  string
	marker    string // hosts\<id>.pipe

	ctx    context.Context // ends on Close
	cancel context.CancelFunc
	conns  chan net.Conn  // accepted on either pipe
	wg     sync.WaitGroup // the accept loops and the claim loop
	once   sync.Once

	mu     sync.Mutex
	closed bool
	host   *pipeListener
	agent  *pipeListener // nil while another host holds the stable pipe
}

// SocketPath is the stable pipe of dir, the one clients try first.
func SocketPath(dir string) string { return pipeName(dir, "agent") }

// hostPipe is the pipe of the host with this id.
func hostPipe(dir string, id int) string { return pipeName(dir, strconv.Itoa(id)) }

// pipeName is \\.\pipe\fillgate-<key>-<suffix>, key being the first 16
// hex digits of SHA-256 over the user's SID and the directory, so that
// two users, or two directories, never share a pipe.
func pipeName(dir, suffix string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	who := ""
	if sid, err := userSID(); err == nil {
		who = sid.String()
	}
	sum := sha256.Sum256([]byte(strings.ToLower(who + "\n" + filepath.Clean(dir))))
	return pipePrefix + hex.EncodeToString(sum[:8]) + "-" + suffix
}

// userSID is this process's user.
var userSID = sync.OnceValues(func() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("our own user: %w", err)
	}
	return tu.User.Sid.Copy()
})

// listen makes dir and dir\hosts (in %LOCALAPPDATA%, private to the user
// through its ACL), listens on the host's own pipe, leaves its marker and
// claims the stable pipe unless another live host holds it.
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
		hostPath:  hostPipe(dir, cfg.id),
		agentPath: SocketPath(dir),
		lockPath:  filepath.Join(dir, lockName),
		marker:    filepath.Join(hosts, strconv.Itoa(cfg.id)+markerExt),
		conns:     make(chan net.Conn),
	}
	live, err := pipeExists(l.hostPath)
	if err == nil && live {
		err = errors.New("another live host listens on it")
	}
	if err != nil {
		return nil, fmt.Errorf("host pipe %s: %w", l.hostPath, err)
	}
	pl, err := listenPipe(l.hostPath)
	if err != nil {
		return nil, fmt.Errorf("host pipe: %w", err)
	}
	if err := os.WriteFile(l.marker, nil, 0o600); err != nil {
		pl.Close()
		return nil, fmt.Errorf("host pipe: %w", err)
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	l.host = pl
	l.startAccept(pl)

	ctx, cancel := context.WithTimeout(l.ctx, claimWait)
	defer cancel()
	// Best effort: a failed claim is retried by the claim loop.
	_ = l.claim(ctx)
	l.prune()

	l.wg.Add(1)
	go l.claimLoop(cfg.claimEvery)
	return l, nil
}

// Close stops listening on both pipes (which then vanish: a pipe lives
// only as long as its handles) and removes this host's marker.
// Connections already accepted are not closed; Serve's context governs
// them.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		l.cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		l.closed = true
		if l.agent != nil {
			err = l.agent.Close()
			l.agent = nil
		}
		err = errors.Join(err, l.host.Close())
		if rerr := os.Remove(l.marker); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("removing %s: %w", l.marker, rerr))
		}
	})
	l.wg.Wait()
	if err != nil {
		return fmt.Errorf("closing the agent pipe: %w", err)
	}
	return nil
}

// claim takes the stable pipe unless a live host (this one included)
// holds it. Claims are serialised between hosts by the lock file; the
// first-instance flag makes a claim fail anyway when someone else made
// the pipe in the meantime.
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
		return nil // nobody can take a pipe from the process that holds it
	}
	live, err := pipeExists(l.agentPath)
	if err != nil {
		return fmt.Errorf("claiming %s: %w", l.agentPath, err)
	}
	if live {
		return nil
	}
	pl, err := listenPipe(l.agentPath)
	if err != nil {
		return fmt.Errorf("claiming %s: %w", l.agentPath, err)
	}
	l.agent = pl
	l.startAccept(pl)
	return nil
}

// prune removes the markers of hosts that died without closing: the pid
// is gone and its pipe with it.
func (l *Listener) prune() {
	markers, _ := filepath.Glob(filepath.Join(l.dir, hostsName, "*"+markerExt))
	for _, m := range markers {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(m), markerExt))
		if err != nil || pid == l.id || procinfo.Alive(pid) {
			continue
		}
		if live, err := pipeExists(hostPipe(l.dir, pid)); err == nil && !live {
			_ = os.Remove(m)
		}
	}
}

// hostEndpoints lists the pipes of the hosts that left a marker in dir.
func hostEndpoints(dir string) []string {
	markers, _ := filepath.Glob(filepath.Join(dir, hostsName, "*"+markerExt))
	var out []string
	for _, m := range markers {
		if pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(m), markerExt)); err == nil {
			out = append(out, hostPipe(dir, pid))
		}
	}
	return out
}

// endpointID is the pid a host's pipe is named for (0 for the stable pipe).
func endpointID(path string) int {
	n, _ := strconv.Atoi(path[strings.LastIndexByte(path, '-')+1:])
	return n
}

// checkPathLen has nothing to check: pipe names are a fixed length.
func checkPathLen(string) error { return nil }
