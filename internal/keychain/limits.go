package keychain

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
)

// Size limits of the OS keyrings, checked before storing so that a secret
// that does not fit is refused with a clear message instead of a failure
// deep in the OS call. The messages never say how long the secret is.
const (
	// WindowsMaxValue is the most bytes Windows Credential Manager holds
	// in one credential.
	WindowsMaxValue = 2560
	// macMaxCommand is the longest command go-keyring sends to macOS's
	// `security -i`: the service, the user and the value, base64-encoded,
	// must fit in it, which leaves about 3000 bytes for the value.
	macMaxCommand = 4096
	// LinuxMaxValue is fillgate's own limit on Linux: the Secret Service
	// has none, but a password or a TOTP seed is far shorter.
	LinuxMaxValue = 16 << 10
)

// windowsFits checks a value of n bytes against Credential Manager's limit.
func windowsFits(n int) error {
	if n > WindowsMaxValue {
		return fmt.Errorf("the secret is longer than the %d bytes Windows Credential Manager holds; it was not stored", WindowsMaxValue)
	}
	return nil
}

// macFits checks a value of n bytes for user against the command go-keyring
// builds for `security -i` (add-generic-password -U -s SERVICE -a USER -w
// go-keyring-base64:VALUE, each shell-quoted).
func macFits(user string, n int) error {
	cmd := len("add-generic-password -U -s ") + len(shellQuote(Service)) + len(" -a ") + len(shellQuote(user)) +
		len(" -w ") + len("go-keyring-base64:") + base64.StdEncoding.EncodedLen(n) + len("\n")
	if cmd > macMaxCommand {
		room := (macMaxCommand - (cmd - base64.StdEncoding.EncodedLen(n))) / 4 * 3
		return fmt.Errorf("the secret is longer than the about %d bytes the macOS Keychain takes for this item (through go-keyring); it was not stored", room)
	}
	return nil
}

// linuxFits checks a value of n bytes against fillgate's limit on Linux.
func linuxFits(n int) error {
	if n > LinuxMaxValue {
		return fmt.Errorf("the secret is longer than %d bytes, fillgate's limit for the keyring; it was not stored", LinuxMaxValue)
	}
	return nil
}

// unsafeShell matches a string go-keyring's shell quoting puts in quotes.
var unsafeShell = regexp.MustCompile(`[^\w@%+=:,./-]`)

// shellQuote quotes s as go-keyring does for `security -i`.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if unsafeShell.MatchString(s) {
		return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
	}
	return s
}
