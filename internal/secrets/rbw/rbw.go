// Package rbw is the secret source for rbw, the unofficial Bitwarden
// client: `rbw get ENTRY [USER]` and `rbw code ENTRY [USER]` (the code
// computed by rbw). rbw's agent keeps the vault unlocked; when it is
// locked, rbw asks for the master password with its pinentry on the
// person's display, and an error says to run `rbw unlock` when it cannot.
package rbw

import (
	"context"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/storecmd"
	"github.com/fillgate/fillgate/internal/totp"
)

// Store is the store's name in the policy and in messages.
const Store = "rbw"

// EnvKeys are the variables rbw is given from fillgate's environment:
// where its agent's socket and its files are, its profile, and what its
// pinentry needs to show itself.
var EnvKeys = []string{"PATH", "HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "RBW_PROFILE",
	"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "GPG_TTY", "LANG", "LC_CTYPE", "TMPDIR"}

// Source reads one rbw entry.
type Source struct {
	Entry   string // the entry name
	User    string // its user name, or ""
	Folder  string // its folder, or ""
	Command string
	Environ []string
	Clock   totp.Clock
}

// Describe names the entry.
func (s *Source) Describe() string {
	d := "from rbw: " + s.Entry
	if s.User != "" {
		d += " (" + s.User + ")"
	}
	return d
}

// Fetch runs rbw get or rbw code.
func (s *Source) Fetch(ctx context.Context, req secrets.Request) ([]byte, error) {
	path, err := storecmd.Find(Store, "rbw", s.Command, s.Environ, "install rbw (https://github.com/doy/rbw)")
	if err != nil {
		return nil, err
	}
	verb := "get"
	if req.Field == secrets.FieldOTP {
		verb = "code"
		if _, err := totp.Fresh(ctx, s.Clock, totp.DefaultPeriod); err != nil {
			return nil, err
		}
	}
	args := []string{verb}
	if s.Folder != "" {
		args = append(args, "--folder", s.Folder)
	}
	args = append(args, s.Entry)
	if s.User != "" {
		args = append(args, s.User)
	}
	out, err := storecmd.Run(ctx, storecmd.Command{
		Store:    Store,
		Path:     path,
		Args:     args,
		Environ:  s.Environ,
		Keys:     EnvKeys,
		Classify: s.classify,
	})
	if err != nil {
		return nil, err
	}
	return secrets.FirstLine(out), nil
}

// classify reads what rbw said ("rbw get: …").
func (s *Source) classify(_ int, stderr []byte) *secrets.Error {
	switch {
	case storecmd.Contains(stderr, "couldn't find entry", "no entry found"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "rbw has no entry " + s.Entry, Fix: "check the entry name with `rbw list`"}
	case storecmd.Contains(stderr, "does not contain a totp secret"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "the entry " + s.Entry + " has no TOTP", Fix: "set up TOTP for it in Bitwarden"}
	case storecmd.Contains(stderr, "failed to log in", "not logged in", "rbw login", "rbw register"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "rbw is not logged in", Fix: "run `rbw login`, then `rbw unlock`"}
	case storecmd.Contains(stderr, "failed to unlock", "pinentry", "locked", "agent"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "the rbw vault is locked", Fix: "run `rbw unlock`"}
	}
	return nil
}
