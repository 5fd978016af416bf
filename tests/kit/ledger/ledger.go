// Package ledger keeps what one test set-up must scan for its secrets when
// it ends: each secret it made and everything fillgate printed. It also
// keeps those secrets out of the test's own messages.
package ledger

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// minFiles is the fewest files a final scan of a set-up's root must read:
// fewer means it read the wrong directory.
const minFiles = 20

// withheld stands in a message for what holds a secret.
const withheld = "(withheld: it holds a secret)"

// Ledger is one set-up's secrets and fillgate's output. The zero value is
// empty and ready to use; it is safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	secrets [][]byte
	outputs [][]byte
}

// Secret makes a new random secret (leakscan.NewSecret) and keeps it.
func (l *Ledger) Secret(t testing.TB) []byte {
	s := leakscan.NewSecret(t)
	l.Add(s)
	return s
}

// Code makes a new random six-digit one-time code and keeps it.
func (l *Ledger) Code(t testing.TB) []byte {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = '0' + b[i]%10
	}
	l.Add(b)
	return b
}

// Add keeps secrets made elsewhere (a key, and the forms it may leak in);
// the scan zeroes them.
func (l *Ledger) Add(secrets ...[]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.secrets = append(l.secrets, secrets...)
}

// Secrets are the secrets kept so far.
func (l *Ledger) Secrets() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.secrets)
}

// Keep keeps a copy of each of outs (what fillgate printed) for the scan.
func (l *Ledger) Keep(outs ...[]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range outs {
		l.outputs = append(l.outputs, bytes.Clone(o))
	}
}

// holds reports whether b holds one of the secrets, or a mask as long as
// one.
func (l *Ledger) holds(b []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.secrets {
		if leakscan.Contains(b, s) || leakscan.MaskedLength(b, s) {
			return true
		}
	}
	return false
}

// Withheld is b quoted for a failure message, its first 800 bytes, or a
// placeholder when it holds a secret.
func (l *Ledger) Withheld(b []byte) string {
	if l.holds(b) {
		return withheld
	}
	if len(b) > 800 {
		b = append(b[:800:800], "…"...)
	}
	return fmt.Sprintf("%q", b)
}

// Tail is the end of b (a log), its last 6000 bytes, for a failure
// message, or a placeholder when it holds a secret.
func (l *Ledger) Tail(b []byte) string {
	if l.holds(b) {
		return withheld
	}
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// Scan looks for every secret in every file under root, in each of more
// (named: the browser's output, say) and in everything kept, then zeroes
// the secrets. Run it when the set-up has stopped.
func (l *Ledger) Scan(t testing.TB, root string, more map[string][]byte) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.secrets {
		if n := leakscan.Dirs(t, s, root); n < minFiles {
			t.Errorf("the leak scan read only %d files under %s", n, root)
		}
		for name, b := range more {
			leakscan.Bytes(t, s, name, b)
		}
		for _, o := range l.outputs {
			leakscan.Bytes(t, s, "fillgate's output", o)
		}
		clear(s)
	}
}
