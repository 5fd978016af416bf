// Package storecmd runs a password store's command line program for a
// secret source: never through a shell, with fixed arguments, a minimal
// environment, its own process group, a timeout, and its output read into
// one capped buffer that is zeroed when it is not handed on. What the
// program prints on stderr is read into a capped buffer too, looked at by
// the source to tell a locked store from a missing entry, and zeroed: it
// is never repeated, since it could hold part of a secret.
package storecmd

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/secrets"
)

// Defaults for a Command.
const (
	DefaultTimeout = 30 * time.Second
	DefaultMax     = 64 << 10 // bytes of stdout
	maxStderr      = 8 << 10
)

// Command is one run of a store's program.
type Command struct {
	// Store names the store in errors ("pass").
	Store string
	// Path is the program (see Find).
	Path string
	// Args are its arguments, fixed by the policy.
	Args []string
	// Environ is the environment the program's own is taken from
	// ("KEY=value"): only the entries for Keys (see minimalEnv), then Set, then
	// LC_MESSAGES=C, so that what it prints on stderr is in the English
	// Classify reads. It runs in Environ's HOME, or in the root directory
	// when that is unset or not a directory.
	Environ []string
	// Keys are the variables passed on from Environ.
	Keys []string
	// Set are further variables ("KEY=value"), which win over Environ's.
	Set []string
	// Stdin, when not nil, is written to the program's standard input,
	// which is then closed (otherwise stdin is empty). The caller zeroes
	// it.
	Stdin []byte
	// Timeout bounds the run (DefaultTimeout when 0), besides ctx.
	Timeout time.Duration
	// Max is the most bytes of stdout taken (DefaultMax when 0); more is
	// an error.
	Max int
	// Classify turns a failed run (exit code, what it printed on stderr)
	// into the error to return. It must not put stderr in the error;
	// stderr is zeroed after it returns.
	Classify func(code int, stderr []byte) *secrets.Error
}

// Run runs the command and returns what it printed on stdout (the caller
// zeroes it). A non-zero exit is the error Classify makes of it.
func Run(parent context.Context, c Command) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, cmp.Or(c.Timeout, DefaultTimeout))
	defer cancel()
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = minimalEnv(c.Environ, c.Keys, append(slices.Clip(c.Set), "LC_MESSAGES=C")...) // never nil: nil would pass on fillgate's own environment
	cmd.Dir = string(filepath.Separator)
	if home := getenv(c.Environ, "HOME"); home != "" {
		if fi, err := os.Stat(home); err == nil && fi.IsDir() {
			cmd.Dir = home
		}
	}
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fail(c, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fail(c, err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, fail(c, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fail(c, err)
	}
	// The program and anything it started die when ctx ends.
	stop := context.AfterFunc(ctx, func() { killGroup(cmd) })
	defer stop()

	var wg sync.WaitGroup
	errBuf := make([]byte, maxStderr)
	var errN int
	wg.Go(func() { errN = readCapped(stderr, errBuf) })
	wg.Go(func() {
		if c.Stdin != nil {
			_, _ = stdin.Write(c.Stdin)
		}
		_ = stdin.Close()
	})
	out := make([]byte, cmp.Or(c.Max, DefaultMax)+1)
	n := readCapped(stdout, out)
	wg.Wait()
	werr := cmd.Wait()
	defer clear(errBuf)

	switch {
	case parent.Err() != nil:
		clear(out)
		return nil, context.Cause(parent)
	case ctx.Err() != nil:
		clear(out)
		return nil, &secrets.Error{Source: c.Store, Kind: secrets.KindTimeout,
			Detail: fmt.Sprintf("%s did not answer in time", filepath.Base(c.Path)), Fix: "check that " + c.Store + " works when you run it yourself, and is not waiting for a password"}
	case n > cmp.Or(c.Max, DefaultMax):
		clear(out)
		return nil, &secrets.Error{Source: c.Store, Kind: secrets.KindFailed,
			Detail: fmt.Sprintf("%s printed more than %d bytes, which is no password", filepath.Base(c.Path), cmp.Or(c.Max, DefaultMax)), Fix: "check the entry the policy names"}
	case werr != nil:
		clear(out)
		code := -1
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			code = ee.ExitCode()
		}
		if c.Classify != nil {
			if e := c.Classify(code, errBuf[:errN]); e != nil {
				return nil, e
			}
		}
		return nil, &secrets.Error{Source: c.Store, Kind: secrets.KindFailed,
			Detail: fmt.Sprintf("%s failed (exit status %d)", filepath.Base(c.Path), code), Fix: "run it yourself to see why: " + c.Store + " " + strings.Join(c.Args, " ")}
	}
	v := out[:n]
	return v, nil
}

