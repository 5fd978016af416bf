//go:build unix

// Package standins installs stand-in programs for password stores that
// cannot run here (1Password's op, Bitwarden's bw, rbw) and recording
// wrappers around ones that can (pass, keepassxc-cli), for the secret
// source tests.
//
// Every stand-in is the same small POSIX shell script, under the store's
// name. When run it announces its pid on a FIFO and blocks until the test
// answers on another; while it blocks, the test reads its command line and
// environment from /proc (the store would see exactly those), then tells
// it what to do: print something on stdout or stderr and exit with a code,
// following the store's documented behaviour (a value, "Vault is locked.",
// …), or exec the real program. The value a stand-in prints is handed to
// it through the FIFO, so no secret is ever written to a file.
package standins

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// script is the stand-in. $dir holds the FIFOs; REAL is the real program
// for a wrapper ("" for a pure stand-in).
const script = `#!/bin/sh
# A stand-in for a password store's program, for fillgate's tests
# (tests/fakes/standins): it announces itself, waits for the test's answer,
# then prints what it is told and exits with the code it is told, or
# runs the real program.
dir=${0%%/*}
real=%s
printf '%%s\n' "$$" > "$dir/ready"
exec 3< "$dir/answer"
read -r code <&3
if [ "$code" = exec ]; then
	exec 3<&-
	exec "$real" "$@"
fi
read -r stream <&3
if [ "$stream" = err ]; then cat <&3 >&2; else cat <&3; fi
exit "$code"
`

// Dir is a directory of stand-ins sharing one pair of FIFOs: one run at a
// time.
type Dir struct {
	t    *testing.T
	Path string
}

// Install makes a directory with a stand-in for each name.
func Install(t *testing.T, names ...string) *Dir {
	t.Helper()
	d := newDir(t)
	for _, n := range names {
		d.add(n, "")
	}
	return d
}

// Wrap makes a directory with a recording wrapper of each real program
// (absolute paths), under the program's own name.
func Wrap(t *testing.T, real ...string) *Dir {
	t.Helper()
	d := newDir(t)
	for _, r := range real {
		d.add(filepath.Base(r), r)
	}
	return d
}

func newDir(t *testing.T) *Dir {
	t.Helper()
	d := &Dir{t: t, Path: t.TempDir()}
	for _, f := range []string{"ready", "answer"} {
		if err := syscall.Mkfifo(filepath.Join(d.Path, f), 0o600); err != nil {
			t.Fatalf("mkfifo: %v", err)
		}
	}
	return d
}

func (d *Dir) add(name, real string) {
	d.t.Helper()
	if err := os.WriteFile(filepath.Join(d.Path, name), []byte(fmt.Sprintf(script, shellQuote(real))), 0o700); err != nil {
		d.t.Fatal(err)
	}
}

// Program is the path of the stand-in or wrapper called name.
func (d *Dir) Program(name string) string { return filepath.Join(d.Path, name) }

// Run is one run of a stand-in, blocked until Answer.
type Run struct {
	d *Dir
	// PID is the stand-in's process id.
	PID int
	// Args are its arguments (argv after the program).
	Args []string
	// Env is its whole environment, as "KEY=value".
	Env []string
}

// Next waits for the next run of any stand-in in d and reads its command
// line and environment while it waits.
func (d *Dir) Next() *Run {
	d.t.Helper()
	return d.NextOr(nil)
}

// NextOr is Next, but gives up (returning nil) when gone is closed first:
// the code under test returned without running a stand-in.
func (d *Dir) NextOr(gone <-chan struct{}) *Run {
	d.t.Helper()
	ready := filepath.Join(d.Path, "ready")
	type announced struct {
		line string
		err  error
	}
	ch := make(chan announced, 1)
	go func() {
		f, err := os.Open(ready) // blocks until a stand-in (or the code below) opens it to write
		if err != nil {
			ch <- announced{err: err}
			return
		}
		line, err := bufio.NewReader(f).ReadString('\n')
		f.Close()
		ch <- announced{line, err}
	}()
	var a announced
	select {
	case a = <-ch:
	case <-gone:
		// Unblock the reader: an empty announcement.
		if f, err := os.OpenFile(ready, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-ch
		return nil
	}
	line, err := a.line, a.err
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		d.t.Fatalf("stand-in announced %q: %v %v", line, err, perr)
	}
	r := &Run{d: d, PID: pid}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		d.t.Fatalf("stand-in: %v", err)
	}
	// /bin/sh SCRIPT ARGS...
	parts := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	if len(parts) >= 2 {
		r.Args = parts[2:]
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		d.t.Fatalf("stand-in: %v", err)
	}
	if len(env) > 0 {
		r.Env = strings.Split(strings.TrimSuffix(string(env), "\x00"), "\x00")
	}
	return r
}

// Cmdline and Environ are the raw /proc files, for a leak scan.
func (r *Run) Cmdline() []byte { b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", r.PID)); return b }

// Environ is /proc/PID/environ.
func (r *Run) Environ() []byte { b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", r.PID)); return b }

// Dir is the stand-in's working directory, or "" when it cannot be read.
func (r *Run) Dir() string { d, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", r.PID)); return d }

// Answer tells the stand-in to print out on stdout (or on stderr when
// toStderr) and exit with code. out is not kept.
func (r *Run) Answer(code int, toStderr bool, out []byte) {
	r.d.t.Helper()
	stream := "out"
	if toStderr {
		stream = "err"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%s\n", code, stream)
	b.Write(out)
	r.write(b.Bytes())
	clear(b.Bytes())
}

// Exec tells a wrapper to run the real program with its arguments.
func (r *Run) Exec() {
	r.d.t.Helper()
	r.write([]byte("exec\n"))
}

func (r *Run) write(b []byte) {
	r.d.t.Helper()
	f, err := os.OpenFile(filepath.Join(r.d.Path, "answer"), os.O_WRONLY, 0)
	if err != nil {
		r.d.t.Fatalf("stand-in: %v", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.d.t.Fatalf("stand-in: %v", err)
	}
}

// EnvNames lists the names of the run's environment variables.
func (r *Run) EnvNames() []string {
	var names []string
	for _, kv := range r.Env {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	return names
}

// shellQuote quotes s for the script.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
