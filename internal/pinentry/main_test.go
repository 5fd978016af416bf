package pinentry_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/fillgate/fillgate/internal/pinentry"
	"github.com/fillgate/fillgate/internal/pinentry/pinentrytest"
)

// fakeEnv names the fake pinentry's mode when the test binary runs as one
// (see fakeMain); fakePIDFile where it writes the pid a test waits for.
const (
	fakeEnv     = "PINENTRY_TEST_FAKE"
	fakePIDFile = "PINENTRY_TEST_PIDFILE"
)

// fakePIN is what the fake pinentry "types" in mode answer: a test value,
// never a real secret.
var fakePIN = []byte("fake pin % with\nescapes")

// TestMain runs the tests, or, with fakeEnv set, plays a pinentry
// program (a real process, for the process tests).
func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeMain(mode))
	}
	os.Exit(m.Run())
}

// fakeMain is the fake pinentry program:
//
//	answer  answers every GETPIN with fakePIN and every CONFIRM with OK
//	hang    never answers a dialog
//	crash   exits in the middle of the first dialog
//	fail    complains on stderr and exits before the greeting
//	spawn   starts a child (mode sleep), writes its pid to fakePIDFile, hangs
//	sleep   sleeps until killed
//	parent  starts a pinentry (mode hang) with Start, writes its pid to
//	        fakePIDFile, and waits to be killed
func fakeMain(mode string) int {
	serve := func(r pinentrytest.Reply) int {
		_ = pinentrytest.Serve(context.Background(), os.Stdin, os.Stdout, func(req pinentrytest.Request) pinentrytest.Reply {
			if r.Exit {
				os.Exit(3)
			}
			return r
		})
		return 0
	}
	switch mode {
	case "answer":
		return serve(pinentrytest.Reply{PIN: fakePIN})
	case "hang":
		return serve(pinentrytest.Reply{Hang: true})
	case "crash":
		return serve(pinentrytest.Reply{Exit: true})
	case "fail":
		fmt.Fprintln(os.Stderr, "\n  cannot open display: :4242\x1b[0m")
		return 1
	case "spawn":
		self, _ := os.Executable()
		child := exec.Command(self)
		child.Env = []string{fakeEnv + "=sleep"}
		if err := child.Start(); err != nil {
			return 1
		}
		if err := os.WriteFile(os.Getenv(fakePIDFile), []byte(strconv.Itoa(child.Process.Pid)), 0o600); err != nil {
			return 1
		}
		return serve(pinentrytest.Reply{Hang: true})
	case "sleep":
		select {}
	case "parent":
		self, _ := os.Executable()
		p, err := pinentry.Start(context.Background(), self, []string{fakeEnv + "=hang"})
		if err != nil {
			return 1
		}
		if err := os.WriteFile(os.Getenv(fakePIDFile), []byte(strconv.Itoa(p.Pid())), 0o600); err != nil {
			return 1
		}
		select {}
	}
	return 2
}
