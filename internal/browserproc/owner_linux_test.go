package browserproc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles the test binary as an owner that starts Chromium,
// prints its pid and then waits to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("FGTEST_OWNER_PROFILE"); dir != "" {
		c, err := StartChromium(context.Background(), ChromiumOptions{UserDataDir: dir, Headless: true})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(c.Cmd.Process.Pid)
		select {} // until killed
	}
	os.Exit(m.Run())
}

// TestNothingOutlivesAKilledOwner kills (SIGKILL, no chance to clean up)
// a process that started Chromium: the browser and every process of its
// group die with it.
func TestNothingOutlivesAKilledOwner(t *testing.T) {
	owner := exec.Command(os.Args[0], "-test.run=^$")
	owner.Env = append(os.Environ(), "FGTEST_OWNER_PROFILE="+t.TempDir())
	out, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		_ = owner.Process.Kill()
		_ = owner.Wait()
		t.Fatalf("the owner did not start Chromium: %q %v", line, err)
	}
	if err := owner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = owner.Wait()

	// The browser is its group's leader: the group is gone when no
	// process is left in it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for syscall.Kill(-pid, 0) == nil {
		select {
		case <-ctx.Done():
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatalf("Chromium (group %d) outlived its killed owner", pid)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
