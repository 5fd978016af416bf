package passkeyring_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/passkey"
	"github.com/fillgate/fillgate/internal/passkeyring"
)

// memStore is an in-memory keyring that keeps every value it was given,
// for the leak checks.
type memStore struct {
	mu      sync.Mutex
	items   map[keychain.Item][]byte
	stamps  map[keychain.Item]string
	written [][]byte // every value stored, as given (copied)
	fail    error
}

func newStore() *memStore {
	return &memStore{items: map[keychain.Item][]byte{}, stamps: map[keychain.Item]string{}}
}

func (m *memStore) Store(_ context.Context, it keychain.Item, v []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return "", m.fail
	}
	m.items[it] = bytes.Clone(v)
	m.written = append(m.written, bytes.Clone(v))
	m.stamps[it] += "+"
	return m.stamps[it], nil
}

func (m *memStore) Rewrite(_ context.Context, it keychain.Item, v []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if _, ok := m.items[it]; !ok {
		return keychain.ErrNotFound
	}
	m.items[it] = bytes.Clone(v)
	m.written = append(m.written, bytes.Clone(v))
	return nil
}

func (m *memStore) Get(_ context.Context, it keychain.Item) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[it]
	if !ok {
		return nil, keychain.ErrNotFound
	}
	return bytes.Clone(v), nil
}

// keyOf is the PKCS#8 key kept for it.
func (m *memStore) keyOf(t *testing.T, it keychain.Item) []byte {
	t.Helper()
	var v struct{ Key []byte }
	if err := json.Unmarshal(m.items[it], &v); err != nil || len(v.Key) == 0 {
		t.Fatalf("the kept item holds no key: %v", err)
	}
	return v.Key
}

