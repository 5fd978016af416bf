package agentid

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/child"
)

// The test binary doubles as helper processes, picked by FGTEST_HELPER:
//
//	wait:  print its pid, then wait until stdin closes (a client on the
//	       socket, as the agent walk sees one).
//	spawn: run FGTEST_NEXT as a wait helper, with this stdin and stdout
//	       (to build a process chain).
//	idle:  print "ready" and wait until stdin closes.
const (
	envHelper = "FGTEST_HELPER"
	envNext   = "FGTEST_NEXT"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "":
		os.Exit(m.Run())
	case "wait":
		fmt.Println(os.Getpid())
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "spawn":
		cmd := exec.Command(os.Getenv(envNext))
		cmd.Env = append(os.Environ(), envHelper+"=wait")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "spawn:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "idle":
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "unknown helper")
		os.Exit(2)
	}
}

// exeSuffix ends an executable's name.
func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}

// startChain starts cmd, whose last process is a wait helper, and returns
// that process's pid; the chain ends (its stdin closed, then waited for)
// when the test does.
func startChain(t testing.TB, cmd *exec.Cmd) int {
	t.Helper()
	cmd.Stderr = os.Stderr
	out, _ := child.Start(t, cmd)
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the chain %v did not start: %v", cmd.Args, err)
	}
	return pid
}

// startIdle runs exe as an idle helper until the test ends and returns
// its pid once it runs.
func startIdle(t testing.TB, exe string) int {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envHelper+"=idle")
	out, _ := child.Start(t, cmd)
	var ready string
	if _, err := fmt.Fscan(out, &ready); err != nil || ready != "ready" {
		_ = cmd.Process.Kill()
		t.Fatalf("helper %s did not start: %q, %v", exe, ready, err)
	}
	return cmd.Process.Pid
}
