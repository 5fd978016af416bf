package harden

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProcessIsNotDumpable runs Process in a child (it cannot be undone
// for the test binary) and reads the flag back there.
func TestProcessIsNotDumpable(t *testing.T) {
	if os.Getenv("HARDEN_CHILD") == "1" {
		if err := Process(); err != nil {
			t.Fatal(err)
		}
		v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err != nil || v != 0 {
			t.Fatalf("dumpable = %d, %v", v, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProcessIsNotDumpable$")
	cmd.Env = append(os.Environ(), "HARDEN_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
