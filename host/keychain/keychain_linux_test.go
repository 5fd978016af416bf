package keychain

import (
	"fmt"
	"os"
	"os/exec"
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
	// go-keyring talks over godbus's process-wide session-bus connection,
	// which an earlier test may have left connected to its (now stopping)
	// Secret Service. A fresh process has none.
	if os.Getenv("FILLGATE_KEYCHAIN_CHILD") == "1" {
		if err := Check(); err == nil {
			fmt.Println("check succeeded")
			os.Exit(1)
		}
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckFailsWithoutKeyring$")
	cmd.Env = append(os.Environ(), "FILLGATE_KEYCHAIN_CHILD=1", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("Check with no Secret Service: %v: %s", err, out)
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
