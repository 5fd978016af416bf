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
	if exe, err := exePath(uint32(pid)); err == nil {
		p.Exe = exe
	}
	// Windows keeps the parent's pid after the parent exits, and pids are
	// reused: a "parent" started after its child is someone else.
	if p.PPID != 0 && startedAfter(uint32(p.PPID), uint32(pid)) {
		p.PPID = 0
	}
	return p, nil
}

func exePath(pid uint32) (string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", fmt.Errorf("opening process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", fmt.Errorf("image name of process %d: %w", pid, err)
	}
	return windows.UTF16ToString(buf[:n]), nil
}

func created(pid uint32) (int64, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(h)
	var c, x, k, u windows.Filetime
	if err := windows.GetProcessTimes(h, &c, &x, &k, &u); err != nil {
		return 0, err
	}
	return c.Nanoseconds(), nil
}

// startedAfter reports whether process a provably started after process b.
// When either cannot be opened it reports false.
func startedAfter(a, b uint32) bool {
	ta, err := created(a)
	if err != nil {
		return false
	}
	tb, err := created(b)
	if err != nil {
		return false
	}
	return ta > tb
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
