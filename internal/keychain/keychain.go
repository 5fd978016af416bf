// Package keychain is fillgate's door to the OS keyring (Secret Service on
// Linux, Keychain on macOS, Credential Manager on Windows) through
// go-keyring. Items live under the service name "fillgate", one per
// service, field kind and account (Item).
//
// go-keyring has no way to list items, and a listing must not read
// secrets, so fillgate keeps an index of its items in the keyring itself
// (items "fillgate-index-N": service, field kind and account, never a
// value): one code path on every OS, where the alternatives are a Secret
// Service search on Linux, the `security` tool's dump on macOS and
// CredEnumerate on Windows, three listings of which two read every secret.
// The index is written after a new item, so an item is at worst unlisted
// (after a crash, or two writers at once), never listed while missing; and
// ForgetAll removes every "fillgate" item, listed or not.
//
// Next to each item the index keeps its stamp (Listed.Stamp): a random id
// made each time a value is stored, so that a lease granted for one saved
// value ends when it is forgotten or replaced. The stamp of an item
// already listed changes before its new value is stored.
//
// go-keyring takes and returns secrets as Go strings, which cannot be
// zeroed: a value passes through one such string on its way in and out.
// The []byte the caller gets from Get is its own copy, to zero.
//
// OS returns the OS keyring; tests build a Keyring over a fake store with
// New.
package keychain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/zalando/go-keyring"
)

// Service is the keyring service name fillgate's items use.
const Service = "fillgate"

// probeUser is the item Check writes and removes again.
const probeUser = "fillgate-doctor-probe"

// Field kinds of an item.
const (
	FieldPassword = "password"
	FieldOTP      = "otp" // a TOTP seed: an otpauth:// URI or base32
	// FieldPasskey is one of fillgate's own passkeys (internal/passkeyring
	// writes and reads it; NewItem refuses it, so no password fill or
	// `fillgate remember` ever reads or writes one).
	FieldPasskey = "passkey"
)

// MaxAccount is the longest account name an item may have.
const MaxAccount = 256

// ErrNotFound is returned when no item matches.
var ErrNotFound = errors.New("not in the keyring")

// Backend is the store under a Keyring: go-keyring's API.
type Backend interface {
	Set(service, user, password string) error
	Get(service, user string) (string, error)
	Delete(service, user string) error
	DeleteAll(service string) error
}

// Keyring is fillgate's view of a keyring: items keyed by service, field
// and account, an index of them, and the size and lock checks.
type Keyring struct {
	backend Backend
	usable  func(context.Context) error
	fits    func(user string, n int) error
	// indexMu serialises this Keyring's index updates (read, change,
	// write).
	indexMu sync.Mutex
}

// OS returns the OS keyring, through go-keyring.
func OS() *Keyring {
	return &Keyring{backend: goKeyring{}, usable: usable, fits: fits}
}

// New returns a Keyring over backend (which must report a missing item as
// go-keyring's keyring.ErrNotFound), with available saying whether it can
// be used now and fits checking a value of n bytes for a user. It is for
// tests; fillgate uses OS.
func New(backend Backend, available func(context.Context) error, fits func(user string, n int) error) *Keyring {
	return &Keyring{backend: backend, usable: available, fits: fits}
}

// goKeyring is go-keyring's package API as a Backend.
type goKeyring struct{}

