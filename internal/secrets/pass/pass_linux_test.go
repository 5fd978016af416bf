package pass

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/fakes/standins"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/stores"
)

// store is a throw-away password store with a GnuPG key made for it
// (tests/kit/stores).
type store struct {
	*stores.Pass
	root, gnupg, dir string
	env              []string // for gpg and pass, and for the source
}

// newStore makes the store (passphrase: none, or the one given).
func newStore(t *testing.T, passphrase string) *store {
	t.Helper()
	p := stores.NewPass(t, passphrase)
	return &store{Pass: p, root: p.Root, gnupg: p.GnuPG, dir: p.Dir, env: p.Env}
}

func (s *store) cmd(stdin []byte, name string, args ...string) error {
	return s.Cmd(stdin, name, args...)
}

func (s *store) insert(t *testing.T, entry string, content []byte) { s.Insert(t, entry, content) }

// hotp is an RFC 4226 code made independently of internal/totp and
// pquerna/otp, to check them against.
func hotp(key []byte, counter uint64, digits int) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0xf
	v := binary.BigEndian.Uint32(sum[off:]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, v%mod)
}

// fixedClock is a clock that stands still (no waiting is expected).
type fixedClock time.Time

func (c fixedClock) Now() time.Time                       { return time.Time(c) }
func (c fixedClock) After(time.Duration) <-chan time.Time { panic("the code waited") }

// junk is environment the store must never get.
var junk = []string{"AWS_SECRET_ACCESS_KEY=junk-env", "FILLGATE_NOT_FOR_STORES=junk-env", "LD_PRELOAD=/nonexistent.so"}

func checkRun(t *testing.T, run *standins.Run, wantArgs []string, secrets ...[]byte) {
	t.Helper()
	if !slices.Equal(run.Args, wantArgs) {
		t.Errorf("argv = %q; want %q", run.Args, wantArgs)
	}
	allowed := append(slices.Clone(EnvKeys), "LC_MESSAGES")
	for _, n := range run.EnvNames() {
		if !slices.Contains(allowed, n) {
			t.Errorf("the store got %s in its environment", n)
		}
	}
	if bytes.Contains(run.Environ(), []byte("junk-env")) {
		t.Error("the store got variables it does not need")
	}
	for _, s := range secrets {
		leakscan.Bytes(t, s, "the store's argv", run.Cmdline())
		leakscan.Bytes(t, s, "the store's environment", run.Environ())
	}
}

func TestPassPasswordAndCode(t *testing.T) {
	s := newStore(t, "")
	password := leakscan.NewSecret(t)
	key := []byte("fillgate-test-seed-20b")
	seed := "otpauth://totp/Example:alice?secret=" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(key) + "&issuer=Example"
	s.insert(t, "work/github", []byte(string(password)+"\nlogin: alice\n"+seed+"\n"))
	s.insert(t, "work/nocode", password)

	wrap := standins.Wrap(t, "/usr/bin/pass")
	at := time.Unix(1_700_000_010, 0) // 10 s into a step
	src := &Source{Entry: "work/github", Command: wrap.Program("pass"), Environ: append(slices.Clone(s.env), junk...), Clock: fixedClock(at)}
	if d := src.Describe(); d != "from pass: work/github" {
		t.Errorf("Describe = %q", d)
	}
	ctx := context.Background()

	type res struct {
		v   []byte
		err error
	}
	fetch := func(req secrets.Request) <-chan res {
		ch := make(chan res, 1)
		go func() { v, err := src.Fetch(ctx, req); ch <- res{v, err} }()
		return ch
	}
	done := fetch(secrets.Request{Service: "github.com", Field: secrets.FieldPassword})
	run := wrap.Next()
	checkRun(t, run, []string{"show", "--", "work/github"}, password, []byte(seed))
	run.Exec()
	r := <-done
	if r.err != nil || !bytes.Equal(r.v, password) {
		t.Fatalf("the password: value differed (%v)", r.err)
	}

	done = fetch(secrets.Request{Service: "github.com", Field: secrets.FieldOTP})
	run = wrap.Next()
	checkRun(t, run, []string{"show", "--", "work/github"}, password, []byte(seed))
	run.Exec()
	r = <-done
	if want := hotp(key, uint64(at.Unix()/30), 6); r.err != nil || string(r.v) != want {
		t.Fatalf("the code: value differed from the test's own TOTP (%v)", r.err)
	}

	// The store's files hold the values encrypted only.
	if n := leakscan.Dirs(t, password, s.dir); n == 0 {
		t.Fatal("the leak scan read no files")
	}
	leakscan.Dirs(t, []byte(seed), s.dir)
}

