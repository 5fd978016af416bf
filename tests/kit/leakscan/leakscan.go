// Package leakscan looks for a secret where it must never be: results,
// output, logs and every file a test run wrote. It reports where it found
// the secret, never the secret itself, its length or any derivative.
package leakscan

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// NewSecret returns a random secret for one test run: 24 URL-safe
// characters with a fixed marker prefix so it is unlikely to occur by
// chance and easy to see in a hex dump if it ever does.
func NewSecret(t testing.TB) []byte {
	t.Helper()
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random secret: %v", err)
	}
	return []byte("fg" + base64.RawURLEncoding.EncodeToString(b))
}

// forms are the encodings in which a leaked secret would most likely show
// up: raw, URL-encoded, hex and base64 (std and URL alphabets), and the
// UTF-16LE form some platforms store strings in.
func forms(secret []byte) [][]byte {
	s := string(secret)
	u16 := make([]byte, 0, 2*len(secret))
	for _, c := range secret {
		u16 = append(u16, c, 0)
	}
	return [][]byte{
		secret,
		[]byte(url.QueryEscape(s)),
		[]byte(hex.EncodeToString(secret)),
		[]byte(base64.StdEncoding.EncodeToString(secret)),
		[]byte(base64.RawURLEncoding.EncodeToString(secret)),
		u16,
	}
}

// Contains reports whether data holds the secret in any of the encodings
// leakscan knows.
func Contains(data, secret []byte) bool {
	for _, f := range forms(secret) {
		if bytes.Contains(data, f) {
			return true
		}
	}
	return false
}

// Bytes fails t if data, described by name, holds the secret.
func Bytes(t testing.TB, secret []byte, name string, data []byte) {
	t.Helper()
	if Contains(data, secret) {
		t.Errorf("leak: the secret appears in %s", name)
	}
}

// Dirs fails t for every regular file under dirs that holds the secret. It
// returns how many files it read, so a test can assert it looked at
// something. Missing dirs are skipped, and so are dirs it may not list;
// unreadable files are reported.
func Dirs(t testing.TB, secret []byte, dirs ...string) int {
	t.Helper()
	return walkFiles(t, true, dirs, func(path string, data []byte) { Bytes(t, secret, path, data) })
}

// DirsExcept is Dirs over every file for which skip is false: for the
// one place a test documents that something else than fillgate keeps the
// secret (the caller says which, and why).
func DirsExcept(t testing.TB, secret []byte, skip func(path string) bool, dirs ...string) int {
	t.Helper()
	return walkFiles(t, true, dirs, func(path string, data []byte) {
		if !skip(path) {
			Bytes(t, secret, path, data)
		}
	})
}

// walkFiles calls check with the contents of every regular file under dirs
// and returns how many it read. A dir that is missing is passed over; if
// lenient, so are a dir it may not list and a file removed while it walks
// (Dirs scans shared places); any other error fails t.
func walkFiles(t testing.TB, lenient bool, dirs []string, check func(path string, data []byte)) int {
	t.Helper()
	n := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) || (lenient && os.IsPermission(err)) {
					return nil
				}
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				if lenient && os.IsNotExist(err) {
					return nil // removed while we walked
				}
				t.Errorf("leak scan: cannot read %s: %v", path, err)
				return nil
			}
			n++
			check(path, data)
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("leak scan of %s: %v", dir, err)
		}
	}
	return n
}

// Process fails t if the secret appears in the command line or environment
// of process pid (Linux /proc; elsewhere it does nothing).
func Process(t testing.TB, secret []byte, pid int) {
	t.Helper()
	for _, f := range []string{"cmdline", "environ"} {
		p := filepath.Join("/proc", strconv.Itoa(pid), f)
		data, err := os.ReadFile(p)
		if err != nil {
			continue // exited, or not Linux
		}
		Bytes(t, secret, p, data)
	}
}

// masks are the characters tools render a masked field with: a run of
// them as long as the secret tells its length.
var masks = []string{"•", "●", "*"}

// MaskedLength reports whether data holds a run of exactly len(secret)
// mask characters (as chrome-devtools-mcp shows a password field: value="•••…"),
// which gives the secret's length away.
func MaskedLength(data, secret []byte) bool {
	n := len(secret)
	for _, m := range masks {
		run := []byte(strings.Repeat(m, n))
		for i := 0; ; {
			j := bytes.Index(data[i:], run)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(run)
			if !bytes.HasSuffix(data[:start], []byte(m)) && !bytes.HasPrefix(data[end:], []byte(m)) {
				return true
			}
			i = start + len(m)
		}
	}
	return false
}

// Agent fails t if what an agent's own tool returned (a tool result, its
// log), described by name, holds the secret in any encoding leakscan
// knows, or a masked field exactly as long as it.
func Agent(t testing.TB, secret []byte, name string, data []byte) {
	t.Helper()
	Bytes(t, secret, name, data)
	if MaskedLength(data, secret) {
		t.Errorf("leak: %s shows a masked field as long as the secret", name)
	}
}

// AgentDirs fails t for every file under dirs (an agent tool's output
// folder: saved snapshots, screenshots, logs) that Agent would fail. It
// returns how many files it read.
func AgentDirs(t testing.TB, secret []byte, dirs ...string) int {
	t.Helper()
	return walkFiles(t, false, dirs, func(path string, data []byte) { Agent(t, secret, path, data) })
}
