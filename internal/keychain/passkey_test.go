package keychain

import (
	"context"
	"errors"
	"testing"
)

// A passkey item is its own kind: NewItem (the password fill, `fillgate
// remember`) refuses it, Rewrite changes its value and keeps its stamp
// (so leases on it go on), and Forget removes it, listed or not.
func TestPasskeyItem(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	k := newTestKeyring(m)
	if _, err := NewItem("a.test", FieldPasskey, ""); err == nil {
		t.Fatal("NewItem accepted a passkey item")
	}
	it, err := NewPasskeyItem("a.test", "alice")
	if err != nil || it.Field != FieldPasskey {
		t.Fatalf("NewPasskeyItem = %+v, %v", it, err)
	}
	if it.String() != "agents' passkey for a.test as alice" {
		t.Errorf("String = %q", it.String())
	}
	if _, err := NewPasskeyItem("a test", ""); err == nil {
		t.Error("NewPasskeyItem accepted a service with a space")
	}

	if err := k.Rewrite(ctx, it, []byte("v1")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Rewrite of nothing kept = %v; want ErrNotFound", err)
	}
	if _, err := k.Get(ctx, it); !errors.Is(err, ErrNotFound) {
		t.Fatal("Rewrite of nothing kept stored something")
	}
	stamp, err := k.Store(ctx, it, []byte("v1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Rewrite(ctx, it, []byte("v2")); err != nil {
		t.Fatalf("Rewrite: %v", err)
	}
	if got, _ := k.Get(ctx, it); string(got) != "v2" {
		t.Fatal("Rewrite did not store the new value")
	}
	list, err := k.List(ctx)
	if err != nil || len(list) != 1 || list[0].Item != it || list[0].Stamp != stamp {
		t.Fatalf("List after Rewrite = %+v, %v; want the item with its first stamp", list, err)
	}
	if err := k.Rewrite(ctx, it, nil); err == nil {
		t.Error("Rewrite stored an empty value")
	}

	// Unlisted (a crash between the value and the index): Forget finds it.
	bare, _ := NewPasskeyItem("b.test", "")
	if err := m.Set(Service, bare.user(), "v"); err != nil {
		t.Fatal(err)
	}
	if removed, err := k.Forget(ctx, "b.test", ""); err != nil || len(removed) != 1 || removed[0] != bare {
		t.Fatalf("Forget(unlisted passkey) = %+v, %v", removed, err)
	}
	if removed, err := k.Forget(ctx, "a.test", "alice"); err != nil || len(removed) != 1 || removed[0] != it {
		t.Fatalf("Forget(a.test, alice) = %+v, %v", removed, err)
	}
}
