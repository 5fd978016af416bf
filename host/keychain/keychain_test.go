package keychain

import (
	"testing"

	"github.com/zalando/go-keyring"
)

func TestForget(t *testing.T) {
	keyring.MockInit()
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
