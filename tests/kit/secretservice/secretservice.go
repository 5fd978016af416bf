//go:build linux

// Package secretservice starts a private, unlocked Secret Service
// (gnome-keyring under its own D-Bus session bus) for tests that need a
// real keyring, and can lock it again.
package secretservice

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/fillgate/fillgate/internal/browserproc"
)

// Service is a running private Secret Service.
type Service struct {
	// Data is XDG_DATA_HOME: gnome-keyring keeps its (encrypted) keyring
	// files under Data/keyrings.
	Data string
	// Runtime is XDG_RUNTIME_DIR.
	Runtime string
	// BusPID and KeyringPID are the daemons' pids (0 when not started);
	// each leads a process group of its own.
	BusPID, KeyringPID int

	env     []string          // the daemons' environment
	addr    string            // the bus's address
	keyring *browserproc.Proc // the keyring daemon, or nil
}

// Start launches dbus-daemon and gnome-keyring-daemon with their state in
// temp dirs, points this test process at them (t.Setenv), and stops them
// when the test ends. It fails the test, never skips, when the programs are
// missing: tests/setup installs them.
func Start(t testing.TB) *Service {
	t.Helper()
	s, env, addr := startBus(t)
	if _, err := exec.LookPath("gnome-keyring-daemon"); err != nil {
		t.Fatalf("gnome-keyring-daemon not found: run tests/setup (apt-get install -y gnome-keyring)")
	}
	s.env, s.addr = env, addr
	s.startKeyring(t)
	setEnv(t, s, addr)
	return s
}

// startKeyring starts gnome-keyring-daemon on s's bus, unlocked, and waits
// until it owns the Secret Service's name.
func (s *Service) startKeyring(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	owned := watchName(t, ctx, s.addr, "org.freedesktop.secrets")
	// In the foreground, as a child of this test in a process group of its
	// own that the kernel kills when this process dies (browserproc): a
	// killed test leaves no keyring daemon behind.
	kr := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	kr.Env = s.env
	// The login keyring's password: a fixed test value, not a fillgate secret.
	kr.Stdin = strings.NewReader("fillgate-test-keyring\n")
	p, err := browserproc.StartGroup(kr)
	if err != nil {
		t.Fatalf("start gnome-keyring-daemon: %v", err)
	}
	t.Cleanup(p.Stop)
	s.KeyringPID, s.keyring = kr.Process.Pid, p
	// It takes its name on the bus a little after it starts.
	if err := owned(); err != nil {
		t.Fatalf("gnome-keyring-daemon did not take org.freedesktop.secrets on the bus: %v", err)
	}
}

// watchName starts watching the bus at addr for name to get an owner; the
// function it returns waits for that (or for ctx to end).
func watchName(t testing.TB, ctx context.Context, addr, name string) func() error {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"), dbus.WithMatchArg(0, name)); err != nil {
		t.Fatalf("watch the test bus: %v", err)
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	return func() error {
		var has bool
		if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err != nil {
			return err
		}
		for !has {
			select {
			case sig := <-signals:
				has = len(sig.Body) == 3 && sig.Body[2] != ""
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
}

// StartBus launches a private D-Bus session bus with no Secret Service on
// it, and points this test process at it.
func StartBus(t testing.TB) *Service {
	t.Helper()
	s, _, addr := startBus(t)
	setEnv(t, s, addr)
	return s
}

// startBus starts dbus-daemon; it returns the environment for programs on
// that bus and its address.
func startBus(t testing.TB) (*Service, []string, string) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Fatalf("dbus-daemon not found: run tests/setup (apt-get install -y dbus)")
	}
	root := t.TempDir()
	s := &Service{Runtime: filepath.Join(root, "run"), Data: filepath.Join(root, "data")}
	for _, d := range []string{s.Runtime, s.Data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// In the foreground, in a process group the kernel kills with this
	// process (browserproc), so a killed test leaves no bus behind; it
	// prints its address once it listens.
	bus := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile",
		"--print-address=1", "--address=unix:path="+filepath.Join(s.Runtime, "bus"))
	bus.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + s.Runtime}
	out, err := bus.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p, err := browserproc.StartGroup(bus)
	if err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	t.Cleanup(p.Stop)
	s.BusPID = bus.Process.Pid
	line, err := bufio.NewReader(out).ReadString('\n')
	addr := strings.TrimSpace(line)
	if err != nil || addr == "" {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"DBUS_SESSION_BUS_ADDRESS=" + addr,
		"XDG_RUNTIME_DIR=" + s.Runtime,
		"XDG_DATA_HOME=" + s.Data,
		"HOME=" + root,
	}
	return s, env, addr
}

// setEnv points this process at the bus, and makes sure the process-wide
// D-Bus connection (godbus's dbus.SessionBus, which go-keyring uses) is
// one to this bus while the test runs and is closed when it ends, so the
// next test connects afresh to its own bus.
func setEnv(t testing.TB, s *Service, addr string) {
	t.Helper()
	closeShared := func() {
		if c, err := dbus.SessionBus(); err == nil {
			_ = c.Close()
		}
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	t.Setenv("XDG_RUNTIME_DIR", s.Runtime)
	t.Setenv("XDG_DATA_HOME", s.Data)
	// The shared connection may still be one to an earlier test's bus:
	// close it so the next call dials this one. Cleanups run last-first,
	// so the one below runs while this test's environment is still set.
	if c, err := dbus.SessionBus(); err == nil && c.Connected() {
		_ = c.Close()
	}
	t.Cleanup(closeShared)
}

// Lock locks the login keyring, as a screen locker or `secret-tool lock`
// does.
func Lock(t testing.TB) {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatalf("connect to the session bus: %v", err)
	}
	defer conn.Close()
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	err = conn.Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
		Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{"/org/freedesktop/secrets/collection/login"}).Store(&locked, &prompt)
	if err != nil || len(locked) != 1 || prompt != "/" {
		t.Fatalf("lock the login keyring: %v (locked %v, prompt %v)", err, locked, prompt)
	}
}
