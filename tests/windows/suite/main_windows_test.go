package suite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// exe is the fillgate.exe under test (FILLGATE_EXE).
var exe string

// helperEnv picks what this test binary does when it runs as a helper
// process (the squatter, in host_windows_test.go).
const helperEnv = "SUITE_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "squat" {
		os.Exit(squatPipe())
	}
	exe = os.Getenv("FILLGATE_EXE")
	if exe == "" || !filepath.IsAbs(exe) {
		fmt.Fprintln(os.Stderr, "suite: set FILLGATE_EXE to the absolute path of the fillgate.exe to test (tests/windows/run does)")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// world is one test's user: the folders Windows names in the environment
// (profile, local and roaming app data, ProgramData, temp), all under a
// directory of the test's own, so that nothing of the prefix's own user
// is read or written but its registry and Credential Manager.
type world struct {
	root, profile, local, roaming, programData, temp string
}

func newWorld(t *testing.T) world {
	t.Helper()
	root := t.TempDir()
	w := world{
		root:        root,
		profile:     filepath.Join(root, "profile"),
		local:       filepath.Join(root, "profile", "AppData", "Local"),
		roaming:     filepath.Join(root, "profile", "AppData", "Roaming"),
		programData: filepath.Join(root, "ProgramData"),
		temp:        filepath.Join(root, "profile", "AppData", "Local", "Temp"),
	}
	for _, d := range []string{w.local, w.roaming, w.programData, w.temp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// env is the whole environment of a fillgate process in this world:
// Windows' own variables from ours, the user's folders from the world.
func (w world) env(extra ...string) []string {
	var env []string
	for _, k := range []string{"SystemRoot", "windir", "SystemDrive", "ComSpec", "PATH", "PATHEXT", "USERNAME", "COMPUTERNAME", "OS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env,
		"USERPROFILE="+w.profile, "LOCALAPPDATA="+w.local, "APPDATA="+w.roaming,
		"ProgramData="+w.programData, "ALLUSERSPROFILE="+w.programData, "TEMP="+w.temp, "TMP="+w.temp)
	return append(env, extra...)
}

// result is one finished fillgate process.
type result struct {
	args           []string
	code           int
	stdout, stderr []byte
}

func (r result) String() string {
	return fmt.Sprintf("fillgate %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// run runs fillgate.exe with args in w, stdin as its input, and waits at
// most a minute.
func (w world) run(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	return w.runWith(t, nil, stdin, args...)
}

func (w world) runWith(t *testing.T, extraEnv []string, stdin []byte, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = w.env(extraEnv...)
	cmd.Dir = w.profile
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{args: args, stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("fillgate %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("fillgate %v did not end within a minute", args)
	}
	return r
}

// reg runs Wine's (or Windows') reg.exe with args and returns its exit
// code and output.
func reg(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "reg", args...).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("reg %v: %v", args, err)
	return 0, ""
}

// readAll reads r to its end in the background; wait returns what it read.
func readAll(r io.Reader) (wait func() []byte) {
	done := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	return func() []byte { return <-done }
}
