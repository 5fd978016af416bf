// Package sources builds the secret source a policy names for a service
// and field kind (policy.Source), so the fill flow asks one interface and
// never switches on stores itself.
package sources

import (
	"fmt"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/bitwarden"
	"github.com/fillgate/fillgate/internal/secrets/keepassxc"
	"github.com/fillgate/fillgate/internal/secrets/keyringsrc"
	"github.com/fillgate/fillgate/internal/secrets/onepassword"
	"github.com/fillgate/fillgate/internal/secrets/pass"
	"github.com/fillgate/fillgate/internal/secrets/rbw"
	"github.com/fillgate/fillgate/internal/totp"
)

// Options is what sources need from the host.
type Options struct {
	// Environ is fillgate's environment (os.Environ()); each store's
	// program gets only the variables its package lists (EnvKeys).
	Environ []string
	// Keyring is the OS keyring (keychain.OS()).
	Keyring *keychain.Keyring
	// Clock is the time for one-time codes; nil means the system clock.
	Clock totp.Clock
}

// For returns the source for src (from policy.Settings.Source). nil means
// the policy names no store: the OS keyring, where a value the person
// remembered is (when there is none, the person types it in the prompt).
func For(src *policy.Source, o Options) (secrets.Source, error) {
	clock := o.Clock
	if clock == nil {
		clock = totp.SystemClock{}
	}
	if src == nil {
		return &keyringsrc.Source{Keyring: o.Keyring, Clock: clock}, nil
	}
	switch src.Store {
	case policy.StoreKeyring:
		return &keyringsrc.Source{Keyring: o.Keyring, Clock: clock}, nil
	case policy.StorePass:
		return &pass.Source{Entry: src.Entry, StoreDir: src.StoreDir, Command: src.Command, Environ: o.Environ, Clock: clock}, nil
	case policy.StoreKeePassXC:
		return &keepassxc.Source{Database: src.Database, Entry: src.Entry, KeyFile: src.KeyFile, NoPassword: src.DBPassword == policy.DBPasswordNone,
			Command: src.Command, Environ: o.Environ, Clock: clock}, nil
	case policy.StoreOnePass:
		return &onepassword.Source{Ref: src.Ref, Item: src.Item, Vault: src.Vault, Account: src.Account, Command: src.Command, Environ: o.Environ, Clock: clock}, nil
	case policy.StoreBitwarden:
		return &bitwarden.Source{Item: src.Item, Command: src.Command, Environ: o.Environ, Clock: clock}, nil
	case policy.StoreRbw:
		return &rbw.Source{Entry: src.Entry, User: src.User, Folder: src.Folder, Command: src.Command, Environ: o.Environ, Clock: clock}, nil
	}
	return nil, fmt.Errorf("unknown store %q", src.Store)
}