func TestPassErrors(t *testing.T) {
	s := newStore(t, "")
	s.insert(t, "work/nocode", []byte("pw\n"))
	ctx := context.Background()
	src := func(entry string) *Source {
		return &Source{Entry: entry, Environ: s.env, Clock: fixedClock(time.Unix(1_700_000_010, 0))}
	}

	_, err := src("work/missing").Fetch(ctx, secrets.Request{Field: secrets.FieldPassword})
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "pass ls") {
		t.Errorf("missing entry: %v", err)
	}
	_, err = src("work/nocode").Fetch(ctx, secrets.Request{Field: secrets.FieldOTP})
	if !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "no otpauth:// line") {
		t.Errorf("entry without a seed: %v", err)
	}
	// store_dir from the policy wins over the environment's.
	other := &Source{Entry: "work/nocode", StoreDir: filepath.Join(s.root, "elsewhere"), Environ: s.env}
	if _, err := other.Fetch(ctx, secrets.Request{Field: secrets.FieldPassword}); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("store_dir elsewhere: %v", err)
	}
	if v, err := (&Source{Entry: "work/nocode", StoreDir: s.dir, Environ: s.env[:3]}).Fetch(ctx, secrets.Request{Field: secrets.FieldPassword}); err != nil || string(v) != "pw" {
		t.Errorf("store_dir: %q, %v", v, err)
	}
	_, err = (&Source{Entry: "x", Environ: []string{"PATH=/nonexistent"}}).Fetch(ctx, secrets.Request{})
	if !errors.Is(err, secrets.ErrMissing) || !strings.Contains(err.Error(), "apt install pass") {
		t.Errorf("pass not installed: %v", err)
	}
}

// TestPassLockedKey: a key with a passphrase gpg-agent cannot ask for (its
// pinentry cancels, as one with no display does) is a locked store, with
// the unlock step.
func TestPassLockedKey(t *testing.T) {
	s := newStore(t, "a-test-passphrase")
	s.insert(t, "work/github", []byte("pw\n"))
	pinentry := filepath.Join(s.root, "pinentry-cancel")
	if err := os.WriteFile(pinentry, []byte("#!/bin/sh\n# A pinentry that cancels, as one with no display to show on.\necho 'OK ready'\nwhile read -r cmd rest; do\n\tcase $cmd in\n\tGETPIN) echo 'ERR 83886179 Operation cancelled <Pinentry>' ;;\n\tBYE) echo OK; exit 0 ;;\n\t*) echo OK ;;\n\tesac\ndone\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.gnupg, "gpg-agent.conf"), []byte("pinentry-program "+pinentry+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The agent that made the key has the passphrase cached: restart it.
	if err := s.cmd(nil, "gpgconf", "--kill", "gpg-agent"); err != nil {
		t.Fatal(err)
	}
	_, err := (&Source{Entry: "work/github", Environ: s.env}).Fetch(context.Background(), secrets.Request{Field: secrets.FieldPassword})
	if !errors.Is(err, secrets.ErrLocked) || !strings.Contains(err.Error(), "unlock your GnuPG key") {
		t.Fatalf("locked key: %v", err)
	}
}
