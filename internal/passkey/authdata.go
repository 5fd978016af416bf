package passkey

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// Credential id lengths: fillgate makes ids of credentialIDLen random
// bytes; WebAuthn allows up to 1023.
const (
	credentialIDLen    = 16
	maxCredentialIDLen = 1023
)

// NewCredentialID returns a new random credential id of 16 bytes: enough
// never to collide, and short in the keyring.
func NewCredentialID() ([]byte, error) {
	id := make([]byte, credentialIDLen)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("passkey: make a credential id: %w", err)
	}
	return id, nil
}

// Attestation is what enrols a passkey: the authenticator data with the
// attested credential data, and the attestation object of format "none"
// that carries it. The page's response holds both (authenticatorData is
// a convenience copy of what the object holds).
type Attestation struct {
	AuthData          []byte
	AttestationObject []byte
}

// Attest makes the response of navigator.credentials.create() for a new
// credential id of key k on the relying party rp. The signature count
// starts at 0; the first assertion uses 1. The attested credential data
// names the zero AAGUID: a "none" attestation proves nothing about the
// authenticator's model, relying parties that filter on AAGUIDs let the
// zero one through and would refuse an unlisted one, and a fillgate AAGUID
// would tell every site which tool the person uses.
func Attest(k *Key, rp RPID, id []byte, p Presence) (Attestation, error) {
	if rp.id == "" {
		return Attestation{}, errors.New("passkey: no relying party id")
	}
	if len(id) == 0 || len(id) > maxCredentialIDLen {
		return Attestation{}, fmt.Errorf("passkey: a credential id has 1 to %d bytes", maxCredentialIDLen)
	}
	if k == nil || k.d == nil {
		return Attestation{}, errWiped
	}
	cose, err := k.PublicKeyCOSE()
	if err != nil {
		return Attestation{}, err
	}
	ad := authDataHead(rp, p.flags(true), 0)
	ad = append(ad, make([]byte, 16)...) // the AAGUID, all zero
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(id)))
	ad = append(ad, id...)
	ad = append(ad, cose...)
	obj, err := encodeCTAP2(attestationObject{Fmt: "none", AuthData: ad})
	if err != nil {
		return Attestation{}, err
	}
	return Attestation{AuthData: ad, AttestationObject: obj}, nil
}

// Assertion is what signs in with a passkey: the authenticator data and
// the signature over it and the client data's hash.
type Assertion struct {
	AuthData  []byte
	Signature []byte // ECDSA over SHA-256, DER-encoded, as ES256 asks
}

// Assert makes the response of navigator.credentials.get() with key k on
// the relying party rp, over clientDataJSON (which ClientData wrote).
// signCount is the credential's count after this use: the caller adds
// one to the count it keeps, and keeps the new count before the
// assertion leaves, so no two assertions share a count. It may not be 0,
// which tells relying parties the authenticator keeps no count.
func Assert(k *Key, rp RPID, p Presence, signCount uint32, clientDataJSON []byte) (Assertion, error) {
	if rp.id == "" {
		return Assertion{}, errors.New("passkey: no relying party id")
	}
	if signCount == 0 {
		return Assertion{}, errors.New("passkey: an assertion's signature count starts at 1")
	}
	if len(clientDataJSON) == 0 {
		return Assertion{}, errors.New("passkey: no client data to sign")
	}
	ad := authDataHead(rp, p.flags(false), signCount)
	cdh := clientDataHash(clientDataJSON)
	msg := append(append(make([]byte, 0, len(ad)+len(cdh)), ad...), cdh[:]...)
	sig, err := k.sign(msg)
	if err != nil {
		return Assertion{}, err
	}
	return Assertion{AuthData: ad, Signature: sig}, nil
}

// authDataHead is the fixed part of authenticator data (§6.1): rpIdHash,
// flags and the big-endian signature count.
func authDataHead(rp RPID, flags byte, signCount uint32) []byte {
	h := rpIDHash(rp)
	ad := make([]byte, 0, 37+16+2+credentialIDLen+80)
	ad = append(ad, h[:]...)
	ad = append(ad, flags)
	return binary.BigEndian.AppendUint32(ad, signCount)
}
