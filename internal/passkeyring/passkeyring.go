// Package passkeyring keeps fillgate's own passkeys in the OS keyring and
// uses them there: one item per service and account (keychain's
// FieldPasskey) holding the relying party id, the credential id, the user
// handle, the signature count and the private key as PKCS#8. Enrol makes
// a passkey and keeps it; Sign signs one sign-in with it. The private key
// is read and written only inside these two calls: no result, error or
// log line of this package holds it or a derivative of it, and every
// buffer that held it is zeroed (the string go-keyring takes and returns
// is out of reach, as for every value fillgate keeps).
package passkeyring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/passkey"
)

// Store is the part of the OS keyring a passkey needs.
type Store interface {
	Store(ctx context.Context, it keychain.Item, value []byte) (string, error)
	Rewrite(ctx context.Context, it keychain.Item, value []byte) error
	Get(ctx context.Context, it keychain.Item) ([]byte, error)
}

// ErrNone is returned when no passkey is kept for the service and
// account.
var ErrNone = errors.New("no passkey of the agents' is kept for this service and account")

// maxUserHandle is WebAuthn's limit on a user handle.
const maxUserHandle = 64

// Public is what may be said of a kept passkey outside the host: its
// relying party, credential id and user handle. It holds no key.
type Public struct {
	RPID       string
	ID         []byte
	UserHandle []byte
	// SignCount is the count of the last assertion made (0: none yet).
	SignCount uint32
}

// item is a passkey's keyring value, as JSON ([]byte members are
// base64). Version 1.
type item struct {
	V          int    `json:"v"`
	RPID       string `json:"rp"`
	ID         []byte `json:"id"`
	UserHandle []byte `json:"user"`
	SignCount  uint32 `json:"count"`
	Key        []byte `json:"key"` // PKCS#8 DER
}

// wipe zeroes the key.
func (it *item) wipe() { clear(it.Key) }

// Enrolled is what Enrol returns: the passkey's public part, the client
// data fillgate wrote and the attestation to hand to the page, with the
// public key as SPKI (the page's getPublicKey()).
type Enrolled struct {
	Public
	ClientDataJSON []byte
	passkey.Attestation
	PublicKeySPKI []byte
}

// Enrol makes a passkey for the page of origin o on relying party rp,
// for the user handle the relying party chose, and keeps it under
// service and account (replacing a passkey kept there), before anything
// is handed to the page: a passkey the keyring did not take is never
// enrolled. challenge is the relying party's, p what the person's
// approval was.
func Enrol(ctx context.Context, s Store, service, account string, o passkey.Origin, rp passkey.RPID, userHandle, challenge []byte, p passkey.Presence) (Enrolled, error) {
	it, err := keychain.NewPasskeyItem(service, account)
	if err != nil {
		return Enrolled{}, err
	}
	if len(userHandle) == 0 || len(userHandle) > maxUserHandle {
		return Enrolled{}, fmt.Errorf("passkey: a user handle has 1 to %d bytes", maxUserHandle)
	}
	cd, err := passkey.ClientData(passkey.Create, challenge, o)
	if err != nil {
		return Enrolled{}, err
	}
	key, err := passkey.GenerateKey()
	if err != nil {
		return Enrolled{}, err
	}
	defer key.Wipe()
	id, err := passkey.NewCredentialID()
	if err != nil {
		return Enrolled{}, err
	}
	att, err := passkey.Attest(key, rp, id, p)
	if err != nil {
		return Enrolled{}, err
	}
	spki, err := key.PublicKeySPKI()
	if err != nil {
		return Enrolled{}, err
	}
	der, err := key.PKCS8()
	if err != nil {
		return Enrolled{}, err
	}
	kept := item{V: 1, RPID: rp.String(), ID: id, UserHandle: userHandle, Key: der}
	defer kept.wipe()
	if err := put(ctx, s, it, &kept, false); err != nil {
		return Enrolled{}, err
	}
	pub := Public{RPID: kept.RPID, ID: id, UserHandle: userHandle}
	return Enrolled{Public: pub, ClientDataJSON: cd, Attestation: att, PublicKeySPKI: spki}, nil
}

