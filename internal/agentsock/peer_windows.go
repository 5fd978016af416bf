package agentsock

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/windows"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/procinfo"
)

// errNotFillgate means the process serving a pipe runs another program.
var errNotFillgate = errors.New("the pipe's server is not fillgate")

// checkPeer names the process on the other end of a pipe connection
// (GetNamedPipeClientProcessId on the server's end,
// GetNamedPipeServerProcessId on a client's: the pipe file system says,
// the peer cannot) and makes sure it runs as this process's user. It
// returns the peer's pid.
func checkPeer(c net.Conn) (int, error) {
	f, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return 0, fmt.Errorf("peer credentials: a %T is not a pipe", c)
	}
	h := windows.Handle(f.Fd())
	var flags, pid uint32
	if err := windows.GetNamedPipeInfo(h, &flags, nil, nil, nil); err != nil {
		return 0, fmt.Errorf("peer credentials: GetNamedPipeInfo: %w", err)
	}
	if flags&windows.PIPE_SERVER_END != 0 {
		if err := windows.GetNamedPipeClientProcessId(h, &pid); err != nil {
			return 0, fmt.Errorf("peer credentials: GetNamedPipeClientProcessId: %w", err)
		}
	} else if err := windows.GetNamedPipeServerProcessId(h, &pid); err != nil {
		return 0, fmt.Errorf("peer credentials: GetNamedPipeServerProcessId: %w", err)
	}
	if pid == 0 {
		return 0, errors.New("peer credentials: no pid")
	}
	ours, err := userSID()
	if err != nil {
		return 0, err
	}
	if err := userIs(pid, ours); err != nil {
		return 0, err
	}
	return int(pid), nil
}

// checkHost makes sure the server of a client's pipe runs as this user
// and is fillgate: this very executable or one named fillgate.exe. Pipe
// names are global, so anyone could have made one by the name we dial
// first; a server of another user is refused before a byte is sent. The
// program check keeps a program of the user's own that is not fillgate
// (which the user's own account could do anything with anyway) from
// being taken for the host by mistake.
func checkHost(c net.Conn) error {
	pid, err := checkPeer(c)
	if err != nil {
		return err
	}
	p, err := procinfo.Get(pid)
	if err != nil {
		return fmt.Errorf("%w: process %d: %v", errNotFillgate, pid, err)
	}
	if !agentid.IsFillgate(p, agentid.Self()) {
		return fmt.Errorf("%w (process %d runs %s)", errNotFillgate, pid, p.Name)
	}
	return nil
}

// userIs compares the user SID of process pid's token with want. A
// process we may not open is another user's.
func userIs(pid uint32, want *windows.SID) error {
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
	if !windows.EqualSid(theirs.User.Sid, want) {
		return fmt.Errorf("%w (process %d)", errForeignPeer, pid)
	}
	return nil
}
