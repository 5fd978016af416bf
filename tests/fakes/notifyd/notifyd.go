//go:build linux

// Package notifyd is a stand-in for the desktop's notification service
// (org.freedesktop.Notifications) on a test's private session bus: it
// records every notice it is sent, so a test can check that a fill with
// no prompt on the CDP path showed one, and what it said.
package notifyd

import (
	"slices"
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"
)

// Notice is one notice the service was sent.
type Notice struct {
	App, Summary, Body string
}

// Daemon is a running stand-in.
type Daemon struct {
	mu      sync.Mutex
	notices []Notice
	changed chan struct{}
}

// Start owns org.freedesktop.Notifications on the session bus this
// process points at (tests/kit/secretservice.StartBus makes one) until the
// test ends.
func Start(t testing.TB) *Daemon {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatalf("notifyd: connect to the test bus: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	d := &Daemon{changed: make(chan struct{})}
	if err := conn.Export(server{d}, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatalf("notifyd: export: %v", err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("notifyd: own the name: %v (reply %v)", err, reply)
	}
	return d
}

// Notices are the notices sent so far.
func (d *Daemon) Notices() []Notice {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.notices)
}

// Changed is closed at the next notice.
func (d *Daemon) Changed() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed
}

// server is the exported object: D-Bus method names are its methods.
type server struct{ d *Daemon }

// Notify is org.freedesktop.Notifications.Notify.
func (s server) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	s.d.notices = append(s.d.notices, Notice{App: app, Summary: summary, Body: body})
	close(s.d.changed)
	s.d.changed = make(chan struct{})
	return uint32(len(s.d.notices)), nil
}

// GetServerInformation is part of the interface every service has.
func (server) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "fillgate-notifyd", "fillgate tests", "1", "1.2", nil
}