// Lookup returns the public part of the passkey kept for service and
// account, or ErrNone.
func Lookup(ctx context.Context, s Store, service, account string) (Public, error) {
	it, err := keychain.NewPasskeyItem(service, account)
	if err != nil {
		return Public{}, err
	}
	kept, err := get(ctx, s, it)
	if err != nil {
		return Public{}, err
	}
	defer kept.wipe()
	return Public{RPID: kept.RPID, ID: kept.ID, UserHandle: kept.UserHandle, SignCount: kept.SignCount}, nil
}

// Signed is what Sign returns: the response to the page's get().
type Signed struct {
	Public
	ClientDataJSON []byte
	passkey.Assertion
}

// Sign signs one sign-in with the passkey kept for service and account,
// for the page of origin o, over the relying party's challenge. rp must
// be the passkey's own relying party. The signature count goes up by one
// and is kept before the assertion is made, so no two assertions share a
// count, even when the page never gets this one.
func Sign(ctx context.Context, s Store, service, account string, o passkey.Origin, rp passkey.RPID, challenge []byte, p passkey.Presence) (Signed, error) {
	it, err := keychain.NewPasskeyItem(service, account)
	if err != nil {
		return Signed{}, err
	}
	cd, err := passkey.ClientData(passkey.Get, challenge, o)
	if err != nil {
		return Signed{}, err
	}
	kept, err := get(ctx, s, it)
	if err != nil {
		return Signed{}, err
	}
	defer kept.wipe()
	if kept.RPID != rp.String() {
		return Signed{}, fmt.Errorf("passkey: the page asked for relying party %s; the passkey is for %s", rp, kept.RPID)
	}
	if kept.SignCount == math.MaxUint32 {
		return Signed{}, errors.New("passkey: its signature count is used up; enrol a new one")
	}
	key, err := passkey.ParsePKCS8(kept.Key)
	if err != nil {
		return Signed{}, err
	}
	defer key.Wipe()
	kept.SignCount++
	if err := put(ctx, s, it, &kept, true); err != nil {
		return Signed{}, err
	}
	as, err := passkey.Assert(key, rp, p, kept.SignCount, cd)
	if err != nil {
		return Signed{}, err
	}
	pub := Public{RPID: kept.RPID, ID: kept.ID, UserHandle: kept.UserHandle, SignCount: kept.SignCount}
	return Signed{Public: pub, ClientDataJSON: cd, Assertion: as}, nil
}

// put keeps v for it: a new value (Store: a new stamp, which ends leases
// granted on an earlier passkey) or, with rewrite, the same passkey's new
// count (Rewrite: leases go on).
func put(ctx context.Context, s Store, it keychain.Item, v *item, rewrite bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return errors.New("passkey: encode the keyring item")
	}
	defer clear(b)
	if rewrite {
		if err := s.Rewrite(ctx, it, b); err != nil {
			return fmt.Errorf("keep the passkey's signature count: %w", err)
		}
		return nil
	}
	if _, err := s.Store(ctx, it, b); err != nil {
		return fmt.Errorf("keep the passkey: %w", err)
	}
	return nil
}

// get reads the passkey kept for it; the caller wipes it.
func get(ctx context.Context, s Store, it keychain.Item) (item, error) {
	b, err := s.Get(ctx, it)
	if errors.Is(err, keychain.ErrNotFound) {
		return item{}, ErrNone
	}
	if err != nil {
		return item{}, err
	}
	defer clear(b)
	var v item
	if err := json.Unmarshal(b, &v); err != nil || v.V != 1 || v.RPID == "" || len(v.ID) == 0 || len(v.Key) == 0 {
		v.wipe()
		return item{}, errors.New("passkey: the keyring item is not a passkey fillgate wrote")
	}
	return v, nil
}
