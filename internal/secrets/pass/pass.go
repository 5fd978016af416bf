// Package pass is the secret source for password-store (`pass`): the
// password is the first line `pass show ENTRY` prints; a one-time code is
// computed from the otpauth:// line of the same entry (internal/totp), never
// with `pass otp`, which hands the seed to oathtool on its command line,
// where any local process can read it.
package pass

import (
	"bytes"
	"context"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/storecmd"
	"github.com/fillgate/fillgate/internal/totp"
)

// Store is the store's name in the policy and in messages.
const Store = "pass"

// EnvKeys are the variables pass is given from fillgate's environment:
// where it and gpg live and keep their files, how gpg-agent asks for the
// key's passphrase (a pinentry on the display or terminal), and the
// locale's character set. Nothing else reaches it.
var EnvKeys = []string{
	"PATH", "HOME", "GNUPGHOME", "PASSWORD_STORE_DIR", "PASSWORD_STORE_GPG_OPTS", "PASSWORD_STORE_SIGNING_KEY",
	"GPG_TTY", "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "LANG", "LC_CTYPE", "TMPDIR",
}

// Source reads one pass entry.
type Source struct {
	Entry    string     // the entry, like work/github
	StoreDir string     // PASSWORD_STORE_DIR from the policy; "" keeps the environment's
	Command  string     // the pass program from the policy; "" looks it up on PATH
	Environ  []string   // fillgate's environment, to take EnvKeys from
	Clock    totp.Clock // for one-time codes
}

// Describe names the entry.
func (s *Source) Describe() string { return "from pass: " + s.Entry }

// Fetch runs `pass show -- ENTRY`.
func (s *Source) Fetch(ctx context.Context, req secrets.Request) ([]byte, error) {
	path, err := storecmd.Find(Store, "pass", s.Command, s.Environ, "install pass (Debian: apt install pass; macOS: brew install pass)")
	if err != nil {
		return nil, err
	}
	var extra []string
	if s.StoreDir != "" {
		extra = append(extra, "PASSWORD_STORE_DIR="+s.StoreDir)
	}
	out, err := storecmd.Run(ctx, storecmd.Command{
		Store:    Store,
		Path:     path,
		Args:     []string{"show", "--", s.Entry},
		Environ:  s.Environ,
		Keys:     EnvKeys,
		Set:      extra,
		Classify: s.classify,
	})
	if err != nil {
		return nil, err
	}
	if req.Field != secrets.FieldOTP {
		return secrets.FirstLine(out), nil
	}
	defer clear(out)
	seed := otpauthLine(out)
	if seed == nil {
		return nil, &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "the entry " + s.Entry + " has no otpauth:// line",
			Fix: "add the service's otpauth://totp/ URI as a line of the entry (pass edit " + s.Entry + ")"}
	}
	code, err := totp.Code(ctx, s.Clock, seed)
	if err != nil {
		return nil, &secrets.Error{Source: Store, Kind: secrets.KindFailed, Detail: "the otpauth:// line of " + s.Entry + ": " + err.Error(), Fix: "check it with pass edit " + s.Entry}
	}
	return code, nil
}

// otpauthLine returns the first line of v that starts with otpauth://, as
// pass-otp finds it (a sub-slice of v).
func otpauthLine(v []byte) []byte {
	for len(v) > 0 {
		line, rest, _ := bytes.Cut(v, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		if bytes.HasPrefix(line, []byte("otpauth://")) {
			return line
		}
		v = rest
	}
	return nil
}

// classify reads what pass and gpg said.
func (s *Source) classify(_ int, stderr []byte) *secrets.Error {
	switch {
	case storecmd.Contains(stderr, "is not in the password store"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "there is no entry " + s.Entry, Fix: "check the entry the policy names against `pass ls`"}
	case storecmd.Contains(stderr, "password store is empty", "try \"pass init\""):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "the password store is empty or not set up", Fix: "check PASSWORD_STORE_DIR (or store_dir in the policy), or run `pass init`"}
	case storecmd.Contains(stderr, "operation cancelled", "no pinentry", "inappropriate ioctl", "pinentry", "bad passphrase", "timeout"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "gpg needs your key's passphrase and could not get it",
			Fix: "unlock your GnuPG key: run `pass show " + s.Entry + "` once in a terminal (gpg-agent then keeps it for a while), or set up a graphical pinentry"}
	case storecmd.Contains(stderr, "no secret key"):
		// gpg says this both when the key is not there and when gpg-agent
		// could not ask for its passphrase (no pinentry can show itself):
		// with a store that works in a terminal, the second.
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "gpg could not decrypt the entry: its key is locked (and gpg-agent could not ask for the passphrase) or not on this machine",
			Fix: "unlock your GnuPG key: run `pass show " + s.Entry + "` once in a terminal (gpg-agent then keeps it for a while), or set up a graphical pinentry; if that fails too, check GNUPGHOME"}
	}
	return nil
}
