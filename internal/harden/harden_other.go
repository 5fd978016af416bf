//go:build !linux

package harden

// process does nothing here yet: macOS and Windows keep other users'
// processes out by default, and same-user debugging protection needs
// entitlements (macOS) or a process mitigation policy (Windows).
func process() error { return nil }
