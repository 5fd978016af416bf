package passkey

import (
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// COSE values of an ES256 public key (RFC 9053, IANA COSE registries).
const (
	coseKtyEC2   = 2
	coseAlgES256 = -7
	coseCrvP256  = 1
)

// coseKey is a COSE_Key for an EC2 public key. The integer map keys are
// COSE's: 1 kty, 3 alg, -1 crv, -2 x, -3 y.
type coseKey struct {
	Kty int    `cbor:"1,keyasint"`
	Alg int    `cbor:"3,keyasint"`
	Crv int    `cbor:"-1,keyasint"`
	X   []byte `cbor:"-2,keyasint"`
	Y   []byte `cbor:"-3,keyasint"`
}

// attestationObject is WebAuthn's attestation object (§6.5.4) with the
// "none" statement format: an empty attStmt map.
type attestationObject struct {
	Fmt      string   `cbor:"fmt"`
	AttStmt  struct{} `cbor:"attStmt"`
	AuthData []byte   `cbor:"authData"`
}

// encodeCTAP2 encodes v in CTAP2 canonical CBOR, which WebAuthn asks of
// authenticators: definite lengths, smallest encodings, map keys sorted
// by length then bytes.
func encodeCTAP2(v any) ([]byte, error) {
	em, err := cbor.CTAP2EncOptions().EncMode()
	if err != nil {
		return nil, fmt.Errorf("passkey: CBOR encoder: %w", err)
	}
	b, err := em.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("passkey: encode CBOR: %w", err)
	}
	return b, nil
}

// coseEC2 encodes the P-256 public point (x, y) as a COSE_Key.
func coseEC2(x, y []byte) ([]byte, error) {
	return encodeCTAP2(coseKey{Kty: coseKtyEC2, Alg: coseAlgES256, Crv: coseCrvP256, X: x, Y: y})
}
