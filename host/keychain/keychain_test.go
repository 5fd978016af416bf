package keychain

import (
	"testing"

	"github.com/zalando/go-keyring"
)

func TestForget(t *testing.T) {
	keyring.MockInit()
	// The mock needs no bus, but Forget checks for one first.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if removed, err := Forget("github.com"); err != nil || removed {
		t.Fatalf("forget of nothing: %v %v", removed, err)
	}
	if err := keyring.Set(Service, "github.com", "x"); err != nil {
		t.Fatal(err)
	}
	if removed, err := Forget("github.com"); err != nil || !removed {
		t.Fatalf("forget: %v %v", removed, err)
	}
}
