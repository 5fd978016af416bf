package keychain

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/tests/secretservice"
	"github.com/zalando/go-keyring"
)

func TestCheckRealSecretService(t *testing.T) {
	secretservice.Start(t)
	if err := Check(); err != nil {
		t.Fatalf("Check against a real Secret Service: %v", err)
	}
	// Check leaves nothing behind.
	if _, err := keyring.Get(Service, probeUser); err != keyring.ErrNotFound {
		t.Fatalf("probe item left in the keyring: %v", err)
	}
}

func TestCheckFailsWithoutKeyring(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if err := Check(); err == nil {
		t.Fatal("Check succeeded with no Secret Service")
	}
}

func TestCheckStartsNoBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	err := Check()
	if err == nil || !strings.Contains(err.Error(), "no D-Bus session bus") {
		t.Fatalf("Check without a bus: %v", err)
	}
}