func (goKeyring) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}
func (goKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (goKeyring) Delete(service, user string) error        { return keyring.Delete(service, user) }
func (goKeyring) DeleteAll(service string) error           { return keyring.DeleteAll(service) }

// Item names one remembered secret. Account is "" for a secret that is not
// tied to one user name.
type Item struct {
	Service string `json:"service"`
	Field   string `json:"field"`
	Account string `json:"account,omitempty"`
}

// NewItem checks and builds an Item. field may also be written
// "one-time-code" (the fill flow's word for otp); service should already
// be canonical (policy.NormalizeService).
func NewItem(service, field, account string) (Item, error) {
	if field == "one-time-code" {
		field = FieldOTP
	}
	if field == FieldPasskey {
		return Item{}, errors.New("keyring item: a passkey is not a value to fill")
	}
	it := Item{Service: service, Field: field, Account: account}
	return it, it.check()
}

// NewPasskeyItem checks and builds the Item of the passkey for service
// and account. service should already be canonical.
func NewPasskeyItem(service, account string) (Item, error) {
	it := Item{Service: service, Field: FieldPasskey, Account: account}
	return it, it.check()
}

// check refuses an item that cannot be keyed unambiguously.
func (it Item) check() error {
	switch {
	case it.Service == "" || strings.ContainsFunc(it.Service, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return fmt.Errorf("keyring item: bad service %q", it.Service)
	case it.Field != FieldPassword && it.Field != FieldOTP && it.Field != FieldPasskey:
		return fmt.Errorf("keyring item: field %q is not password, otp or passkey", it.Field)
	case len(it.Account) > MaxAccount:
		return fmt.Errorf("keyring item: the account name is longer than %d bytes", MaxAccount)
	case !utf8.ValidString(it.Account) || strings.ContainsFunc(it.Account, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return errors.New("keyring item: the account name holds a control character or is not valid UTF-8")
	}
	return nil
}

// user is the go-keyring user an item is stored under: "FIELD SERVICE" or
// "FIELD SERVICE ACCOUNT". Field and service hold no spaces, so the
// account is everything after the second space.
func (it Item) user() string {
	if it.Account == "" {
		return it.Field + " " + it.Service
	}
	return it.Field + " " + it.Service + " " + it.Account
}

// parseUser reads a go-keyring user back into an Item.
func parseUser(u string) (Item, bool) {
	parts := strings.SplitN(u, " ", 3)
	if len(parts) < 2 {
		return Item{}, false
	}
	it := Item{Field: parts[0], Service: parts[1]}
	if len(parts) == 3 {
		if parts[2] == "" {
			return Item{}, false
		}
		it.Account = parts[2]
	}
	return it, it.check() == nil
}

// String names the item for a person: "password for github.com as alice".
func (it Item) String() string {
	s := it.Field + " for " + it.Service
	if it.Field == FieldOTP {
		s = "one-time code seed for " + it.Service
	}
	if it.Field == FieldPasskey {
		s = "agents' passkey for " + it.Service
	}
	if it.Account != "" {
		s += " as " + it.Account
	}
	return s
}

// Set stores value for the item, replacing what was there, after checking
// that the keyring is usable and the value fits this OS's keyring. It is
// Store without the stamp.
func (k *Keyring) Set(ctx context.Context, it Item, value []byte) error {
	_, err := k.Store(ctx, it, value)
	return err
}

// Store stores value for the item, replacing what was there, after
// checking that the keyring is usable and the value fits this OS's
// keyring, and returns the value's new stamp (Listed.Stamp). An item
// already listed gets its new stamp before its new value, so that leases
// on the old value end even when storing the new one fails; a new item is
// listed after its value is stored (see the package doc).
func (k *Keyring) Store(ctx context.Context, it Item, value []byte) (string, error) {
	if err := it.check(); err != nil {
		return "", err
	}
	if len(value) == 0 {
		return "", errors.New("keyring: refusing to store an empty secret")
	}
	if err := k.fits(it.user(), len(value)); err != nil {
		return "", err
	}
	if err := k.usable(ctx); err != nil {
		return "", err
	}
	k.indexMu.Lock()
	defer k.indexMu.Unlock()
	items, err := k.readIndex(ctx)
	if err != nil {
		return "", err
	}
	stamp := newStamp()
	i := indexOf(items, it)
	if i >= 0 {
		items[i].Stamp = stamp
		if err := k.writeIndex(ctx, items); err != nil {
			return "", err
		}
	}
	if err := call(ctx, func() error { return k.backend.Set(Service, it.user(), string(value)) }); err != nil {
		return "", fmt.Errorf("store the %s in the keyring: %w", it, err)
	}
	if i < 0 {
		if err := k.writeIndex(ctx, append(items, Listed{Item: it, Stamp: stamp})); err != nil {
			return "", err
		}
	}
	return stamp, nil
}

// Rewrite stores value for an item already kept, keeping its stamp: the
// same saved thing with a changed state (a passkey's signature count),
// so the leases granted on it go on. It returns ErrNotFound when nothing
// is kept for the item.
func (k *Keyring) Rewrite(ctx context.Context, it Item, value []byte) error {
	if err := it.check(); err != nil {
		return err
	}
	if len(value) == 0 {
		return errors.New("keyring: refusing to store an empty secret")
	}
	if err := k.fits(it.user(), len(value)); err != nil {
		return err
	}
	if err := k.usable(ctx); err != nil {
		return err
	}
	err := call(ctx, func() error {
		if _, err := k.backend.Get(Service, it.user()); err != nil {
			return err
		}
		return k.backend.Set(Service, it.user(), string(value))
	})
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return ErrNotFound
	case err != nil:
		return fmt.Errorf("store the %s in the keyring: %w", it, err)
	}
	return nil
}

// Get returns the item's value, or ErrNotFound. The caller zeroes it.
func (k *Keyring) Get(ctx context.Context, it Item) ([]byte, error) {
	if err := it.check(); err != nil {
		return nil, err
	}
	if err := k.usable(ctx); err != nil {
		return nil, err
	}
	var v []byte
	err := call(ctx, func() error {
		s, err := k.backend.Get(Service, it.user())
		if err == nil {
			v = []byte(s)
		}
		return err
	})
	switch {
	case errors.Is(err, keyring.ErrNotFound):
		return nil, ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("read the %s from the keyring: %w", it, err)
	}
	return v, nil
}

// Delete removes the item, and its stamp. It reports whether there was
// one.
func (k *Keyring) Delete(ctx context.Context, it Item) (bool, error) {
	if err := it.check(); err != nil {
		return false, err
	}
	if err := k.usable(ctx); err != nil {
		return false, err
	}
	err := call(ctx, func() error { return k.backend.Delete(Service, it.user()) })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return false, fmt.Errorf("remove the %s from the keyring: %w", it, err)
	}
	if ierr := k.removeFromIndex(ctx, func(x Item) bool { return x == it }); ierr != nil {
		return err == nil, ierr
	}
	return err == nil, nil
}

// List returns the remembered items with their stamps (never their
// values), sorted by service, field and account.
func (k *Keyring) List(ctx context.Context) ([]Listed, error) {
	if err := k.usable(ctx); err != nil {
		return nil, err
	}
	items, err := k.readIndex(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b Listed) int { return strings.Compare(a.user(), b.user()) })
	return items, nil
}

