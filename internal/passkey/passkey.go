// Package passkey makes and uses fillgate's own WebAuthn credentials: an
// ES256 (P-256) key pair per passkey, the authenticator data, the
// attestation object of format "none" that enrols it, the assertion that
// signs a sign-in with it, and the client data fillgate writes from the
// page's verified origin (the page never supplies it). CheckRPID is the
// rule that decides which relying party an origin may claim, and Judge
// the rule that decides what becomes of one WebAuthn call of a page
// (call.go).
//
// The package does no I/O: where a key is kept (the OS keyring), who
// approves a use and which tab was armed are its callers' business. A
// private key leaves a Key only as PKCS#8 DER for the keyring, which the
// caller zeroes; no error of this package holds key material or a
// derivative of it.
package passkey

import "crypto/sha256"

// Ceremony is the type member of the client data: which WebAuthn call a
// response answers.
type Ceremony string

// The two ceremonies.
const (
	Create Ceremony = "webauthn.create" // navigator.credentials.create(): enrol a passkey
	Get    Ceremony = "webauthn.get"    // navigator.credentials.get(): sign in with it
)

// Presence is what the authenticator data says about the person, as the
// caller decided it: UP (user present) and UV (user verified). fillgate's
// host sets UP for a call that a person's or an agent's request armed and
// policy allowed, and UV only when the person approved this very use in
// the prompt or the native dialog.
type Presence struct {
	UserPresent  bool
	UserVerified bool
}

// Authenticator data flags (WebAuthn §6.1). BE and BS stay 0: a key in the
// OS keyring is not synced, and BE may never change for a credential.
const (
	flagUP = 0x01 // user present
	flagUV = 0x04 // user verified
	flagAT = 0x40 // attested credential data included
)

// rpIDHash is the first field of authenticator data: SHA-256 of the
// relying party id.
func rpIDHash(rp RPID) [32]byte { return sha256.Sum256([]byte(rp.id)) }

// flags encodes p, with AT when attested credential data follows.
func (p Presence) flags(attested bool) byte {
	var f byte
	if p.UserPresent {
		f |= flagUP
	}
	if p.UserVerified {
		f |= flagUV
	}
	if attested {
		f |= flagAT
	}
	return f
}
