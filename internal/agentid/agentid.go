// Package agentid names the agent behind a request: the process that
// asked, found from the agent socket's peer by walking up past fillgate's
// own front ends (a `fillgate fill` or `fillgate mcp` client stands between
// the agent and the socket), with its start time and the tunnel it came
// through. It also says when to trust an agent another host names, and
// which client names a prompt may show.
package agentid

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// Find names the agent behind peerPID: the nearest of the peer and its
// ancestors that is not fillgate (self, this process's executable as Self
// returns it, or any executable named fillgate), with its start time, so
// that leases belong to that one process (fill.Agent.ProcessKey). When the
// walk fails the peer itself is the agent. A request forwarded over ssh
// has the local ssh or sshd process as its agent: each connection's own,
// so two ssh sessions are two agents (sessions multiplexed over one
// ControlMaster connection share its process, and are one).
func Find(peerPID int, self string) fill.Agent {
	a := fill.Agent{PID: peerPID, PeerPID: peerPID}
	p, err := procinfo.Nearest(peerPID, func(p procinfo.Process) bool { return IsFillgate(p, self) })
	if err != nil {
		p, err = procinfo.Get(peerPID)
	}
	if err == nil {
		a.Name, a.PID, a.Exe, a.Start = p.Name, p.PID, p.Exe, p.Start
		a.Remote = tunnel(p)
	}
	return a
}

// Of names the agent behind pid, as Find does for this executable. The
// CDP path, which runs the fill in the client process, uses it with its
// own pid.
func Of(pid int) fill.Agent { return Find(pid, Self()) }

// Forwarded returns the agent a in a fill that another host forwarded
// after routing it, when the peer that sent it (peerPID) runs this very
// executable (self): another fillgate host. Else ok is false, and the
// agent is found behind the peer as for any request. Its client is
// cleaned as Client cleans one.
func Forwarded(a *fill.Agent, peerPID int, self string) (agent fill.Agent, ok bool) {
	if a == nil || self == "" {
		return fill.Agent{}, false
	}
	p, err := procinfo.Get(peerPID)
	if err != nil || p.Exe == "" || !samePath(p.Exe, self) {
		return fill.Agent{}, false
	}
	agent = *a
	agent.Via = Client(agent.Via)
	return agent, true
}

// knownClients are the fillgate front ends an agent can come through.
var knownClients = []string{"fillgate fill", "fillgate mcp", "fillgate demo"}

// Client returns the display-only client name s when it is one of
// fillgate's own front ends, and "" otherwise: the prompt is trusted UI,
// so an agent must not be able to put text of its choosing there.
func Client(s string) string {
	if slices.Contains(knownClients, s) {
		return s
	}
	return ""
}

// tunnel names the tunnel a request came through when the process that
// asked is one (the agent is then on the far end), or "".
func tunnel(p procinfo.Process) string {
	name := p.Name
	if p.Exe != "" {
		name = filepath.Base(p.Exe)
	}
	switch strings.ToLower(strings.TrimSuffix(name, ".exe")) {
	case "ssh", "sshd":
		return "ssh"
	}
	return ""
}

// IsFillgate reports whether p runs fillgate: this very executable (self,
// as Self returns it), or any executable named fillgate. Without a known
// executable, its name decides.
func IsFillgate(p procinfo.Process, self string) bool {
	name := p.Name
	if p.Exe != "" {
		if self != "" && samePath(p.Exe, self) {
			return true
		}
		name = filepath.Base(p.Exe)
	}
	return strings.EqualFold(name, "fillgate") || strings.EqualFold(name, "fillgate.exe")
}

// Self is this process's executable with symlinks resolved, or "".
func Self() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Clean(exe)
}

// samePath compares an executable path the OS reported with ours.
func samePath(exe, self string) bool {
	exe = filepath.Clean(exe)
	if filepath.IsAbs(exe) {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		// Case-insensitive file systems by default.
		return strings.EqualFold(exe, self)
	}
	return exe == self
}
