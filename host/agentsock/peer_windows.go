package agentsock

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// maxSunPath is the longest socket path: sun_path holds 108 bytes, and we
// keep room for the NUL.
const maxSunPath = 107

// sioAFUnixGetPeerPID is SIO_AF_UNIX_GETPEERPID from afunix.h:
// _WSAIOR(IOC_VENDOR, 256).
const sioAFUnixGetPeerPID = windows.IOC_OUT | windows.IOC_VENDOR | 256

// peerOf asks the socket for the peer's pid, then compares the user SID of
// that process's token with ours.
func peerOf(fd uintptr) (int, error) {
	var pid uint32
	var n uint32 // some Windows builds always report 0 here; pid is what counts
	err := windows.WSAIoctl(windows.Handle(fd), sioAFUnixGetPeerPID, nil, 0,
		(*byte)(unsafe.Pointer(&pid)), uint32(unsafe.Sizeof(pid)), &n, nil, 0)
	if err != nil {
		return 0, fmt.Errorf("SIO_AF_UNIX_GETPEERPID: %w", err)
	}
	if pid == 0 {
		return 0, fmt.Errorf("SIO_AF_UNIX_GETPEERPID: no pid")
	}
	if err := sameUser(pid); err != nil {
		return 0, err
	}
	return int(pid), nil
}

func sameUser(pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return fmt.Errorf("%w: opening process %d: %v", errForeignPeer, pid, err)
	}
	defer windows.CloseHandle(h)
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return fmt.Errorf("%w: the token of process %d: %v", errForeignPeer, pid, err)
	}
	defer tok.Close()
	theirs, err := tok.GetTokenUser()
	if err != nil {
		return fmt.Errorf("the user of process %d: %w", pid, err)
	}
	ours, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("our own user: %w", err)
	}
	if !windows.EqualSid(theirs.User.Sid, ours.User.Sid) {
		return fmt.Errorf("%w (process %d)", errForeignPeer, pid)
	}
	return nil
}
