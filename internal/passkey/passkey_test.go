package passkey_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/fillgate/fillgate/internal/passkey"
)

// rpFor returns the relying party id that a page of origin claims with
// requested.
func rpFor(t *testing.T, origin, requested string) passkey.RPID {
	t.Helper()
	o, err := passkey.ParseOrigin(origin)
	if err != nil {
		t.Fatal(err)
	}
	rp, err := passkey.CheckRPID(o, requested)
	if err != nil {
		t.Fatal(err)
	}
	return rp
}

// newKey makes a key the test wipes when it ends.
func newKey(t *testing.T) *passkey.Key {
	t.Helper()
	k, err := passkey.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Wipe)
	return k
}

// publicKey is k's public key as crypto/ecdsa reads it from the SPKI.
func publicKey(t *testing.T, k *passkey.Key) *ecdsa.PublicKey {
	t.Helper()
	spki, err := k.PublicKeySPKI()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.ParsePKIXPublicKey(spki)
	if err != nil {
		t.Fatalf("the SPKI does not parse: %v", err)
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		t.Fatalf("the SPKI holds a %T, not a P-256 key", pub)
	}
	return ec
}

func TestNewCredentialID(t *testing.T) {
	a, err := passkey.NewCredentialID()
	if err != nil {
		t.Fatal(err)
	}
	b, err := passkey.NewCredentialID()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 16 || len(a) > 32 {
		t.Errorf("a credential id has %d bytes, want 16 to 32", len(a))
	}
	if bytes.Equal(a, b) {
		t.Error("two credential ids are equal")
	}
}

func TestCOSEKey(t *testing.T) {
	k := newKey(t)
	pub := publicKey(t, k)
	cose, err := k.PublicKeyCOSE()
	if err != nil {
		t.Fatal(err)
	}
	// CTAP2 canonical: a map of 5, keys 1, 3, -1, -2, -3 in that order,
	// x and y as 32-byte strings.
	want := "a5" + "0102" + "0326" + "2001" + "215820" + hex.EncodeToString(pub.X.FillBytes(make([]byte, 32))) +
		"225820" + hex.EncodeToString(pub.Y.FillBytes(make([]byte, 32)))
	if got := hex.EncodeToString(cose); got != want {
		t.Fatalf("COSE_Key =\n%s, want\n%s", got, want)
	}
}

func TestAttest(t *testing.T) {
	rp := rpFor(t, "https://login.example.com", "example.com")
	for _, tc := range []struct {
		p     passkey.Presence
		flags byte
	}{
		{passkey.Presence{UserPresent: true, UserVerified: true}, 0x45},
		{passkey.Presence{UserPresent: true}, 0x41},
		{passkey.Presence{UserVerified: true}, 0x44},
		{passkey.Presence{}, 0x40},
	} {
		k := newKey(t)
		id, err := passkey.NewCredentialID()
		if err != nil {
			t.Fatal(err)
		}
		att, err := passkey.Attest(k, rp, id, tc.p)
		if err != nil {
			t.Fatal(err)
		}
		var obj struct {
			Fmt      string         `cbor:"fmt"`
			AttStmt  map[string]any `cbor:"attStmt"`
			AuthData []byte         `cbor:"authData"`
		}
		if err := cbor.Unmarshal(att.AttestationObject, &obj); err != nil {
			t.Fatalf("the attestation object does not decode: %v", err)
		}
		if obj.Fmt != "none" || obj.AttStmt == nil || len(obj.AttStmt) != 0 || !bytes.Equal(obj.AuthData, att.AuthData) {
			t.Fatalf("attestation object = fmt %q, attStmt %v, authData equal %v; want none, {}, equal", obj.Fmt, obj.AttStmt, bytes.Equal(obj.AuthData, att.AuthData))
		}
		// CTAP2 canonical key order: fmt, attStmt, authData.
		if !bytes.HasPrefix(att.AttestationObject, []byte("\xa3\x63fmt\x64none\x67attStmt\xa0\x68authData")) {
			t.Errorf("the attestation object is not in CTAP2 canonical form: % x", att.AttestationObject[:24])
		}

		ad := att.AuthData
		h := sha256.Sum256([]byte("example.com"))
		cose, _ := k.PublicKeyCOSE()
		switch {
		case len(ad) != 37+16+2+len(id)+len(cose):
			t.Fatalf("authData has %d bytes, want %d", len(ad), 37+16+2+len(id)+len(cose))
		case !bytes.Equal(ad[:32], h[:]):
			t.Error("rpIdHash is not SHA-256 of the relying party id")
		case ad[32] != tc.flags:
			t.Errorf("flags = %#x, want %#x for %+v", ad[32], tc.flags, tc.p)
		case binary.BigEndian.Uint32(ad[33:37]) != 0:
			t.Errorf("signCount = %d, want 0", binary.BigEndian.Uint32(ad[33:37]))
		case !bytes.Equal(ad[37:53], make([]byte, 16)):
			t.Errorf("AAGUID = % x, want all zero", ad[37:53])
		case binary.BigEndian.Uint16(ad[53:55]) != uint16(len(id)) || !bytes.Equal(ad[55:55+len(id)], id):
			t.Error("the credential id is not in the attested credential data")
		case !bytes.Equal(ad[55+len(id):], cose):
			t.Error("the credential public key is not the key's COSE_Key")
		}
	}
}