// readCapped reads r into buf until EOF (or an error), counting one byte
// past a full buffer (and discarding the rest) so the caller sees an
// overflow. It returns how many bytes it read, at most len(buf).
func readCapped(r io.Reader, buf []byte) int {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n
		}
	}
	// Full: drain so the program is not blocked writing; nothing kept.
	var scratch [512]byte
	for {
		_, err := r.Read(scratch[:])
		clear(scratch[:])
		if err != nil {
			return n
		}
	}
}

// fail is the error for a program that could not be started.
func fail(c Command, err error) error {
	return &secrets.Error{Source: c.Store, Kind: secrets.KindFailed, Detail: fmt.Sprintf("could not run %s: %v", c.Path, err), Fix: "check that " + c.Store + " is installed"}
}

// getenv returns key's value in environ ("KEY=value" entries; the last
// one wins, as in os/exec), or "".
func getenv(environ []string, key string) string {
	v := ""
	for _, kv := range environ {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// minimalEnv builds a minimal environment from environ: the entries for keys (a
// key ending in * takes every variable with that prefix), in order, empty
// values left out, then extra (which win over them).
func minimalEnv(environ []string, keys []string, extra ...string) []string {
	env := []string{}
	seen := map[string]bool{}
	for _, extraKV := range extra {
		k, _, _ := strings.Cut(extraKV, "=")
		seen[k] = true
	}
	add := func(k string) {
		if v := getenv(environ, k); v != "" && !seen[k] {
			seen[k] = true
			env = append(env, k+"="+v)
		}
	}
	for _, k := range keys {
		if prefix, ok := strings.CutSuffix(k, "*"); ok {
			for _, kv := range environ {
				if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, prefix) {
					add(name)
				}
			}
			continue
		}
		add(k)
	}
	return append(env, extra...)
}

// Find returns the program for a store: command itself when the policy
// names one (an absolute path), else name looked up in environ's PATH. A
// program that is not there is a KindMissing error whose fix is install.
func Find(store, name, command string, environ []string, install string) (string, error) {
	missing := func(detail string) error {
		return &secrets.Error{Source: store, Kind: secrets.KindMissing, Detail: detail, Fix: install}
	}
	if command != "" {
		if !isExecutable(command) {
			return "", missing(fmt.Sprintf("the policy's command %s is not an executable file", command))
		}
		return command, nil
	}
	get := func(k string) string { return getenv(environ, k) }
	for _, dir := range filepath.SplitList(get("PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the working directory
		}
		for _, ext := range exeSuffixes(get) {
			p := filepath.Join(dir, name+ext)
			if isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", missing(fmt.Sprintf("%s is not on PATH", name))
}

// isExecutable reports whether p is a regular file this user may run.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && executableMode(fi)
}

// Contains reports whether stderr holds any of the phrases, ignoring case;
// for a Classify function.
func Contains(stderr []byte, phrases ...string) bool {
	low := bytes.ToLower(stderr)
	defer clear(low)
	for _, p := range phrases {
		if bytes.Contains(low, []byte(strings.ToLower(p))) {
			return true
		}
	}
	return false
}
