//go:build !linux

package keychain

// sessionBus is a Linux concern; elsewhere the OS keyring needs no bus.
func sessionBus() error { return nil }
