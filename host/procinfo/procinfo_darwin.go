package procinfo

import (
	"bytes"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

func get(pid int) (Process, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Process{}, fmt.Errorf("sysctl kern.proc.pid: %w", err)
	}
	// A pid with no process yields an empty record.
	if int(kp.Proc.P_pid) != pid {
		return Process{}, ErrNotFound
	}
	p := Process{
		PID:  pid,
		PPID: int(kp.Eproc.Ppid),
		Name: unix.ByteSliceToString(kp.Proc.P_comm[:]),
	}
	if exe, err := execPath(pid); err == nil {
		p.Exe = exe
	}
	return p, nil
}

// execPath reads the executable's path from kern.procargs2: a 32-bit argc,
// then the path the process was executed as, NUL-terminated.
func execPath(pid int) (string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return "", fmt.Errorf("sysctl kern.procargs2: %w", err)
	}
	if len(b) < 4 {
		return "", errors.New("kern.procargs2: short record")
	}
	b = b[4:]
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return "", errors.New("kern.procargs2: no path")
	}
	return string(b), nil
}
