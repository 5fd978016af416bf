package keychain

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zalando/go-keyring"
)

// indexUser is the go-keyring user of index shard n. It has no space, so
// it never parses as an item.
func indexUser(n int) string { return "fillgate-index-" + strconv.Itoa(n) }

// maxShard is the most bytes one index shard holds: well inside every OS's
// limit for a value (Windows: 2560 bytes).
const maxShard = 2000

// maxShards bounds the index: 64 shards of 2000 bytes.
const maxShards = 64

// Listed is an item as fillgate's index lists it: its name and the stamp
// of the value stored for it now.
type Listed struct {
	Item
	// Stamp names the value stored now: a fresh random id each time Store
	// (or Set) stores one, never derived from the value; "" for an item
	// listed before fillgate kept stamps. A lease granted for a saved
	// value holds its stamp, and stops covering once the value is
	// forgotten (no stamp) or replaced (another stamp). Never printed.
	Stamp string `json:"-"`
}

// stampSep separates an index line's item from its stamp. It is a control
// character, which no service or account holds (Item.check).
const stampSep = "\t"

// line is the index line of l: "FIELD SERVICE[ ACCOUNT][\tSTAMP]".
func (l Listed) line() string {
	if l.Stamp == "" {
		return l.user()
	}
	return l.user() + stampSep + l.Stamp
}

// parseLine reads an index line back. A line with no stamp (written
// before fillgate kept stamps) has Stamp "".
func parseLine(s string) (Listed, bool) {
	u, stamp, _ := strings.Cut(s, stampSep)
	it, ok := parseUser(u)
	return Listed{Item: it, Stamp: stamp}, ok
}

// newStamp returns a fresh random stamp: 12 bytes, in hex.
func newStamp() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// readIndex returns what the index lists, in shard order; an item listed
// twice counts once, with its first stamp.
func (k *Keyring) readIndex(ctx context.Context) ([]Listed, error) {
	var items []Listed
	for n := 0; n < maxShards; n++ {
		var s string
		err := call(ctx, func() (err error) { s, err = k.backend.Get(Service, indexUser(n)); return err })
		if errors.Is(err, keyring.ErrNotFound) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read fillgate's list of remembered secrets from the keyring: %w", err)
		}
		for _, line := range strings.Split(s, "\n") {
			if l, ok := parseLine(line); ok && indexOf(items, l.Item) < 0 {
				items = append(items, l)
			}
		}
	}
	return items, nil
}

// indexOf is the position of it in items (compared by name, never by
// stamp), or -1.
func indexOf(items []Listed, it Item) int {
	return slices.IndexFunc(items, func(l Listed) bool { return l.Item == it })
}

// writeIndex replaces the index with items.
func (k *Keyring) writeIndex(ctx context.Context, items []Listed) error {
	var shards []string
	var cur strings.Builder
	for _, it := range items {
		u := it.line()
		if cur.Len() > 0 && cur.Len()+1+len(u) > maxShard {
			shards = append(shards, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(u)
	}
	if cur.Len() > 0 {
		shards = append(shards, cur.String())
	}
	if len(shards) > maxShards {
		return fmt.Errorf("fillgate's list of remembered secrets is full (%d shards); forget some", maxShards)
	}
	for n, s := range shards {
		if err := call(ctx, func() error { return k.backend.Set(Service, indexUser(n), s) }); err != nil {
			return fmt.Errorf("write fillgate's list of remembered secrets to the keyring: %w", err)
		}
	}
	for n := len(shards); n < maxShards; n++ {
		err := call(ctx, func() error { return k.backend.Delete(Service, indexUser(n)) })
		if errors.Is(err, keyring.ErrNotFound) {
			break
		}
		if err != nil {
			return fmt.Errorf("write fillgate's list of remembered secrets to the keyring: %w", err)
		}
	}
	return nil
}

// removeFromIndex drops the items drop matches, with their stamps.
func (k *Keyring) removeFromIndex(ctx context.Context, drop func(Item) bool) error {
	k.indexMu.Lock()
	defer k.indexMu.Unlock()
	items, err := k.readIndex(ctx)
	if err != nil {
		return err
	}
	kept := slices.DeleteFunc(slices.Clone(items), func(l Listed) bool { return drop(l.Item) })
	if len(kept) == len(items) {
		return nil
	}
	return k.writeIndex(ctx, kept)
}
