//go:build !linux

package keychain

import "context"

// usable is a Linux concern: the macOS Keychain and Windows Credential
// Manager need no bus, and are unlocked while the user is logged in (the
// macOS Keychain asks for its password itself when it is not).
func usable(context.Context) error { return nil }