func TestAttestRefuses(t *testing.T) {
	rp := rpFor(t, "https://example.com", "")
	k := newKey(t)
	p := passkey.Presence{UserPresent: true}
	for name, call := range map[string]func() error{
		"no rp":        func() error { _, err := passkey.Attest(k, passkey.RPID{}, []byte("id"), p); return err },
		"no id":        func() error { _, err := passkey.Attest(k, rp, nil, p); return err },
		"long id":      func() error { _, err := passkey.Attest(k, rp, make([]byte, 1024), p); return err },
		"nil key":      func() error { _, err := passkey.Attest(nil, rp, []byte("id"), p); return err },
		"wiped key":    func() error { w := newKey(t); w.Wipe(); _, err := passkey.Attest(w, rp, []byte("id"), p); return err },
		"count 0":      func() error { _, err := passkey.Assert(k, rp, p, 0, []byte("{}")); return err },
		"no data":      func() error { _, err := passkey.Assert(k, rp, p, 1, nil); return err },
		"assert no rp": func() error { _, err := passkey.Assert(k, passkey.RPID{}, p, 1, []byte("{}")); return err },
		"assert wiped": func() error {
			w := newKey(t)
			w.Wipe()
			_, err := passkey.Assert(w, rp, p, 1, []byte("{}"))
			return err
		},
	} {
		if err := call(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestAssert(t *testing.T) {
	rp := rpFor(t, "https://login.example.com", "")
	o, _ := passkey.ParseOrigin("https://login.example.com")
	k := newKey(t)
	pub := publicKey(t, k)
	cdj, err := passkey.ClientData(passkey.Get, []byte("a challenge of 16+ bytes"), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p     passkey.Presence
		count uint32
		flags byte
	}{
		{passkey.Presence{UserPresent: true, UserVerified: true}, 1, 0x05},
		{passkey.Presence{UserPresent: true}, 2, 0x01},
		{passkey.Presence{}, 0x01020304, 0x00},
		{passkey.Presence{UserPresent: true}, 1<<32 - 1, 0x01},
	} {
		a, err := passkey.Assert(k, rp, tc.p, tc.count, cdj)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256([]byte("login.example.com"))
		if len(a.AuthData) != 37 || !bytes.Equal(a.AuthData[:32], h[:]) || a.AuthData[32] != tc.flags ||
			binary.BigEndian.Uint32(a.AuthData[33:]) != tc.count {
			t.Fatalf("authData = % x; want rpIdHash, flags %#x, count %d", a.AuthData, tc.flags, tc.count)
		}
		cdh := sha256.Sum256(cdj)
		digest := sha256.Sum256(append(bytes.Clone(a.AuthData), cdh[:]...))
		if !ecdsa.VerifyASN1(pub, digest[:], a.Signature) {
			t.Fatal("the signature does not verify over authData || SHA-256(clientDataJSON)")
		}
		if a.Signature[0] != 0x30 {
			t.Fatalf("the signature is not DER (starts %#x)", a.Signature[0])
		}
		other := sha256.Sum256(append(bytes.Clone(a.AuthData), make([]byte, 32)...))
		if ecdsa.VerifyASN1(pub, other[:], a.Signature) {
			t.Fatal("the signature verifies over other client data")
		}
	}
}

func TestClientData(t *testing.T) {
	o, _ := passkey.ParseOrigin("https://login.example.com:8443")
	challenge := []byte{0xfb, 0xff, 0x00, 0x3e, 0x3f}
	for _, tc := range []struct {
		c    passkey.Ceremony
		want string
	}{
		{passkey.Create, `{"type":"webauthn.create","challenge":"-_8APj8","origin":"https://login.example.com:8443","crossOrigin":false}`},
		{passkey.Get, `{"type":"webauthn.get","challenge":"-_8APj8","origin":"https://login.example.com:8443","crossOrigin":false}`},
	} {
		got, err := passkey.ClientData(tc.c, challenge, o)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("ClientData(%s) =\n%s, want\n%s", tc.c, got, tc.want)
		}
	}
	for name, call := range map[string]func() ([]byte, error){
		"no challenge": func() ([]byte, error) { return passkey.ClientData(passkey.Get, nil, o) },
		"no origin":    func() ([]byte, error) { return passkey.ClientData(passkey.Get, challenge, passkey.Origin{}) },
		"other type":   func() ([]byte, error) { return passkey.ClientData("payment.get", challenge, o) },
		"no type":      func() ([]byte, error) { return passkey.ClientData("", challenge, o) },
	} {
		if _, err := call(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestPKCS8(t *testing.T) {
	k := newKey(t)
	der, err := k.PKCS8()
	if err != nil {
		t.Fatal(err)
	}
	defer clear(der)
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		t.Fatalf("the key is not PKCS#8: %v", err)
	}
	if ec, ok := parsed.(*ecdsa.PrivateKey); !ok || !ec.PublicKey.Equal(publicKey(t, k)) {
		t.Fatal("the PKCS#8 key is not the key")
	}
	back, err := passkey.ParsePKCS8(der)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Wipe()
	rp := rpFor(t, "https://example.com", "")
	a, err := passkey.Assert(back, rp, passkey.Presence{UserPresent: true}, 1, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	cdh := sha256.Sum256([]byte("{}"))
	digest := sha256.Sum256(append(a.AuthData, cdh[:]...))
	if !ecdsa.VerifyASN1(publicKey(t, k), digest[:], a.Signature) {
		t.Fatal("the key read back from PKCS#8 signs for another public key")
	}

	k.Wipe()
	k.Wipe()
	if _, err := k.PKCS8(); err == nil {
		t.Fatal("a wiped key still encodes")
	}
	var none *passkey.Key
	none.Wipe()
}

func TestParsePKCS8Refuses(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	k := newKey(t)
	good, err := k.PKCS8()
	if err != nil {
		t.Fatal(err)
	}
	defer clear(good)
	for name, der := range map[string][]byte{
		"P-384":     mustPKCS8(t, p384),
		"Ed25519":   mustPKCS8(t, edKey),
		"truncated": good[:len(good)-1],
		"garbage":   []byte("not a key at all"),
		"empty":     nil,
	} {
		_, err := passkey.ParsePKCS8(der)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		// The refusal is one of two fixed sentences: nothing of the bytes.
		if msg := err.Error(); msg != "passkey: the stored key is not a PKCS#8 private key" && msg != "passkey: the stored key is not a P-256 key" {
			t.Errorf("%s: the refusal says %q", name, msg)
		}
	}
}

func mustPKCS8(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestErrorsHoldNoKey checks that no error of a key's use holds its
// scalar or its PKCS#8 form, in any encoding leakscan would look for.
func TestErrorsHoldNoKey(t *testing.T) {
	k := newKey(t)
	der, err := k.PKCS8()
	if err != nil {
		t.Fatal(err)
	}
	defer clear(der)
	parsed, _ := x509.ParsePKCS8PrivateKey(der)
	d, _ := parsed.(*ecdsa.PrivateKey).Bytes()
	defer clear(d)
	rp := rpFor(t, "https://example.com", "")
	var msgs []string
	for _, call := range []func() error{
		func() error { _, err := passkey.Assert(k, rp, passkey.Presence{}, 0, []byte("{}")); return err },
		func() error { _, err := passkey.ParsePKCS8(der[:len(der)-3]); return err },
		func() error { bad := bytes.Clone(der); bad[0] = 0x31; _, err := passkey.ParsePKCS8(bad); return err },
		func() error {
			k.Wipe()
			_, err := passkey.Assert(k, rp, passkey.Presence{}, 1, []byte("{}"))
			return err
		},
	} {
		if err := call(); err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	all := strings.Join(msgs, "\n")
	for _, secret := range [][]byte{d, der[len(der)-40:]} {
		for _, enc := range []string{string(secret), hex.EncodeToString(secret), strings.ToUpper(hex.EncodeToString(secret))} {
			if strings.Contains(all, enc) {
				t.Fatal("an error holds the private key")
			}
		}
	}
	if len(msgs) != 4 {
		t.Fatalf("%d of 4 calls failed", len(msgs))
	}
}
