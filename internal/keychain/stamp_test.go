package keychain

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// stampOf is the stamp List shows for it, and whether it is listed.
func stampOf(t *testing.T, k *Keyring, it Item) (string, bool) {
	t.Helper()
	list, err := k.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.Item == it {
			return l.Stamp, true
		}
	}
	return "", false
}

// TestStampEachStore: every store of a value makes a new stamp, which
// List shows; another item's stamp stays; the index holds no value.
func TestStampEachStore(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	k := newTestKeyring(m)
	a := item(t, "github.com", FieldPassword, "alice")
	b := item(t, "github.com", FieldPassword, "")
	secret := leakscan.NewSecret(t)
	s1, err := k.Store(ctx, a, secret)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := k.Store(ctx, b, secret)
	if err != nil {
		t.Fatal(err)
	}
	if len(s1) != 24 || strings.Trim(s1, "0123456789abcdef") != "" || s1 == sb {
		t.Fatalf("stamps %q and %q; want two different 12-byte hex ids", s1, sb)
	}
	if got, ok := stampOf(t, k, a); !ok || got != s1 {
		t.Fatalf("List shows stamp %q (listed %v); Store returned %q", got, ok, s1)
	}
	// Stored again, even with the same value: a new stamp.
	s2, err := k.Store(ctx, a, secret)
	if err != nil || s2 == s1 || s2 == "" {
		t.Fatalf("the second Store = %q, %v; want a new stamp", s2, err)
	}
	if err := k.Set(ctx, a, secret); err != nil {
		t.Fatal(err)
	}
	s3, _ := stampOf(t, k, a)
	if s3 == s2 || s3 == "" {
		t.Fatalf("Set left the stamp %q", s3)
	}
	if got, _ := stampOf(t, k, b); got != sb {
		t.Errorf("storing alice's value changed the other item's stamp to %q", got)
	}
	if list, _ := k.List(ctx); len(list) != 2 {
		t.Errorf("an item stored three times is listed %d times", len(list))
	}
	for _, u := range m.users() {
		if strings.Contains(u, "fillgate-index") {
			v, _ := m.Get(Service, strings.TrimPrefix(u, Service+"\x00"))
			leakscan.Bytes(t, secret, "the index", []byte(v))
		}
	}
	// `fillgate saved --json` prints Listed items: never the stamp.
	list, _ := k.List(ctx)
	out, err := json.Marshal(list)
	if err != nil || strings.Contains(string(out), s3) || strings.Contains(string(out), "stamp") {
		t.Errorf("a listing marshals as %s, %v: the stamp is in it", out, err)
	}
}

// TestStampGoesWithItem: Delete and Forget take the stamp with the item,
// and a value stored again afterwards has a stamp of its own.
func TestStampGoesWithItem(t *testing.T) {
	ctx := context.Background()
	k := newTestKeyring(newMem())
	a := item(t, "github.com", FieldPassword, "alice")
	o := item(t, "github.com", FieldOTP, "alice")
	c := item(t, "github.com", FieldPassword, "carol")
	old, _ := k.Store(ctx, a, []byte("v"))
	if _, err := k.Store(ctx, o, []byte("v")); err != nil {
		t.Fatal(err)
	}
	keep, _ := k.Store(ctx, c, []byte("v"))
	if removed, err := k.Forget(ctx, "github.com", "alice"); err != nil || len(removed) != 2 {
		t.Fatalf("Forget = %+v, %v", removed, err)
	}
	for _, it := range []Item{a, o} {
		if s, ok := stampOf(t, k, it); ok || s != "" {
			t.Errorf("the forgotten %s is still listed, stamp %q", it, s)
		}
	}
	if s, _ := stampOf(t, k, c); s != keep {
		t.Errorf("forgetting alice changed carol's stamp")
	}
	again, _ := k.Store(ctx, a, []byte("w"))
	if again == "" || again == old {
		t.Errorf("remembered again after forget: stamp %q, the old one was %q", again, old)
	}
	if ok, err := k.Delete(ctx, c); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if _, ok := stampOf(t, k, c); ok {
		t.Error("Delete left the item listed")
	}
}

// TestOldIndexReads: an index written before fillgate kept stamps lists
// its items with no stamp; storing one of them gives it a stamp and keeps
// the others as they were.
func TestOldIndexReads(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	k := newTestKeyring(m)
	a := item(t, "github.com", FieldPassword, "alice with spaces")
	b := item(t, "gitlab.com", FieldOTP, "")
	_ = m.Set(Service, a.user(), "x")
	_ = m.Set(Service, b.user(), "y")
	_ = m.Set(Service, indexUser(0), a.user()+"\n"+b.user())
	list, err := k.List(ctx)
	if err != nil || len(list) != 2 || list[0] != (Listed{Item: b}) || list[1] != (Listed{Item: a}) {
		t.Fatalf("List of an old index = %+v, %v", list, err)
	}
	s, err := k.Store(ctx, a, []byte("z"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := stampOf(t, k, a); got != s {
		t.Errorf("stamp after Store %q, want %q", got, s)
	}
	if got, ok := stampOf(t, k, b); !ok || got != "" {
		t.Errorf("the untouched old item: stamp %q, listed %v", got, ok)
	}
	// A stamp never parses as part of the account.
	if l, ok := parseLine(a.user() + stampSep + s); !ok || l.Item != a || l.Stamp != s {
		t.Errorf("parseLine = %+v, %v", l, ok)
	}
}

// failSets is a memBackend whose Set fails for one user.
type failSets struct {
	*memBackend
	mu   sync.Mutex
	user string
}

func (f *failSets) Set(service, user, password string) error {
	f.mu.Lock()
	bad := f.user
	f.mu.Unlock()
	if user == bad {
		return errors.New("the write failed")
	}
	return f.memBackend.Set(service, user, password)
}

// TestStampChangesBeforeValue: when replacing a value fails, the stamp
// has changed all the same, so a lease on the old value ends; a new item
// whose value could not be stored is not listed.
func TestStampChangesBeforeValue(t *testing.T) {
	ctx := context.Background()
	f := &failSets{memBackend: newMem()}
	k := newTestKeyring(f.memBackend)
	k.backend = f
	a := item(t, "github.com", FieldPassword, "alice")
	old, err := k.Store(ctx, a, []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.user = a.user()
	f.mu.Unlock()
	if _, err := k.Store(ctx, a, []byte("w")); err == nil {
		t.Fatal("Store succeeded with a failing write")
	}
	if s, ok := stampOf(t, k, a); !ok || s == old || s == "" {
		t.Errorf("after a failed replace the stamp is %q (listed %v); the old one was %q", s, ok, old)
	}
	n := item(t, "new.example", FieldPassword, "")
	f.mu.Lock()
	f.user = n.user()
	f.mu.Unlock()
	if _, err := k.Store(ctx, n, []byte("v")); err == nil {
		t.Fatal("Store succeeded with a failing write")
	}
	if _, ok := stampOf(t, k, n); ok {
		t.Error("a new item whose value was never stored is listed")
	}
}
