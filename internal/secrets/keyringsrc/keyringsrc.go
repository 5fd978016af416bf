// Package keyringsrc is the secret source for the OS keyring: a value the
// person remembered with `fillgate remember` (or the prompt's Remember
// box). For a one-time code the item holds the TOTP seed and the code is
// computed now (internal/totp).
package keyringsrc

import (
	"context"
	"errors"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/totp"
)

// Store is the source's name in the policy and in messages.
const Store = "keyring"

// Source reads fillgate's items in a keyring.
type Source struct {
	Keyring *keychain.Keyring
	Clock   totp.Clock
}

// Describe names the keyring.
func (s *Source) Describe() string { return "from the OS keyring" }

// Fetch gets the item for the service, field and account; with an
// account the page shows but no item for it, the service's item without
// an account.
func (s *Source) Fetch(ctx context.Context, req secrets.Request) ([]byte, error) {
	var v []byte
	var err error
	for _, account := range accounts(req.Account) {
		it, ierr := keychain.NewItem(req.Service, req.Field, account)
		if ierr != nil {
			return nil, &secrets.Error{Source: Store, Kind: secrets.KindFailed, Detail: ierr.Error()}
		}
		v, err = s.Keyring.Get(ctx, it)
		if !errors.Is(err, keychain.ErrNotFound) {
			break
		}
	}
	var u *keychain.Unavailable
	switch {
	case errors.As(err, &u):
		return nil, &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "the OS keyring " + u.Reason, Fix: u.Fix}
	case errors.Is(err, keychain.ErrNotFound):
		fix := "remember it: fillgate remember --service " + req.Service
		if req.Field == secrets.FieldOTP {
			fix += " --field otp"
		}
		if req.Account != "" {
			fix += " --account " + req.Account
		}
		return nil, &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "nothing is remembered for " + req.Service, Fix: fix}
	case err != nil:
		return nil, &secrets.Error{Source: Store, Kind: secrets.KindFailed, Detail: err.Error(), Fix: "check the keyring with fillgate doctor"}
	}
	if req.Field != secrets.FieldOTP {
		return v, nil
	}
	defer clear(v)
	code, err := totp.Code(ctx, s.Clock, v)
	if err != nil {
		return nil, &secrets.Error{Source: Store, Kind: secrets.KindFailed, Detail: "the remembered seed: " + err.Error(),
			Fix: "remember it again: fillgate remember --service " + req.Service + " --field otp"}
	}
	return code, nil
}

// accounts is the order to look for items in: the page's account, then
// none.
func accounts(account string) []string {
	if account == "" {
		return []string{""}
	}
	return []string{account, ""}
}
