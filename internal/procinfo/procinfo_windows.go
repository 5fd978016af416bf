package procinfo

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

func get(pid int) (Process, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return Process{}, fmt.Errorf("process snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if e.ProcessID == uint32(pid) {
			break
		}
	}
	if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return Process{}, ErrNotFound
	}
	if err != nil {
		return Process{}, fmt.Errorf("walking the process snapshot: %w", err)
	}
	p := Process{
		PID:  pid,
		PPID: int(e.ParentProcessID),
		Name: windows.UTF16ToString(e.ExeFile[:]),
	}
	p.Exe, p.Start = query(uint32(pid))
	// Windows keeps the parent's pid after the parent exits, and pids are
	// reused: a "parent" started after its child is someone else.
	if p.PPID != 0 && p.Start != 0 {
		if _, ps := query(uint32(p.PPID)); ps > p.Start {
			p.PPID = 0
		}
	}
	return p, nil
}

// query opens process pid for limited information and returns its image
// path and its creation time (a FILETIME as one number: 100 ns intervals
// since 1601). What cannot be read is "" or 0: another user's elevated
// process cannot be opened at all.
func query(pid uint32) (exe string, start uint64) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", 0
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) == nil {
		exe = windows.UTF16ToString(buf[:n])
	}
	var c, x, k, u windows.Filetime
	if windows.GetProcessTimes(h, &c, &x, &k, &u) == nil {
		start = uint64(c.HighDateTime)<<32 | uint64(c.LowDateTime)
	}
	return exe, start
}

func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return true // it exists but is not ours to open
	}
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

func args(int) ([]string, error) {
	return nil, fmt.Errorf("reading another process's command line on this OS: %w", errors.ErrUnsupported)
}
