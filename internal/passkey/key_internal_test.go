package passkey

import (
	"bytes"
	"testing"
)

// TestWipeZeroes checks that Wipe zeroes the buffer the scalar was in,
// not only the Key's reference to it.
func TestWipeZeroes(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	d := k.d
	if len(d) != scalarLen || bytes.Equal(d, make([]byte, scalarLen)) {
		t.Fatalf("the scalar has %d bytes, or is zero before Wipe", len(d))
	}
	k.Wipe()
	if !bytes.Equal(d, make([]byte, scalarLen)) || k.d != nil {
		t.Fatal("Wipe left the scalar in memory")
	}
}

// TestSignerIsWiped checks that the crypto/ecdsa copy a use makes is
// zeroed after it, in the form that can be reached.
func TestSignerIsWiped(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Wipe()
	priv, err := k.signer()
	if err != nil {
		t.Fatal(err)
	}
	if priv.D.Sign() == 0 {
		t.Fatal("the copy is zero before it is wiped")
	}
	wipeECDSA(priv)
	for _, w := range priv.D.Bits() {
		if w != 0 {
			t.Fatal("wipeECDSA left a word of the scalar")
		}
	}
}
