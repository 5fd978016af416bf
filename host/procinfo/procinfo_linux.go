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
	comm, ppid, err := parseStat(stat)
	if err != nil {
		return Process{}, fmt.Errorf("parsing %s/stat: %w", dir, err)
	}
	p := Process{PID: pid, PPID: ppid, Name: comm}
	if exe, err := os.Readlink(dir + "/exe"); err == nil {
		// A binary replaced on disk while running reads "path (deleted)".
		p.Exe = strings.TrimSuffix(exe, " (deleted)")
	}
	// comm is cut at 15 bytes; the executable's name is the full one.
	if base := filepath.Base(p.Exe); p.Exe != "" && len(comm) == commLen && strings.HasPrefix(base, comm) {
		p.Name = base
	}
	return p, nil
}

// parseStat reads comm and ppid from /proc/<pid>/stat: "pid (comm) state
// ppid ...". comm may itself hold spaces and parentheses, so it runs to the
// last ')'.
func parseStat(b []byte) (comm string, ppid int, err error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, errors.New("no (comm)")
	}
	fields := strings.Fields(string(b[end+1:]))
	if len(fields) < 2 {
		return "", 0, errors.New("too few fields")
	}
	ppid, err = strconv.Atoi(fields[1])
	if err != nil {
		return "", 0, fmt.Errorf("ppid: %w", err)
	}
	return string(b[open+1 : end]), ppid, nil
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