// Forget removes the items of service, and their stamps: with account "",
// every account's; otherwise only that account's. It returns what it
// removed.
func (k *Keyring) Forget(ctx context.Context, service, account string) ([]Item, error) {
	items, err := k.List(ctx)
	if err != nil {
		return nil, err
	}
	var removed []Item
	for _, l := range items {
		if l.Service != service || account != "" && l.Account != account {
			continue
		}
		ok, err := k.Delete(ctx, l.Item)
		if err != nil {
			return removed, err
		}
		if ok {
			removed = append(removed, l.Item)
		}
	}
	// Items not in the index (see the package doc) are found by trying.
	for _, field := range []string{FieldPassword, FieldOTP, FieldPasskey} {
		it := Item{Service: service, Field: field, Account: account}
		if slices.Contains(removed, it) || it.check() != nil {
			continue
		}
		if ok, err := k.Delete(ctx, it); err != nil {
			return removed, err
		} else if ok {
			removed = append(removed, it)
		}
	}
	return removed, nil
}

// ForgetAll removes every item under the "fillgate" service, listed in the
// index or not, and the index. It returns how many listed items it
// removed.
func (k *Keyring) ForgetAll(ctx context.Context) (int, error) {
	items, err := k.List(ctx)
	if err != nil {
		return 0, err
	}
	if err := call(ctx, func() error { return k.backend.DeleteAll(Service) }); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return 0, fmt.Errorf("remove fillgate's items from the keyring: %w", err)
	}
	return len(items), nil
}

// Check proves the keyring is there, unlocked and writable by storing,
// reading back and deleting a throw-away item that holds no secret. Its
// error says why not, and (as an *Unavailable) how to mend it.
func (k *Keyring) Check(ctx context.Context) error {
	if err := k.usable(ctx); err != nil {
		return err
	}
	const marker = "probe"
	if err := call(ctx, func() error { return k.backend.Set(Service, probeUser, marker) }); err != nil {
		return fmt.Errorf("cannot write to the keyring: %w", err)
	}
	var got string
	if err := call(ctx, func() (err error) { got, err = k.backend.Get(Service, probeUser); return err }); err != nil {
		return fmt.Errorf("cannot read from the keyring: %w", err)
	}
	if err := call(ctx, func() error { return k.backend.Delete(Service, probeUser) }); err != nil {
		return fmt.Errorf("cannot delete from the keyring: %w", err)
	}
	if got != marker {
		return errors.New("the keyring returned a different item than was stored")
	}
	return nil
}

// Unavailable is why the keyring cannot be used now, and what mends it.
type Unavailable struct {
	Reason string // "is locked", "is not running", …
	Fix    string // the step that mends it
}

// Error says both.
func (u *Unavailable) Error() string {
	return "the OS keyring " + u.Reason + ": " + u.Fix
}

// FixHint is the step that mends it, for `fillgate doctor`.
func (u *Unavailable) FixHint() string { return u.Fix }

// Available reports whether the keyring can be used now without asking
// anyone: nil, or an *Unavailable saying why not. It reads no secret.
func (k *Keyring) Available(ctx context.Context) error {
	return k.usable(ctx)
}

// call runs a go-keyring call, giving up when ctx ends. go-keyring's calls
// take no context; one that outlives ctx finishes in the background and
// its result is dropped.
func call(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("the keyring did not answer: %w", context.Cause(ctx))
	}
}
