package keychain

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// memBackend is an in-memory keyring.
type memBackend struct {
	mu    sync.Mutex
	items map[string]string // service + "\x00" + user
	fail  error             // when set, every call fails with it
}

func newMem() *memBackend { return &memBackend{items: map[string]string{}} }

func (m *memBackend) Set(service, user, password string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.items[service+"\x00"+user] = password
	return nil
}

func (m *memBackend) Get(service, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return "", m.fail
	}
	v, ok := m.items[service+"\x00"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (m *memBackend) Delete(service, user string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if _, ok := m.items[service+"\x00"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(m.items, service+"\x00"+user)
	return nil
}

func (m *memBackend) DeleteAll(service string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.items {
		if strings.HasPrefix(k, service+"\x00") {
			delete(m.items, k)
		}
	}
	return nil
}

func (m *memBackend) users() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var us []string
	for k := range m.items {
		us = append(us, k)
	}
	return us
}

func newTestKeyring(m *memBackend) *Keyring {
	return New(m, func(context.Context) error { return nil }, func(_ string, n int) error { return linuxFits(n) })
}

func item(t *testing.T, service, field, account string) Item {
	t.Helper()
	it, err := NewItem(service, field, account)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func TestItemKeys(t *testing.T) {
	for _, it := range []Item{
		{Service: "github.com", Field: FieldPassword},
		{Service: "github.com", Field: FieldOTP, Account: "alice@example.com"},
		{Service: "nas.lan:8443", Field: FieldPassword, Account: "admin user with spaces"},
		{Service: "[::1]:8443", Field: FieldPassword, Account: " leading space"},
	} {
		back, ok := parseUser(it.user())
		if !ok || back != it {
			t.Errorf("%+v keys as %q, which reads back as %+v, %v", it, it.user(), back, ok)
		}
	}
	for _, u := range []string{"", "password", "password github.com ", "pin github.com", "fillgate-index-0", probeUser, "password a\x01b"} {
		if it, ok := parseUser(u); ok {
			t.Errorf("parseUser(%q) = %+v; want no item", u, it)
		}
	}
	if it, err := NewItem("github.com", "one-time-code", ""); err != nil || it.Field != FieldOTP {
		t.Errorf("NewItem(one-time-code) = %+v, %v", it, err)
	}
	for _, bad := range [][3]string{{"", "password", ""}, {"git hub", "password", ""}, {"a.test", "pin", ""}, {"a.test", "password", "a\nb"}, {"a.test", "password", strings.Repeat("a", MaxAccount+1)}, {"a.test", "password", "\xff"}} {
		if _, err := NewItem(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("NewItem(%q) accepted", bad)
		}
	}
}

func TestSetGetListForget(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	k := newTestKeyring(m)
	secret := leakscan.NewSecret(t)
	a := item(t, "github.com", FieldPassword, "alice")
	b := item(t, "github.com", FieldOTP, "alice")
	c := item(t, "github.com", FieldPassword, "bob")
	d := item(t, "gitlab.com", FieldPassword, "")
	for _, it := range []Item{c, a, b, d, a} {
		if err := k.Set(ctx, it, secret); err != nil {
			t.Fatalf("Set %v: %v", it, err)
		}
	}
	got, err := k.Get(ctx, a)
	if err != nil || string(got) != string(secret) {
		t.Fatalf("Get: value differed or %v", err)
	}
	clear(got)
	if again, _ := k.Get(ctx, a); string(again) != string(secret) {
		t.Fatal("zeroing the value Get returned changed the stored one")
	}
	if _, err := k.Get(ctx, item(t, "github.com", FieldPassword, "carol")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(missing) = %v; want ErrNotFound", err)
	}
	list, err := k.List(ctx)
	if err != nil || len(list) != 4 || list[0].Item != b || list[1].Item != a || list[2].Item != c || list[3].Item != d {
		t.Fatalf("List = %+v, %v", list, err)
	}
	// The index holds no value.
	for _, u := range m.users() {
		if strings.Contains(u, "fillgate-index") {
			v, _ := m.Get(Service, strings.TrimPrefix(u, Service+"\x00"))
			leakscan.Bytes(t, secret, "the index", []byte(v))
		}
	}

	removed, err := k.Forget(ctx, "github.com", "alice")
	if err != nil || len(removed) != 2 {
		t.Fatalf("Forget(github.com, alice) = %+v, %v", removed, err)
	}
	if list, _ := k.List(ctx); len(list) != 2 || list[0].Item != c || list[1].Item != d {
		t.Fatalf("List after Forget = %+v", list)
	}
	if removed, err := k.Forget(ctx, "github.com", ""); err != nil || len(removed) != 1 || removed[0] != c {
		t.Fatalf("Forget(github.com) = %+v, %v", removed, err)
	}
	if removed, err := k.Forget(ctx, "nothing.example", ""); err != nil || len(removed) != 0 {
		t.Fatalf("Forget(nothing) = %+v, %v", removed, err)
	}
	if ok, err := k.Delete(ctx, d); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, err := k.Delete(ctx, d); err != nil || ok {
		t.Fatalf("Delete again = %v, %v", ok, err)
	}
	if us := m.users(); len(us) != 0 {
		t.Fatalf("items left: %q", us)
	}
}

// TestUnlistedItems: an item the index misses (another writer raced, or
// a crash between the two writes) is still found by Forget and ForgetAll.
func TestUnlistedItems(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	k := newTestKeyring(m)
	it := item(t, "github.com", FieldPassword, "")
	if err := m.Set(Service, it.user(), "x"); err != nil {
		t.Fatal(err)
	}
	if removed, err := k.Forget(ctx, "github.com", ""); err != nil || len(removed) != 1 {
		t.Fatalf("Forget of an unlisted item = %+v, %v", removed, err)
	}
	_ = m.Set(Service, it.user(), "x")
	_ = m.Set("other-app", "x", "y")
	if _, err := k.ForgetAll(ctx); err != nil {
		t.Fatal(err)
	}
	if us := m.users(); len(us) != 1 || us[0] != "other-app\x00x" {
		t.Fatalf("ForgetAll left %q; want only the other app's item", us)
	}
}

func TestIndexShards(t *testing.T) {
	ctx := context.Background()
	m := newMem()
	k := newTestKeyring(m)
	var want []Item
	for i := range 300 {
		it := item(t, "github.com", FieldPassword, strings.Repeat("a", 20)+string(rune('a'+i%26))+strings.Repeat("b", i/26))
		want = append(want, it)
		if err := k.Set(ctx, it, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range m.users() {
		v, _ := m.Get(Service, strings.TrimPrefix(u, Service+"\x00"))
		if len(v) > WindowsMaxValue {
			t.Fatalf("an index shard (%s) is larger than Windows holds", u)
		}
	}
	list, err := k.List(ctx)
	if err != nil || len(list) != len(want) {
		t.Fatalf("List = %d items, %v; want %d", len(list), err, len(want))
	}
	if n, err := k.ForgetAll(ctx); err != nil || n != len(want) || len(m.users()) != 0 {
		t.Fatalf("ForgetAll = %d, %v; %d items left", n, err, len(m.users()))
	}
}

func TestUnavailableAndFailures(t *testing.T) {
	ctx := context.Background()
	locked := &Unavailable{Reason: "is locked", Fix: "unlock it"}
	k := New(newMem(), func(context.Context) error { return locked }, func(string, int) error { return nil })
	it := item(t, "github.com", FieldPassword, "")
	checks := map[string]error{}
	checks["Set"] = k.Set(ctx, it, []byte("x"))
	_, checks["Get"] = k.Get(ctx, it)
	_, checks["Delete"] = k.Delete(ctx, it)
	_, checks["List"] = k.List(ctx)
	_, checks["Forget"] = k.Forget(ctx, "github.com", "")
	_, checks["ForgetAll"] = k.ForgetAll(ctx)
	checks["Check"] = k.Check(ctx)
	checks["Available"] = k.Available(ctx)
	for name, err := range checks {
		var u *Unavailable
		if !errors.As(err, &u) || u.FixHint() != "unlock it" || !strings.Contains(err.Error(), "the OS keyring is locked: unlock it") {
			t.Errorf("%s with a locked keyring = %v", name, err)
		}
	}

	m := newMem()
	k = newTestKeyring(m)
	m.fail = errors.New("the bus went away")
	if err := k.Set(ctx, it, []byte("x")); err == nil || !strings.Contains(err.Error(), "the bus went away") {
		t.Errorf("Set on a failing keyring = %v", err)
	}
	if err := k.Set(ctx, it, nil); err == nil {
		t.Error("Set stored an empty secret")
	}
	// A keyring that does not answer: the context bounds the wait.
	hang := make(chan struct{})
	defer close(hang)
	k = New(blockingBackend{hang}, func(context.Context) error { return nil }, func(string, int) error { return nil })
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := k.Get(cctx, it); !errors.Is(err, context.Canceled) {
		t.Errorf("Get on a keyring that does not answer = %v; want the context's error", err)
	}
}

// blockingBackend never answers until its channel closes.
type blockingBackend struct{ c chan struct{} }

func (b blockingBackend) Set(string, string, string) error   { <-b.c; return nil }
func (b blockingBackend) Get(string, string) (string, error) { <-b.c; return "", keyring.ErrNotFound }
func (b blockingBackend) Delete(string, string) error        { <-b.c; return nil }
func (b blockingBackend) DeleteAll(string) error             { <-b.c; return nil }

// TestSizeLimits checks each OS's limit, here on every OS, and that the
// message never says how long the secret is.
func TestSizeLimits(t *testing.T) {
	if err := windowsFits(WindowsMaxValue); err != nil {
		t.Errorf("windowsFits(max) = %v", err)
	}
	err := windowsFits(WindowsMaxValue + 1)
	if err == nil || !strings.Contains(err.Error(), "longer than the 2560 bytes Windows Credential Manager holds") || strings.Contains(err.Error(), "2561") {
		t.Errorf("windowsFits(max+1) = %v", err)
	}

	user := Item{Service: "github.com", Field: FieldPassword, Account: "alice@example.com"}.user()
	// The largest value go-keyring's macOS command takes for this user.
	largest := 0
	for n := 2500; n < 3200; n++ {
		if macFits(user, n) == nil {
			largest = n
		}
	}
	if largest < 2900 || largest > 3050 {
		t.Errorf("the macOS limit for a short item is %d bytes; want about 3000", largest)
	}
	err = macFits(user, largest+1)
	if err == nil || !strings.Contains(err.Error(), "macOS Keychain") || strings.Contains(err.Error(), "3001") {
		t.Errorf("macFits(largest+1) = %v", err)
	}
	// A quote in the account costs room, as go-keyring's quoting does.
	room := func(account string) int {
		u := Item{Service: "a.test", Field: FieldPassword, Account: account}.user()
		n := 0
		for macFits(u, n+1) == nil {
			n++
		}
		return n
	}
	if plain, quoted := room("itsx"), room("it's"); quoted >= plain {
		t.Errorf("room for an account with a quote (%d) is not less than without (%d)", quoted, plain)
	}
	if err := linuxFits(LinuxMaxValue); err != nil {
		t.Errorf("linuxFits(max) = %v", err)
	}
	if err := linuxFits(LinuxMaxValue + 1); err == nil {
		t.Error("linuxFits(max+1) accepted")
	}
	// Set checks before it stores anything.
	m := newMem()
	k := New(m, func(context.Context) error { return nil }, func(_ string, n int) error { return windowsFits(n) })
	if err := k.Set(context.Background(), item(t, "github.com", FieldPassword, ""), make([]byte, WindowsMaxValue+1)); err == nil || len(m.users()) != 0 {
		t.Fatalf("Set of a too-long secret = %v, %d items stored", err, len(m.users()))
	}
}

func TestShellQuoteMatchesGoKeyring(t *testing.T) {
	for in, want := range map[string]string{
		"":            "''",
		"fillgate":    "fillgate",
		"a b":         "'a b'",
		"it's":        `'it'"'"'s'`,
		"a@b.c:1/x-y": "a@b.c:1/x-y",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q; want %q", in, got, want)
		}
	}
}
