// Package bitwarden is the secret source for the Bitwarden CLI: `bw get
// password ITEM` and `bw get totp ITEM` (the code computed by bw). bw
// opens the vault with the session key `bw unlock` prints: fillgate passes
// BW_SESSION from its own environment (the browser's, for the host) and
// never reads it from anywhere else; without it, or with an expired one,
// the error says to run `bw unlock`. bw is run with BW_NOINTERACTION=true,
// so it never waits for a master password.
package bitwarden

import (
	"context"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/storecmd"
	"github.com/fillgate/fillgate/internal/totp"
)

// Store is the store's name in the policy and in messages.
const Store = "bw"

// EnvKeys are the variables bw is given from fillgate's environment: its
// data dir and the session key.
var EnvKeys = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "BITWARDENCLI_APPDATA_DIR", "BW_SESSION", "NODE_EXTRA_CA_CERTS", "LANG", "LC_CTYPE", "TMPDIR"}

// Source reads one Bitwarden item.
type Source struct {
	Item    string // the item id
	Command string
	Environ []string
	Clock   totp.Clock
}

// Describe names the item.
func (s *Source) Describe() string { return "from Bitwarden: item " + s.Item }

// Fetch runs bw get.
func (s *Source) Fetch(ctx context.Context, req secrets.Request) ([]byte, error) {
	path, err := storecmd.Find(Store, "bw", s.Command, s.Environ, "install the Bitwarden CLI (https://bitwarden.com/help/cli/), or use rbw")
	if err != nil {
		return nil, err
	}
	what := "password"
	if req.Field == secrets.FieldOTP {
		what = "totp"
		if _, err := totp.Fresh(ctx, s.Clock, totp.DefaultPeriod); err != nil {
			return nil, err
		}
	}
	out, err := storecmd.Run(ctx, storecmd.Command{
		Store:    Store,
		Path:     path,
		Args:     []string{"get", what, s.Item},
		Environ:  s.Environ,
		Keys:     EnvKeys,
		Set:      []string{"BW_NOINTERACTION=true"},
		Classify: s.classify,
	})
	if err != nil {
		return nil, err
	}
	return secrets.TrimNewline(out), nil
}

// classify reads what bw said.
func (s *Source) classify(_ int, stderr []byte) *secrets.Error {
	switch {
	case storecmd.Contains(stderr, "you are not logged in"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "bw is not logged in",
			Fix: "run `bw login`, then `bw unlock` and start your browser where BW_SESSION is set (see docs/stores.md, Bitwarden)"}
	case storecmd.Contains(stderr, "vault is locked", "your vault is locked", "session key is invalid"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "the Bitwarden vault is locked for fillgate",
			Fix: "run `bw unlock`, and give fillgate the session: export the BW_SESSION it prints where your browser (or fillgate) is started (see docs/stores.md, Bitwarden)"}
	case storecmd.Contains(stderr, "not found"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "Bitwarden has no item " + s.Item, Fix: "use an item id from `bw list items`"}
	case storecmd.Contains(stderr, "more than one result"):
		return &secrets.Error{Source: Store, Kind: secrets.KindFailed, Detail: "the item " + s.Item + " matches more than one item", Fix: "use the item's id from `bw list items`"}
	case storecmd.Contains(stderr, "no totp"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "the item " + s.Item + " has no TOTP", Fix: "set up TOTP for it in Bitwarden"}
	}
	return nil
}
