//go:build linux

package secretservice

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// ssName is the Secret Service's name on the bus.
const ssName = "org.freedesktop.secrets"

// StopKeyring kills the keyring daemon and everything in its process
// group (SIGKILL: as a crash, with no goodbye on the bus), and returns
// once it has exited and the bus has let go of the Secret Service's name.
// The bus stays up.
func (s *Service) StopKeyring(t testing.TB) {
	t.Helper()
	if s.keyring == nil {
		t.Fatal("StopKeyring: no keyring daemon was started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := dbus.Connect(s.addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	defer conn.Close()
	if err := conn.AddMatchSignal(dbus.WithMatchInterface("org.freedesktop.DBus"), dbus.WithMatchMember("NameOwnerChanged"), dbus.WithMatchArg(0, ssName)); err != nil {
		t.Fatalf("watch the test bus: %v", err)
	}
	signals := make(chan *dbus.Signal, 8)
	conn.Signal(signals)
	if err := syscall.Kill(-s.KeyringPID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the keyring daemon: %v", err)
	}
	select {
	case <-s.keyring.Done():
	case <-ctx.Done():
		t.Fatal("the keyring daemon did not exit")
	}
	var has bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, ssName).Store(&has); err != nil {
		t.Fatalf("ask the test bus: %v", err)
	}
	for has {
		select {
		case sig := <-signals:
			has = !(len(sig.Body) == 3 && sig.Body[2] == "")
		case <-ctx.Done():
			t.Fatal("the bus still names an owner of the Secret Service")
		}
	}
	s.keyring, s.KeyringPID = nil, 0
}

// StartKeyring starts the keyring daemon again, on the same bus and with
// the same keyring files, unlocked, as after a crash and a new login.
func (s *Service) StartKeyring(t testing.TB) {
	t.Helper()
	if s.keyring != nil {
		t.Fatal("StartKeyring: the keyring daemon runs")
	}
	s.startKeyring(t)
}

// Owned reports whether anything owns the Secret Service's name on the
// bus now (a daemon D-Bus activation started counts too).
func (s *Service) Owned(t testing.TB) bool {
	t.Helper()
	conn, err := dbus.Connect(s.addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	defer conn.Close()
	var has bool
	if err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, ssName).Store(&has); err != nil {
		t.Fatalf("ask the test bus: %v", err)
	}
	return has
}