func origin(t *testing.T, s string) passkey.Origin {
	t.Helper()
	o, err := passkey.ParseOrigin(s)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func rpid(t *testing.T, o passkey.Origin, s string) passkey.RPID {
	t.Helper()
	rp, err := passkey.CheckRPID(o, s)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// scalar is the raw private scalar of a PKCS#8 key.
func scalar(t *testing.T, der []byte) []byte {
	t.Helper()
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		t.Fatal(err)
	}
	d, err := k.(*ecdsa.PrivateKey).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var challenge = []byte("a relying party's challenge, 32b")

// Enrol keeps the passkey before it answers; Sign signs with it, over
// the client data it writes, with a count one higher each time, which it
// keeps without a new stamp. go-webauthn's parsers and COSE verifier are
// the independent check.
func TestEnrolThenSign(t *testing.T) {
	ctx := context.Background()
	s := newStore()
	o := origin(t, "https://login.example.com")
	rp := rpid(t, o, "example.com")
	user := []byte{1, 2, 3, 4}
	en, err := passkeyring.Enrol(ctx, s, "example.com", "alice", o, rp, user, challenge, passkey.Presence{UserPresent: true, UserVerified: true})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := keychain.NewPasskeyItem("example.com", "alice")
	if s.stamps[it] != "+" {
		t.Fatalf("the passkey was stored %d times; want once", len(s.stamps[it]))
	}
	var ad protocol.AuthenticatorData
	if err := ad.Unmarshal(en.AuthData); err != nil {
		t.Fatalf("go-webauthn does not read the authenticator data: %v", err)
	}
	h := sha256.Sum256([]byte("example.com"))
	if !bytes.Equal(ad.RPIDHash, h[:]) || !bytes.Equal(ad.AttData.CredentialID, en.ID) || !ad.Flags.HasUserVerified() {
		t.Fatalf("authenticator data = rpIdHash ok %v, id ok %v, UV %v", bytes.Equal(ad.RPIDHash, h[:]), bytes.Equal(ad.AttData.CredentialID, en.ID), ad.Flags.HasUserVerified())
	}
	var cd protocol.CollectedClientData
	if err := json.Unmarshal(en.ClientDataJSON, &cd); err != nil || cd.Type != "webauthn.create" || cd.Origin != "https://login.example.com" ||
		cd.Challenge != base64.RawURLEncoding.EncodeToString(challenge) {
		t.Fatalf("client data = %+v, %v", cd, err)
	}
	pub, err := webauthncose.ParsePublicKey(ad.AttData.CredentialPublicKey)
	if err != nil {
		t.Fatal(err)
	}
	stamp := s.stamps[it]
	for want := uint32(1); want <= 3; want++ {
		p := passkey.Presence{UserPresent: true, UserVerified: want == 2}
		sg, err := passkeyring.Sign(ctx, s, "example.com", "alice", o, rp, challenge, p)
		if err != nil {
			t.Fatal(err)
		}
		var ad protocol.AuthenticatorData
		if err := ad.Unmarshal(sg.AuthData); err != nil {
			t.Fatal(err)
		}
		if ad.Counter != want || sg.SignCount != want || ad.Flags.HasUserVerified() != p.UserVerified || !ad.Flags.HasUserPresent() {
			t.Fatalf("assertion %d: count %d (%d), UV %v", want, ad.Counter, sg.SignCount, ad.Flags.HasUserVerified())
		}
		if !bytes.Equal(sg.ID, en.ID) || !bytes.Equal(sg.UserHandle, user) {
			t.Fatal("the assertion names another credential or user")
		}
		cdh := sha256.Sum256(sg.ClientDataJSON)
		ok, err := webauthncose.VerifySignature(pub, append(bytes.Clone(sg.AuthData), cdh[:]...), sg.Signature)
		if err != nil || !ok {
			t.Fatalf("the assertion does not verify: %v", err)
		}
		if lk, err := passkeyring.Lookup(ctx, s, "example.com", "alice"); err != nil || lk.SignCount != want || lk.RPID != "example.com" {
			t.Fatalf("Lookup = %+v, %v", lk, err)
		}
	}
	if s.stamps[it] != stamp {
		t.Error("a sign-in gave the passkey a new stamp: leases on it would end")
	}

	// Nothing Enrol, Sign or Lookup returns holds the key, in any form
	// leakscan knows.
	der := s.keyOf(t, it)
	lk, _ := passkeyring.Lookup(ctx, s, "example.com", "alice")
	sg, _ := passkeyring.Sign(ctx, s, "example.com", "alice", o, rp, challenge, passkey.Presence{UserPresent: true})
	out, _ := json.Marshal([]any{en, lk, sg})
	for _, k := range [][]byte{der, scalar(t, der)} {
		if bytes.Contains(out, k) || strings.Contains(string(out), base64.StdEncoding.EncodeToString(k)) ||
			strings.Contains(string(out), base64.RawURLEncoding.EncodeToString(k)) {
			t.Fatal("leak: a result holds the private key")
		}
	}
}

// Sign refuses what it may not sign, and says so without the key.
func TestSignRefuses(t *testing.T) {
	ctx := context.Background()
	s := newStore()
	o := origin(t, "https://login.example.com")
	rp := rpid(t, o, "")
	if _, err := passkeyring.Sign(ctx, s, "example.com", "", o, rp, challenge, passkey.Presence{UserPresent: true}); !errors.Is(err, passkeyring.ErrNone) {
		t.Fatalf("Sign with nothing kept = %v; want ErrNone", err)
	}
	if _, err := passkeyring.Lookup(ctx, s, "example.com", ""); !errors.Is(err, passkeyring.ErrNone) {
		t.Fatalf("Lookup with nothing kept = %v; want ErrNone", err)
	}
	if _, err := passkeyring.Enrol(ctx, s, "example.com", "", o, rp, nil, challenge, passkey.Presence{}); err == nil {
		t.Fatal("Enrol without a user handle")
	}
	if _, err := passkeyring.Enrol(ctx, s, "example.com", "", o, rp, make([]byte, 65), challenge, passkey.Presence{}); err == nil {
		t.Fatal("Enrol with a user handle over 64 bytes")
	}
	if _, err := passkeyring.Enrol(ctx, s, "example.com", "", o, rp, []byte{1}, nil, passkey.Presence{}); err == nil {
		t.Fatal("Enrol without a challenge")
	}
	if _, err := passkeyring.Enrol(ctx, s, "example.com", "", o, rp, []byte{1}, challenge, passkey.Presence{UserPresent: true}); err != nil {
		t.Fatal(err)
	}
	it, _ := keychain.NewPasskeyItem("example.com", "")
	der := s.keyOf(t, it)

	// Another relying party than the passkey's.
	sub := origin(t, "https://a.login.example.com")
	if _, err := passkeyring.Sign(ctx, s, "example.com", "", sub, rpid(t, sub, "example.com"), challenge, passkey.Presence{}); err == nil {
		t.Fatal("Sign for another relying party")
	}
	// A keyring that does not take the new count: nothing is signed.
	s.fail = errors.New("the keyring is locked")
	if _, err := passkeyring.Sign(ctx, s, "example.com", "", o, rp, challenge, passkey.Presence{}); err == nil {
		t.Fatal("Sign whose count the keyring did not keep")
	}
	// An enrolment the keyring did not take is no enrolment.
	if _, err := passkeyring.Enrol(ctx, s, "other.example", "", origin(t, "https://other.example"), rpid(t, origin(t, "https://other.example"), ""), []byte{1}, challenge, passkey.Presence{}); err == nil {
		t.Fatal("Enrol the keyring did not keep")
	}
	s.fail = nil
	// An item that is not a passkey fillgate wrote.
	s.items[it] = []byte(`{"v":2}`)
	_, err := passkeyring.Sign(ctx, s, "example.com", "", o, rp, challenge, passkey.Presence{})
	if err == nil {
		t.Fatal("Sign with a foreign item")
	}
	s.items[it] = []byte(`{"v":1,"rp":"example.com","id":"AQ==","key":"` + base64.StdEncoding.EncodeToString(append(bytes.Clone(der), 0)) + `"}`)
	_, err = passkeyring.Sign(ctx, s, "example.com", "", o, rp, challenge, passkey.Presence{})
	if err == nil {
		t.Fatal("Sign with a key that does not parse")
	}
	if strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(der[len(der)-16:])) || bytes.Contains([]byte(err.Error()), der[len(der)-16:]) {
		t.Fatal("leak: the error holds the key")
	}
}
