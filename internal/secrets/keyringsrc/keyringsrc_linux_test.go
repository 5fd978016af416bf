package keyringsrc

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/secretservice"
)

func hotp(key []byte, counter uint64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0xf
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:])&0x7fffffff)%1_000_000)
}

// edgeClock starts 1 s before the end of a step; After moves it on.
type edgeClock struct{ now time.Time }

func (c *edgeClock) Now() time.Time { return c.now }
func (c *edgeClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func TestKeyringSource(t *testing.T) {
	ss := secretservice.Start(t)
	ctx := context.Background()
	k := keychain.OS()
	password := leakscan.NewSecret(t)
	key := []byte("12345678901234567890")
	seed := []byte("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ") // base32 of key
	for _, s := range []struct {
		field, account string
		v              []byte
	}{{keychain.FieldPassword, "alice", password}, {keychain.FieldOTP, "", seed}} {
		it, _ := keychain.NewItem("github.com", s.field, s.account)
		if err := k.Set(ctx, it, s.v); err != nil {
			t.Fatal(err)
		}
	}
	stepEnd := time.Unix(1_700_000_040-1, 0) // 1 s before a step ends (1_700_000_040 is a multiple of 30)
	clock := &edgeClock{now: stepEnd}
	src := &Source{Keyring: k, Clock: clock}
	if src.Describe() != "from the OS keyring" {
		t.Errorf("Describe = %q", src.Describe())
	}

	v, err := src.Fetch(ctx, secrets.Request{Service: "github.com", Field: secrets.FieldPassword, Account: "alice"})
	if err != nil || !bytes.Equal(v, password) {
		t.Fatalf("the password: value differed (%v)", err)
	}
	// A one-time code from the seed, for the next step: this one is nearly over.
	v, err = src.Fetch(ctx, secrets.Request{Service: "github.com", Field: secrets.FieldOTP, Account: "alice"})
	if err != nil || string(v) != hotp(key, uint64(stepEnd.Unix()/30)+1) {
		t.Fatalf("the code: value differed from the next step's (%v)", err)
	}
	// No item for the account, and none without one.
	_, err = src.Fetch(ctx, secrets.Request{Service: "github.com", Field: secrets.FieldPassword, Account: "bob"})
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "fillgate remember --service github.com --account bob") {
		t.Fatalf("no item: %v", err)
	}
	leakscan.Dirs(t, password, ss.Data)

	secretservice.Lock(t)
	_, err = src.Fetch(ctx, secrets.Request{Service: "github.com", Field: secrets.FieldPassword, Account: "alice"})
	if !errors.Is(err, secrets.ErrLocked) || !strings.Contains(err.Error(), "unlock") {
		t.Fatalf("locked keyring: %v", err)
	}
}
