package passkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"fmt"
)

// Key is one passkey's P-256 key pair. fillgate keeps the private scalar
// in a buffer of its own, which Wipe zeroes; crypto/ecdsa gets a
// short-lived copy for each use, whose big-number form is zeroed after
// it. (The copies Go's crypto makes inside its own packages, and PKCS#8
// encoding's intermediate buffers, are out of reach: Go cannot wipe them.
// They are garbage once the call returns.)
type Key struct {
	d   []byte // the private scalar, 32 bytes big-endian; nil once wiped
	pub []byte // the public point, uncompressed: 0x04 || x || y
}

// errWiped is the error of a use after Wipe.
var errWiped = errors.New("passkey: the key was wiped")

// scalarLen is the length of a P-256 private scalar and of each coordinate.
const scalarLen = 32

// GenerateKey makes a new P-256 key pair.
func GenerateKey() (*Key, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("passkey: make a P-256 key: %w", err)
	}
	defer wipeECDSA(priv)
	return keyOf(priv)
}

// ParsePKCS8 reads a key that PKCS8 wrote. der stays the caller's to
// zero. The error never says more than that der is not such a key: a
// parser's detail could be a derivative of the key.
func ParsePKCS8(der []byte) (*Key, error) {
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("passkey: the stored key is not a PKCS#8 private key")
	}
	priv, ok := parsed.(*ecdsa.PrivateKey)
	if !ok || priv.Curve != elliptic.P256() {
		return nil, errors.New("passkey: the stored key is not a P-256 key")
	}
	defer wipeECDSA(priv)
	return keyOf(priv)
}

// keyOf copies priv's scalar and public point into a new Key.
func keyOf(priv *ecdsa.PrivateKey) (*Key, error) {
	d, err := priv.Bytes()
	if err != nil {
		return nil, errors.New("passkey: read the private scalar")
	}
	pub, err := priv.PublicKey.Bytes()
	if err != nil {
		clear(d)
		return nil, errors.New("passkey: read the public point")
	}
	return &Key{d: d, pub: pub}, nil
}

// PKCS8 returns the private key as PKCS#8 DER, the form fillgate keeps in
// the OS keyring. The caller zeroes it once stored.
func (k *Key) PKCS8() ([]byte, error) {
	priv, err := k.signer()
	if err != nil {
		return nil, err
	}
	defer wipeECDSA(priv)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, errors.New("passkey: encode the key as PKCS#8")
	}
	return der, nil
}

// Wipe zeroes the private scalar; the Key can then sign nothing. It is
// safe to call more than once, and on nil.
func (k *Key) Wipe() {
	if k == nil {
		return
	}
	clear(k.d)
	k.d = nil
}

// PublicKeyCOSE returns the public key as a COSE_Key (kty EC2, alg ES256,
// crv P-256), as the attested credential data carries it.
func (k *Key) PublicKeyCOSE() ([]byte, error) {
	x, y := k.pub[1:1+scalarLen], k.pub[1+scalarLen:]
	return coseEC2(x, y)
}

// PublicKeySPKI returns the public key as DER SubjectPublicKeyInfo, what
// the page's AuthenticatorAttestationResponse.getPublicKey() returns.
func (k *Key) PublicKeySPKI() ([]byte, error) {
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), k.pub)
	if err != nil {
		return nil, fmt.Errorf("passkey: read the public point: %w", err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("passkey: encode the public key: %w", err)
	}
	return der, nil
}

// sign returns the DER-encoded ECDSA signature over SHA-256 of msg.
func (k *Key) sign(msg []byte) ([]byte, error) {
	priv, err := k.signer()
	if err != nil {
		return nil, err
	}
	defer wipeECDSA(priv)
	digest := sha256.Sum256(msg)
	sig, err := ecdsa.SignASN1(rand.Reader, priv, digest[:])
	if err != nil {
		return nil, errors.New("passkey: sign with the key")
	}
	return sig, nil
}

// signer returns a crypto/ecdsa copy of the key for one use; the caller
// wipes it.
func (k *Key) signer() (*ecdsa.PrivateKey, error) {
	if k == nil || k.d == nil {
		return nil, errWiped
	}
	priv, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), k.d)
	if err != nil {
		return nil, errors.New("passkey: the private scalar is not a P-256 key")
	}
	return priv, nil
}

// wipeECDSA zeroes the big-number form of priv's scalar. (D is deprecated
// for computing with, not for zeroing; the package's internal form of the
// key is out of reach.)
func wipeECDSA(priv *ecdsa.PrivateKey) {
	if priv != nil && priv.D != nil {
		clear(priv.D.Bits())
	}
}
