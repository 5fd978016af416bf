// Package keychain is fillgate's door to the OS keyring (Secret Service on
// Linux, Keychain on macOS, Credential Manager on Windows) through
// go-keyring. Items live under the service name "fillgate".
package keychain

import (
	"errors"
	"fmt"

	"github.com/zalando/go-keyring"
)

// Service is the keyring service name fillgate's items use.
const Service = "fillgate"

// probeUser is the item Check writes and removes again.
const probeUser = "fillgate-doctor-probe"

// Check proves the keyring is reachable and writable by storing, reading
// back and deleting a throw-away item that holds no secret.
func Check() error {
	if err := sessionBus(); err != nil {
		return err
	}
	const marker = "probe"
	if err := keyring.Set(Service, probeUser, marker); err != nil {
		return fmt.Errorf("cannot write to the keyring: %w", err)
	}
	got, err := keyring.Get(Service, probeUser)
	if err != nil {
		return fmt.Errorf("cannot read from the keyring: %w", err)
	}
	if err := keyring.Delete(Service, probeUser); err != nil {
		return fmt.Errorf("cannot delete from the keyring: %w", err)
	}
	if got != marker {
		return errors.New("the keyring returned a different item than was stored")
	}
	return nil
}

// Forget removes the remembered secret for service, if there is one. It
// reports whether anything was removed.
func Forget(service string) (bool, error) {
	if err := sessionBus(); err != nil {
		return false, err
	}
	err := keyring.Delete(Service, service)
	if errors.Is(err, keyring.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove %s from the keyring: %w", service, err)
	}
	return true, nil
}
