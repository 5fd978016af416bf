//go:build unix && !darwin

package desktopnote

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/godbus/dbus/v5"

	"github.com/fillgate/fillgate/internal/fill"
)

// The notification service on D-Bus (Desktop Notifications Specification).
const (
	busName    = "org.freedesktop.Notifications"
	objectPath = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyCall = "org.freedesktop.Notifications.Notify"
)

type notifier struct{}

func newNotifier() fill.Notifier { return notifier{} }

// Notify sends n to the notification service on the session bus, with
// the service's own timeout, and returns once the service took it.
func (notifier) Notify(ctx context.Context, n fill.Notice) error {
	if err := sessionBus(); err != nil {
		return err
	}
	conn, err := dbus.ConnectSessionBus(dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("desktop notice: the session bus: %w", err)
	}
	defer conn.Close()
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(1))}
	var id uint32
	err = conn.Object(busName, objectPath).CallWithContext(ctx, notifyCall, 0,
		appName, uint32(0), "dialog-password", n.Title, n.Message, []string{}, hints, int32(-1)).Store(&id)
	if err != nil {
		return fmt.Errorf("desktop notice: the notification service did not take it: %w", err)
	}
	return nil
}

// sessionBus checks that a session bus is there before connecting: with
// none, the D-Bus library would autolaunch one that outlives fillgate.
func sessionBus() error {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return nil
	}
	if rt := os.Getenv("XDG_RUNTIME_DIR"); rt != "" {
		if fi, err := os.Stat(filepath.Join(rt, "bus")); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return nil
		}
	}
	return errors.New("desktop notice: there is no D-Bus session bus, so no notification service")
}
