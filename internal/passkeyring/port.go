package passkeyring

import (
	"context"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/passkey"
)

// Port is the fill flow's Passkeys (fill.Passkeys) over a keyring.
type Port struct{ Store Store }

var _ fill.Passkeys = Port{}

// Lookup implements fill.Passkeys.
func (p Port) Lookup(ctx context.Context, service, account string) (passkey.Stored, error) {
	pub, err := Lookup(ctx, p.Store, service, account)
	if err != nil {
		return passkey.Stored{}, err
	}
	return passkey.Stored{RPID: pub.RPID, ID: pub.ID}, nil
}

// Enrol implements fill.Passkeys.
func (p Port) Enrol(ctx context.Context, service, account string, o passkey.Origin, rp passkey.RPID, userHandle, challenge []byte, pr passkey.Presence) (fill.PasskeyResponse, error) {
	en, err := Enrol(ctx, p.Store, service, account, o, rp, userHandle, challenge, pr)
	if err != nil {
		return fill.PasskeyResponse{}, err
	}
	return fill.PasskeyResponse{ID: en.ID, ClientDataJSON: en.ClientDataJSON, AuthenticatorData: en.AuthData,
		AttestationObject: en.AttestationObject, PublicKey: en.PublicKeySPKI}, nil
}

// Sign implements fill.Passkeys.
func (p Port) Sign(ctx context.Context, service, account string, o passkey.Origin, rp passkey.RPID, challenge []byte, pr passkey.Presence) (fill.PasskeyResponse, error) {
	sg, err := Sign(ctx, p.Store, service, account, o, rp, challenge, pr)
	if err != nil {
		return fill.PasskeyResponse{}, err
	}
	return fill.PasskeyResponse{ID: sg.ID, ClientDataJSON: sg.ClientDataJSON, AuthenticatorData: sg.AuthData,
		Signature: sg.Signature, UserHandle: sg.UserHandle}, nil
}
