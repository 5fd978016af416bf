package agentsock

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// findAgent names the process that asked: the nearest of the peer and its
// ancestors that is not fillgate (a `fillgate fill` or `fillgate mcp`
// client stands between the agent and the socket), with its start time,
// so that leases belong to that one process (fill.Agent.ProcessKey). When
// the walk fails the peer itself is the agent. A request forwarded over
// ssh has the local ssh or sshd process as its agent: each connection's
// own, so two ssh sessions are two agents (sessions multiplexed over one
// ControlMaster connection share its process, and are one).
func findAgent(peerPID int, self string) fill.Agent {
	a := fill.Agent{PID: peerPID, PeerPID: peerPID}
	p, err := procinfo.Nearest(peerPID, func(p procinfo.Process) bool { return isFillgate(p, self) })
	if err != nil {
		p, err = procinfo.Get(peerPID)
	}
	if err == nil {
		a.Name, a.PID, a.Exe, a.Start = p.Name, p.PID, p.Exe, p.Start
		a.Remote = tunnel(p)
	}
	return a
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

// isFillgate reports whether p runs fillgate: this very executable, or any
// executable named fillgate. Without a known executable, its name decides.
func isFillgate(p procinfo.Process, self string) bool {
	name := p.Name
	if p.Exe != "" {
		if self != "" && samePath(p.Exe, self) {
			return true
		}
		name = filepath.Base(p.Exe)
	}
	return strings.EqualFold(name, "fillgate") || strings.EqualFold(name, "fillgate.exe")
}

// selfExe is this process's executable with symlinks resolved, or "".
func selfExe() string {
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

// FindAgent names the agent behind pid: the nearest of pid and its
// ancestors that is not fillgate. The CDP path, which runs the fill in the
// client process, uses it with its own pid.
func FindAgent(pid int) fill.Agent { return findAgent(pid, selfExe()) }
