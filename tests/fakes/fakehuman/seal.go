package fakehuman

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// answerPad is what the page pads an answer's plaintext to a multiple of
// (PROTOCOL.md, "The encrypted answer").
const answerPad = 4096

// seal encrypts payload as the prompt page's script does (PROTOCOL.md,
// "The prompt's answer"), written from that description and not shared
// with the host's code: an X25519 key pair of its own, agreement with the
// prompt's key, HKDF-SHA256 over the agreed secret with both public keys
// as salt and "fillgate-prompt-v1 <path> <action>" as info, then
// AES-256-GCM of the payload padded with spaces to a multiple of 4096
// bytes, with a random 12-byte IV and the same info as additional
// data. It returns base64url(public key ‖ IV ‖ ciphertext ‖ tag), and
// zeroes the secrets it made.
func seal(hostKey []byte, path, action string, payload []byte) (string, error) {
	curve := ecdh.X25519()
	host, err := curve.NewPublicKey(hostKey)
	if err != nil {
		return "", fmt.Errorf("fakehuman: the prompt's key: %w", err)
	}
	mine, err := curve.GenerateKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("fakehuman: a key pair: %w", err)
	}
	shared, err := mine.ECDH(host)
	if err != nil {
		return "", fmt.Errorf("fakehuman: key agreement: %w", err)
	}
	defer clear(shared)
	minePub := mine.PublicKey().Bytes()
	info := "fillgate-prompt-v1 " + path + " " + action
	salt := append(append([]byte(nil), hostKey...), minePub...)
	key, err := hkdf.Key(sha256.New, shared, salt, info, 32)
	if err != nil {
		return "", fmt.Errorf("fakehuman: HKDF: %w", err)
	}
	defer clear(key)
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("fakehuman: AES: %w", err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return "", fmt.Errorf("fakehuman: GCM: %w", err)
	}
	// Padded with spaces to a multiple of 4096 bytes, as the page does.
	n := max(1, (len(payload)+answerPad-1)/answerPad) * answerPad
	plain := make([]byte, n)
	copy(plain, payload)
	for i := len(payload); i < n; i++ {
		plain[i] = ' '
	}
	defer clear(plain)
	out := make([]byte, 0, len(minePub)+gcm.NonceSize()+len(plain)+gcm.Overhead())
	out = append(out, minePub...)
	iv := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(iv); err != nil {
		return "", fmt.Errorf("fakehuman: IV: %w", err)
	}
	out = append(out, iv...)
	out = gcm.Seal(out, iv, plain, []byte(info))
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// submitPayload is the JSON object the page's script encrypts for a
// submit: {"value":"<standard base64 of the UTF-8 value>"}, with
// "remember":true when the box is ticked and "account" when the page
// offers a choice. The caller zeroes it.
func submitPayload(value []byte, remember bool, account *string) []byte {
	return payload("value", value, remember, account)
}

// approvePayload is the JSON object the script encrypts for an approve:
// "account" when the page offers a choice, "ask" (standard base64) when
// the store needs something typed. The caller zeroes it.
func approvePayload(ask []byte, account *string) []byte {
	return payload("ask", ask, false, account)
}

// payload writes {"<key>":"<base64 of secret>", "remember":…,
// "account":…} into one buffer sized once, with key left out when secret
// is nil. The account is JSON-escaped by encoding/json (it is no secret).
func payload(key string, secret []byte, remember bool, account *string) []byte {
	var extra []byte
	if remember {
		extra = append(extra, `,"remember":true`...)
	}
	if account != nil {
		a, _ := json.Marshal(*account)
		extra = append(append(extra, `,"account":`...), a...)
	}
	n := 2 + len(extra)
	if secret != nil {
		n += len(key) + 5 + base64.StdEncoding.EncodedLen(len(secret))
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	if secret != nil {
		out = append(out, `"`+key+`":"`...)
		out = base64.StdEncoding.AppendEncode(out, secret)
		out = append(out, '"')
	}
	if len(extra) > 0 {
		if secret == nil {
			extra = extra[1:]
		}
		out = append(out, extra...)
	}
	return append(out, '}')
}
