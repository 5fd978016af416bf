//go:build linux

package secretservice

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestOwner is run by TestNothingOutlivesAKilledTest as a child process:
// it starts a Secret Service, prints the daemons' pids and waits to be
// killed.
func TestOwner(t *testing.T) {
	if os.Getenv("FGTEST_SECRETSERVICE_OWNER") == "" {
		return // only as the child below
	}
	s := Start(t)
	fmt.Printf("%d %d\n", s.BusPID, s.KeyringPID)
	select {}
}

// TestNothingOutlivesAKilledTest kills (SIGKILL: no cleanup runs) a test
// process that started a Secret Service: its D-Bus daemon and keyring
// daemon die with it.
func TestNothingOutlivesAKilledTest(t *testing.T) {
	owner := exec.Command(os.Args[0], "-test.run=^TestOwner$", "-test.timeout=2m")
	owner.Env = append(os.Environ(), "FGTEST_SECRETSERVICE_OWNER=1")
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	var bus, keyring int
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "%d %d", &bus, &keyring); err != nil || serr != nil || bus == 0 || keyring == 0 {
		_ = owner.Process.Kill()
		_ = owner.Wait()
		t.Fatalf("the owner did not start a Secret Service: %q %v", line, err)
	}
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, pid := range []int{bus, keyring} {
		for syscall.Kill(-pid, 0) == nil {
			select {
			case <-ctx.Done():
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				t.Fatalf("process group %d outlived its killed test", pid)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}
