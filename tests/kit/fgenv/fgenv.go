// Package fgenv makes the environment of one fillgate set-up under test:
// a short temp root with HOME and the XDG dirs in it, the variables that
// the browser, the host it starts and the agent share, and fillgate's
// dirs, policy file and audit log there; and it scans fillgate's own logs
// there for a secret.
package fgenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/tests/kit/browser"
	"github.com/fillgate/fillgate/tests/kit/envlist"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// Root is one set-up's temp root and environment.
type Root struct {
	Dir string // the temp root, removed when the test ends
	// Env is the environment (browser.BaseEnv of Dir, and no session
	// bus). A test may append to it: a later entry wins, in envlist.Get
	// as in os/exec.
	Env      []string
	RunDir   string // $XDG_RUNTIME_DIR/fillgate: agent.sock and hosts/
	StateDir string // $XDG_STATE_HOME/fillgate: fillgate.log, audit.jsonl
}

// New makes a temp root named prefix followed by random characters, short
// because a socket path under it must fit in sun_path (107 bytes). Its
// environment has a session bus that does not exist: without one,
// go-keyring (in `fillgate doctor`, say) would autolaunch a D-Bus daemon
// and a keyring that outlive the test. A test that starts a bus appends
// its DBUS_SESSION_BUS_ADDRESS.
func New(t testing.TB, prefix string) *Root {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	r := &Root{Dir: dir, Env: append(browser.BaseEnv(dir), "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(dir, "no-bus"))}
	getenv := func(key string) string { return envlist.Get(r.Env, key) }
	if r.RunDir, err = dirs.Runtime(getenv); err != nil {
		t.Fatal(err)
	}
	if r.StateDir, err = dirs.State(getenv); err != nil {
		t.Fatal(err)
	}
	return r
}

// WritePolicy writes text to fillgate's policy file in env, which the
// host reads afresh for every request. text must be a policy fillgate
// accepts: one it refused would make every request a refusal, and a test
// of something else would pass or fail for that reason.
func WritePolicy(t testing.TB, env []string, text string) {
	t.Helper()
	if _, err := policy.Parse("the test's policy", []byte(text)); err != nil {
		t.Fatalf("the test's policy is not valid: %v", err)
	}
	p, err := dirs.PolicyFile(func(key string) string { return envlist.Get(env, key) })
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// LastAudit is the newest entry of the audit log in stateDir.
func LastAudit(t testing.TB, stateDir string) fill.AuditEntry {
	t.Helper()
	es, err := audit.Open(stateDir).Recent(1)
	if err != nil || len(es) != 1 {
		t.Fatalf("audit log: %d entries, %v", len(es), err)
	}
	return es[0]
}

// ScanLogs scans fillgate's own files in stateDir, its log and the audit
// log, for secret; a file not there is nothing to scan.
func ScanLogs(t testing.TB, stateDir string, secret []byte) {
	t.Helper()
	for _, name := range []string{"fillgate.log", audit.FileName} {
		data, err := os.ReadFile(filepath.Join(stateDir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Errorf("read %s: %v", name, err)
		}
		leakscan.Bytes(t, secret, name, data)
	}
}
