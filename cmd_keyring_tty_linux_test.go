package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

// openPTY opens a pseudo-terminal pair: the test holds the master, the
// program gets the slave as its terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestRememberAtTheTerminal types a secret into `fillgate remember` on a
// real terminal, after its prompt appears: the terminal does not echo it,
// and it is stored.
func TestRememberAtTheTerminal(t *testing.T) {
	isolate(t)
	secretservice.Start(t)
	bin, err := builtBinary()
	if err != nil {
		t.Fatal(err)
	}
	master, slave := openPTY(t)
	cmd := exec.Command(bin, "remember", "--service", "github.com", "--account", "alice")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var seen bytes.Buffer
	r := bufio.NewReader(master)
	readUntil := func(want string) {
		t.Helper()
		for !strings.Contains(seen.String(), want) {
			b, err := r.ReadByte()
			if err != nil {
				t.Fatalf("the terminal closed before %q appeared: %v (it showed %q)", want, err, seen.String())
			}
			seen.WriteByte(b)
		}
	}
	// fillgate writes the prompt only once it has turned echo off, so
	// typing as soon as it shows is safe.
	readUntil("(not shown as you type): ")
	secret := leakscan.NewSecret(t)
	if _, err := master.Write(append(secret, '\r')); err != nil {
		t.Fatal(err)
	}
	readUntil("in the OS keyring")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("fillgate remember: %v (the terminal showed %q)", err, seen.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("fillgate remember did not exit")
	}
	leakscan.Bytes(t, secret, "the terminal", seen.Bytes())
	if !strings.Contains(seen.String(), "remembered the password for github.com as alice in the OS keyring") {
		t.Errorf("the terminal showed %q", seen.String())
	}
	if v, ok := lookup(t, "password github.com alice"); !ok || !bytes.Equal(v, secret) {
		t.Fatal("secret-tool: the stored password differed (or is missing)")
	}
}
