package remember

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/fillgate/fillgate/internal/keychain"
)

// TestReadSecret: the whole input, less one trailing newline (\n or
// \r\n), up to max bytes; more is refused as the person's fault. Failure
// messages name the case, never the bytes read.
func TestReadSecret(t *testing.T) {
	const max = 8
	for _, c := range []struct {
		name, in, want string
		tooLong        bool
	}{
		{name: "no newline", in: "abc", want: "abc"},
		{name: "newline", in: "abc\n", want: "abc"},
		{name: "CRLF", in: "abc\r\n", want: "abc"},
		{name: "only one newline dropped", in: "abc\n\n", want: "abc\n"},
		{name: "a lone CR stays", in: "abc\r", want: "abc\r"},
		{name: "empty", in: "", want: ""},
		{name: "exactly max", in: "12345678", want: "12345678"},
		{name: "max and CRLF", in: "12345678\r\n", want: "12345678"},
		{name: "max+1", in: "123456789", tooLong: true},
		{name: "max+1 and newline", in: "123456789\n", tooLong: true},
		{name: "much more", in: strings.Repeat("x", 100), tooLong: true},
	} {
		got, err := readSecret(strings.NewReader(c.in), max)
		var bad *InputError
		switch {
		case c.tooLong && !errors.As(err, &bad):
			t.Errorf("%s: error %v; want an InputError saying it is too long", c.name, err)
		case c.tooLong && !strings.Contains(err.Error(), "longer than 8 bytes"):
			t.Errorf("%s: error %q; want it to say longer than 8 bytes", c.name, err)
		case c.tooLong && got != nil:
			t.Errorf("%s: got bytes back with the error", c.name)
		case !c.tooLong && err != nil:
			t.Errorf("%s: error %v; want none", c.name, err)
		case !c.tooLong && string(got) != c.want:
			t.Errorf("%s: the bytes read differ from the ones expected", c.name)
		}
	}
}

// failingReader fails after its first bytes.
type failingReader struct{ sent bool }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.sent {
		return 0, errors.New("pipe broke")
	}
	f.sent = true
	return copy(p, "abc"), nil
}

func TestReadSecretReadError(t *testing.T) {
	got, err := readSecret(&failingReader{}, 8)
	var bad *InputError
	if err == nil || errors.As(err, &bad) || !strings.Contains(err.Error(), "read the secret from standard input: pipe broke") || got != nil {
		t.Errorf("error %v (bytes back: %v); want a read error that is not an InputError", err, got != nil)
	}
}

// memBackend is a keyring in memory.
type memBackend struct {
	mu sync.Mutex
	m  map[string]string
}

func (b *memBackend) Set(service, user, password string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.m[service+"\x00"+user] = password
	return nil
}

func (b *memBackend) Get(service, user string) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[service+"\x00"+user]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (b *memBackend) Delete(service, user string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.m[service+"\x00"+user]; !ok {
		return keyring.ErrNotFound
	}
	delete(b.m, service+"\x00"+user)
	return nil
}

func (b *memBackend) DeleteAll(service string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.m {
		if strings.HasPrefix(k, service+"\x00") {
			delete(b.m, k)
		}
	}
	return nil
}

// countingReader counts its reads.
type countingReader struct {
	r     io.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return c.r.Read(p)
}

// TestStore: the keyring is checked before the secret is read, a TOTP
// seed must parse, the input must be a terminal unless piped, and what is
// stored is the secret read.
func TestStore(t *testing.T) {
	ctx := context.Background()
	fits := func(string, int) error { return nil }
	newKeyring := func(available error) *keychain.Keyring {
		return keychain.New(&memBackend{m: map[string]string{}}, func(context.Context) error { return available }, fits)
	}
	item := func(field string) keychain.Item {
		it, err := keychain.NewItem("github.com", field, "alice")
		if err != nil {
			t.Fatalf("NewItem(github.com, %s, alice): %v", field, err)
		}
		return it
	}

	t.Run("keyring not usable", func(t *testing.T) {
		locked := errors.New("the OS keyring is locked")
		in := &countingReader{r: strings.NewReader("pw\n")}
		err := Store(ctx, newKeyring(locked), item("password"), Input{Stdin: in, Piped: true})
		if !errors.Is(err, locked) {
			t.Errorf("error %v; want the keyring's %v", err, locked)
		}
		if in.reads != 0 {
			t.Errorf("the secret was read %d times before the keyring was found unusable; want 0", in.reads)
		}
	})

	t.Run("not a terminal", func(t *testing.T) {
		var term bytes.Buffer
		err := Store(ctx, newKeyring(nil), item("password"), Input{Stdin: strings.NewReader("pw"), Terminal: &term, Prompt: "Password: "})
		var bad *InputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "standard input is not a terminal") {
			t.Errorf("error %v; want an InputError saying stdin is not a terminal", err)
		}
		if term.Len() != 0 {
			t.Errorf("the terminal got %q; want nothing, with no terminal to ask at", term.String())
		}
	})

	t.Run("nothing piped", func(t *testing.T) {
		err := Store(ctx, newKeyring(nil), item("password"), Input{Stdin: strings.NewReader("\n"), Piped: true})
		var bad *InputError
		if !errors.As(err, &bad) || err.Error() != "standard input held no secret" {
			t.Errorf("error %v; want the InputError %q", err, "standard input held no secret")
		}
	})

	t.Run("bad seed", func(t *testing.T) {
		k := newKeyring(nil)
		err := Store(ctx, k, item("otp"), Input{Stdin: strings.NewReader("not a seed!\n"), Piped: true})
		var bad *InputError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "not a TOTP seed") || strings.Contains(err.Error(), "seed!") {
			t.Errorf("error %v; want an InputError saying it is not a TOTP seed, without quoting it", err)
		}
		if _, err := k.Get(ctx, item("otp")); !errors.Is(err, keychain.ErrNotFound) {
			t.Errorf("Get after a refused seed: %v; want keychain.ErrNotFound", err)
		}
	})

	t.Run("stored", func(t *testing.T) {
		k := newKeyring(nil)
		for field, in := range map[string]string{
			"password": "correct horse\r\n",
			"otp":      "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\n",
		} {
			if err := Store(ctx, k, item(field), Input{Stdin: strings.NewReader(in), Piped: true}); err != nil {
				t.Fatalf("Store of the %s: %v", field, err)
			}
			got, err := k.Get(ctx, item(field))
			if err != nil {
				t.Fatalf("Get of the %s: %v", field, err)
			}
			if string(got) != strings.TrimRight(in, "\r\n") {
				t.Errorf("the %s stored differs from the one read", field)
			}
		}
	})
}
