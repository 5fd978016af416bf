//go:build linux

package passkey

import (
	"strconv"

	"github.com/zalando/go-keyring"

	"github.com/fillgate/fillgate/internal/keychain"
)

// keyringIndex is shard n of fillgate's index in the keyring.
func keyringIndex(n int) ([]byte, error) {
	v, err := keyring.Get(keychain.Service, "fillgate-index-"+strconv.Itoa(n))
	return []byte(v), err
}
