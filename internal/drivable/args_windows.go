package drivable

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// maxCommandLine bounds the buffer for a command line (Windows caps one at
// 32767 UTF-16 units).
const maxCommandLine = 1 << 17

// osArgs reads process pid's command line, argv[0] first, as the process
// was given it (ProcessCommandLineInformation, Windows 8.1 and later),
// split the way the C runtime splits it.
func osArgs(pid int) ([]string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return nil, fmt.Errorf("command line of process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	// []uint64 keeps the UNICODE_STRING at its head aligned.
	buf := make([]uint64, 512)
	for {
		var n uint32
		size := uint32(len(buf) * 8)
		err = windows.NtQueryInformationProcess(h, windows.ProcessCommandLineInformation, unsafe.Pointer(&buf[0]), size, &n)
		if err == nil {
			break
		}
		tooSmall := errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH) || errors.Is(err, windows.STATUS_BUFFER_TOO_SMALL) ||
			errors.Is(err, windows.STATUS_BUFFER_OVERFLOW)
		if !tooSmall || n <= size || n > maxCommandLine {
			return nil, fmt.Errorf("command line of process %d: %w", pid, err)
		}
		buf = make([]uint64, (n+7)/8)
	}
	line := (*windows.NTUnicodeString)(unsafe.Pointer(&buf[0])).String()
	args, err := windows.DecomposeCommandLine(line)
	if err != nil {
		return nil, fmt.Errorf("command line of process %d: %w", pid, err)
	}
	return args, nil
}
