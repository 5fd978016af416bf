package keychain

import (
	"context"
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

// readIndex returns the items the index lists, in shard order.
func (k *Keyring) readIndex(ctx context.Context) ([]Item, error) {
	var items []Item
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
			if it, ok := parseUser(line); ok && !slices.Contains(items, it) {
				items = append(items, it)
			}
		}
	}
	return items, nil
}

// writeIndex replaces the index with items.
func (k *Keyring) writeIndex(ctx context.Context, items []Item) error {
	var shards []string
	var cur strings.Builder
	for _, it := range items {
		u := it.user()
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

// addToIndex lists it, if it is not listed yet.
func (k *Keyring) addToIndex(ctx context.Context, it Item) error {
	k.indexMu.Lock()
	defer k.indexMu.Unlock()
	items, err := k.readIndex(ctx)
	if err != nil || slices.Contains(items, it) {
		return err
	}
	return k.writeIndex(ctx, append(items, it))
}

// removeFromIndex drops the items drop matches.
func (k *Keyring) removeFromIndex(ctx context.Context, drop func(Item) bool) error {
	k.indexMu.Lock()
	defer k.indexMu.Unlock()
	items, err := k.readIndex(ctx)
	if err != nil {
		return err
	}
	kept := slices.DeleteFunc(slices.Clone(items), drop)
	if len(kept) == len(items) {
		return nil
	}
	return k.writeIndex(ctx, kept)
}
