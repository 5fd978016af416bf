package procinfo

import (
	"bytes"
	"encoding/binary"
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
		PID:   pid,
		PPID:  int(kp.Eproc.Ppid),
		Name:  unix.ByteSliceToString(kp.Proc.P_comm[:]),
		Start: startTime(kp.Proc.P_starttime),
	}
	if exe, err := execPath(pid); err == nil {
		p.Exe = exe
	}
	return p, nil
}

// startTime is p_starttime in microseconds since the epoch, or 0 for a
// time before it (which no running process has).
func startTime(tv unix.Timeval) uint64 {
	if tv.Sec < 0 || tv.Usec < 0 {
		return 0
	}
	return uint64(tv.Sec)*1_000_000 + uint64(tv.Usec)
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

// args reads the arguments from kern.procargs2: a 32-bit argc, the
// executable path, NUL padding, then argc NUL-terminated arguments.
func args(pid int) ([]string, error) {
	b, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return nil, fmt.Errorf("sysctl kern.procargs2: %w", err)
	}
	if len(b) < 4 {
		return nil, errors.New("kern.procargs2: short record")
	}
	argc := int(binary.LittleEndian.Uint32(b[:4]))
	b = b[4:]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return nil, errors.New("kern.procargs2: no path")
	}
	b = bytes.TrimLeft(b[i:], "\x00")
	out := make([]string, 0, argc)
	for len(out) < argc && len(b) > 0 {
		j := bytes.IndexByte(b, 0)
		if j < 0 {
			j = len(b)
		}
		out = append(out, string(b[:j]))
		b = b[min(j+1, len(b)):]
	}
	return out, nil
}
