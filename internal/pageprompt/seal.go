package pageprompt

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// The encrypted answer (PROTOCOL.md, "The prompt's answer"). The page
// makes an X25519 key pair of its own for each answer, agrees a secret
// with the prompt's public key, derives an AES-256-GCM key from it with
// HKDF-SHA256 and seals the payload (a small JSON object) under it. What
// it posts is base64url(page public key ‖ IV ‖ ciphertext ‖ tag).
const (
	pubLen      = 32 // an X25519 public key
	ivLen       = 12 // AES-GCM's standard nonce
	tagLen      = 16 // AES-GCM's tag
	keyLen      = 32 // AES-256
	infoVersion = "fillgate-prompt-v1"
)

// errNoDecrypt is every failure to open an answer: the message says
// nothing about what was sent.
var errNoDecrypt = errors.New("the answer does not decrypt with this prompt's key")

// answerInfo is the HKDF info and the AES-GCM additional data of an
// answer to the prompt at path (its "/<nonce>") for action: it binds the
// ciphertext to this one prompt and this one action.
func answerInfo(path, action string) string {
	return infoVersion + " " + path + " " + action
}

// answerKey is a prompt's key pair. The private half lives only in this
// process's memory and is dropped when the prompt ends; crypto/ecdh gives
// no way to zero it.
type answerKey struct {
	priv *ecdh.PrivateKey
	pub  []byte // the public key as the page gets it (32 bytes)
}

// newAnswerKey makes a fresh X25519 key pair for one prompt.
func newAnswerKey() (*answerKey, error) {
	priv, err := ecdh.X25519().GenerateKey(nil) // Go 1.26: always the secure source
	if err != nil {
		return nil, fmt.Errorf("answer key: %w", err)
	}
	return &answerKey{priv: priv, pub: priv.PublicKey().Bytes()}, nil
}

// publicB64 is the public key as the page reads it: base64url, no padding.
func (k *answerKey) publicB64() string { return base64.RawURLEncoding.EncodeToString(k.pub) }

// open decrypts sealed (the form field's base64url text) sent to the
// prompt at path for action, and returns the payload. The caller zeroes
// it. Every intermediate secret (the agreed secret, the derived key) is
// zeroed here; the AES key schedule inside crypto/aes is beyond reach.
func (k *answerKey) open(sealed []byte, path, action string) ([]byte, error) {
	raw := make([]byte, base64.RawURLEncoding.DecodedLen(len(sealed)))
	defer clear(raw)
	n, err := base64.RawURLEncoding.Decode(raw, sealed)
	if err != nil || n < pubLen+ivLen+tagLen {
		return nil, errNoDecrypt
	}
	raw = raw[:n]
	peer, err := ecdh.X25519().NewPublicKey(raw[:pubLen])
	if err != nil {
		return nil, errNoDecrypt
	}
	shared, err := k.priv.ECDH(peer) // refuses a low-order key (an all-zero secret)
	if err != nil {
		return nil, errNoDecrypt
	}
	defer clear(shared)
	salt := make([]byte, 0, 2*pubLen)
	salt = append(append(salt, k.pub...), raw[:pubLen]...)
	info := answerInfo(path, action)
	key, err := hkdf.Key(sha256.New, shared, salt, info, keyLen)
	if err != nil {
		return nil, errNoDecrypt
	}
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, errNoDecrypt
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, errNoDecrypt
	}
	iv, ct := raw[pubLen:pubLen+ivLen], raw[pubLen+ivLen:]
	out, err := gcm.Open(make([]byte, 0, len(ct)), iv, ct, []byte(info))
	if err != nil {
		return nil, errNoDecrypt
	}
	return out, nil
}

// answerPad is what the page pads an answer's plaintext to a multiple of
// (with spaces after the JSON object, which encoding/json skips), so that
// the size of its POST, which any DevTools client recording the browser's
// traffic sees, says nothing of the value's length.
const answerPad = 4096

// errNotPadded is a decrypted answer whose length is not a multiple of
// answerPad.
var errNotPadded = errors.New("the decrypted answer is not padded")

// payload is a decrypted answer: to a submit, the typed value and the
// choices that go with it; to an approve, the account picked and what the
// store needs typed.
type payload struct {
	// Value is what the human typed, UTF-8, in standard base64 (how
	// encoding/json carries bytes), so it is decoded into a []byte and
	// never becomes a Go string. Submit only.
	Value []byte `json:"value"`
	// Remember asks to remember Value in the OS keyring. Submit only.
	Remember bool `json:"remember"`
	// Account is the account the human picked among those offered.
	Account *string `json:"account"`
	// Ask is what the human typed for the store (the KeePassXC database
	// password), standard base64. Approve only.
	Ask []byte `json:"ask"`
}

// readPayload reads a decrypted answer. Value and Ask are fresh slices of
// exactly their length; every other copy encoding/json made is zeroed. It
// never says anything about the content.
func readPayload(plain []byte) (payload, error) {
	var p payload
	err := json.Unmarshal(plain, &p)
	// encoding/json decodes base64 into a buffer that can be a little
	// longer than the value; zero all of it once copied.
	defer clear(p.Value[:cap(p.Value)])
	defer clear(p.Ask[:cap(p.Ask)])
	if err != nil {
		return payload{}, errors.New("the decrypted answer is not the expected JSON object")
	}
	out := payload{Remember: p.Remember, Account: p.Account}
	if len(p.Value) > 0 {
		out.Value = append(make([]byte, 0, len(p.Value)), p.Value...)
	}
	if len(p.Ask) > 0 {
		out.Ask = append(make([]byte, 0, len(p.Ask)), p.Ask...)
	}
	return out, nil
}
