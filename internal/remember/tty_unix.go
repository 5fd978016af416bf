//go:build linux || darwin

package remember

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// readHidden reads one line from the terminal f with echo off, showing
// prompt only once echo is off (so nothing typed or pasted the moment it
// appears is ever echoed), and restores the terminal. The line goes into
// one buffer of max bytes; its newline is dropped.
func readHidden(f *os.File, prompt func(), max int) ([]byte, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, fmt.Errorf("read the secret at the terminal: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG
	quiet.Iflag |= unix.ICRNL
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return nil, fmt.Errorf("read the secret at the terminal: %w", err)
	}
	defer unix.IoctlSetTermios(fd, ioctlSetTermios, old)
	prompt()
	buf := make([]byte, max+1)
	n := 0
	for n < len(buf) {
		m, err := f.Read(buf[n : n+1])
		if m == 1 && buf[n] == '\n' {
			buf[n] = 0
			return buf[:n], nil
		}
		n += m
		if err != nil {
			clear(buf)
			if n == 0 {
				return nil, errors.New("the terminal closed before a secret was typed")
			}
			return nil, fmt.Errorf("read the secret at the terminal: %w", err)
		}
	}
	clear(buf)
	return nil, &InputError{fmt.Errorf("the secret is longer than %d bytes; nothing stored", max)}
}
