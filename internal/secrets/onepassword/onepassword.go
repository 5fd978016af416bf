// Package onepassword is the secret source for 1Password, through its
// CLI: `op read --no-newline op://vault/item/field` for a password, `op
// item get ITEM --otp` for the current one-time code (computed by op).
// op is unlocked by the 1Password desktop app (Settings → Developer →
// Integrate with 1Password CLI), a service account token or a Connect
// server, all through op's own environment variables, which fillgate
// passes on; a locked app or a signed-out op is an error that says so.
package onepassword

import (
	"context"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/storecmd"
	"github.com/fillgate/fillgate/internal/totp"
)

// Store is the store's name in the policy and in messages.
const Store = "op"

// EnvKeys are the variables op is given from fillgate's environment: its
// config and the way it reaches the desktop app, and its own settings
// (OP_*: account, service account token, Connect server, sessions).
var EnvKeys = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "LANG", "LC_CTYPE", "TMPDIR", "OP_*"}

// Source reads one 1Password secret.
type Source struct {
	Ref     string // op://vault/item/field, for a password
	Item    string // the item, for a one-time code
	Vault   string // its vault, or ""
	Account string // the account, or ""
	Command string
	Environ []string
	Clock   totp.Clock
}

// Describe names the reference or item.
func (s *Source) Describe() string {
	if s.Ref != "" {
		return "from 1Password: " + s.Ref
	}
	if s.Vault != "" {
		return "from 1Password: " + s.Item + " in " + s.Vault
	}
	return "from 1Password: " + s.Item
}

// Fetch runs op.
func (s *Source) Fetch(ctx context.Context, req secrets.Request) ([]byte, error) {
	path, err := storecmd.Find(Store, "op", s.Command, s.Environ, "install the 1Password CLI (https://developer.1password.com/docs/cli/get-started/)")
	if err != nil {
		return nil, err
	}
	var args []string
	if req.Field == secrets.FieldOTP {
		if s.Item == "" {
			return nil, &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "no item for the one-time code", Fix: "set item in the policy's otp table"}
		}
		args = []string{"item", "get", s.Item, "--otp"}
		if s.Vault != "" {
			args = append(args, "--vault", s.Vault)
		}
		if _, err := totp.Fresh(ctx, s.Clock, totp.DefaultPeriod); err != nil {
			return nil, err
		}
	} else {
		if s.Ref == "" {
			return nil, &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "no secret reference for the password", Fix: "set ref in the policy's password table"}
		}
		args = []string{"read", "--no-newline", s.Ref}
	}
	if s.Account != "" {
		args = append(args, "--account", s.Account)
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
	return secrets.TrimNewline(out), nil
}

// classify reads what op said ("[ERROR] 2024/01/02 03:04:05 …").
func (s *Source) classify(_ int, stderr []byte) *secrets.Error {
	what := s.Ref
	if what == "" {
		what = s.Item
	}
	switch {
	case storecmd.Contains(stderr, "not currently signed in", "account is not signed in", "no accounts configured", "session expired",
		"authorization prompt dismissed", "authorization timeout", "connecting to desktop app", "cannot connect to 1password", "app is locked", "signin"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "1Password is locked, or op is not signed in",
			Fix: "unlock 1Password (in the desktop app, with Settings → Developer → Integrate with 1Password CLI on), or run `op signin`"}
	case storecmd.Contains(stderr, "isn't an item", "could not find item", "isn't a vault", "isn't a field", "could not read secret", "no item found", "doesn't have a one-time password"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "1Password has no " + what, Fix: "check the policy's reference or item (try `op read` or `op item get` yourself)"}
	}
	return nil
}
