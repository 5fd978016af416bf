package procinfo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// commLen is the longest name the kernel keeps in comm (TASK_COMM_LEN-1).
const commLen = 15

func get(pid int) (Process, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if errors.Is(err, fs.ErrNotExist) {
		return Process{}, ErrNotFound
	}
	if err != nil {
		return Process{}, fmt.Errorf("reading %s/stat: %w", dir, err)
	}
	st, err := parseStat(stat)
	if err != nil {
		return Process{}, fmt.Errorf("parsing %s/stat: %w", dir, err)
	}
	p := Process{PID: pid, PPID: st.ppid, Name: st.comm, Start: st.start}
	if exe, err := os.Readlink(dir + "/exe"); err == nil {
		// A binary replaced on disk while running reads "path (deleted)".
		p.Exe = strings.TrimSuffix(exe, " (deleted)")
	}
	// comm is cut at 15 bytes; the executable's name is the full one.
	if base := filepath.Base(p.Exe); p.Exe != "" && len(st.comm) == commLen && strings.HasPrefix(base, st.comm) {
		p.Name = base
	}
	return p, nil
}

// stat is what fillgate reads of /proc/<pid>/stat.
type stat struct {
	comm  string
	ppid  int
	start uint64 // starttime: clock ticks after boot; 0 when absent
}

// Fields of /proc/<pid>/stat (proc(5) numbers them from 1), counted from
// state, the first field after "(comm)".
const (
	fieldPPID  = 4 - 3
	fieldStart = 22 - 3
)

// parseStat reads comm, ppid and starttime from /proc/<pid>/stat: "pid
// (comm) state ppid ... starttime ...". comm may itself hold spaces and
// parentheses, so it runs to the last ')'. A line cut before starttime
// reads as start 0, which names no process (see Process.Start).
func parseStat(b []byte) (stat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, errors.New("no (comm)")
	}
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) <= fieldPPID {
		return stat{}, errors.New("too few fields")
	}
	ppid, err := strconv.Atoi(fields[fieldPPID])
	if err != nil {
		return stat{}, fmt.Errorf("ppid: %w", err)
	}
	st := stat{comm: string(b[open+1 : end]), ppid: ppid}
	if len(fields) > fieldStart {
		if st.start, err = strconv.ParseUint(fields[fieldStart], 10, 64); err != nil {
			return stat{}, fmt.Errorf("starttime: %w", err)
		}
	}
	return st, nil
}

func args(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil, errors.New("empty command line")
	}
	return strings.Split(string(b), "\x00"), nil
}
