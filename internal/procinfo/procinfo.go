// Package procinfo describes processes: their name, executable, parent and
// start time.
// The agent socket uses it to name the process that asked for a fill: the
// nearest ancestor of the socket peer that is not fillgate itself.
//
// Each OS has its own source: /proc on Linux, the kern.proc.pid and
// kern.procargs2 sysctls on macOS, a Toolhelp32 snapshot on Windows.
package procinfo

import (
	"errors"
	"fmt"
)

// Process is one process as the OS describes it.
type Process struct {
	PID int
	// PPID is the parent's pid, or 0 when the OS names none (or, on
	// Windows, when the recorded parent has exited and its pid was reused).
	PPID int
	// Name is the short process name (Linux comm, macOS p_comm, the
	// Windows image name).
	Name string
	// Exe is the executable's path, or "" when the OS would not tell (for
	// example for another user's process).
	Exe string
	// Start is when the process started, in the OS's own units: clock
	// ticks since boot on Linux (/proc/<pid>/stat's starttime),
	// microseconds since the epoch on macOS (p_starttime), 100 ns
	// intervals since 1601 on Windows (the creation FILETIME). It is
	// only compared for equality and order, never turned into a time.
	// With PID it names one process: a pid the OS reuses later gets
	// another Start. 0 when the OS would not tell.
	Start uint64
}

// ErrNotFound is returned by Get for a pid with no process.
var ErrNotFound = errors.New("no such process")

// maxDepth bounds the walk up the parent chain.
const maxDepth = 64

// Get describes the process pid.
func Get(pid int) (Process, error) {
	if pid <= 0 {
		return Process{}, fmt.Errorf("process %d: %w", pid, ErrNotFound)
	}
	p, err := get(pid)
	if err != nil {
		return Process{}, fmt.Errorf("process %d: %w", pid, err)
	}
	return p, nil
}

// Nearest returns the nearest process, starting with pid itself and then
// going up its parent chain, for which skip reports false. It fails when a
// process in the chain cannot be described or the chain ends first.
func Nearest(pid int, skip func(Process) bool) (Process, error) {
	cur := pid
	for range maxDepth {
		p, err := Get(cur)
		if err != nil {
			return Process{}, fmt.Errorf("walking the parents of %d: %w", pid, err)
		}
		if !skip(p) {
			return p, nil
		}
		if p.PPID <= 0 || p.PPID == p.PID {
			return Process{}, fmt.Errorf("walking the parents of %d: the chain ends at %d", pid, p.PID)
		}
		cur = p.PPID
	}
	return Process{}, fmt.Errorf("walking the parents of %d: more than %d levels", pid, maxDepth)
}

// Alive reports whether a process with pid exists (a process of another
// user counts).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}

// Args returns the command line of process pid, argv[0] first. It is
// supported on Linux and macOS; elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func Args(pid int) ([]string, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("process %d: %w", pid, ErrNotFound)
	}
	a, err := args(pid)
	if err != nil {
		return nil, fmt.Errorf("command line of process %d: %w", pid, err)
	}
	return a, nil
}
