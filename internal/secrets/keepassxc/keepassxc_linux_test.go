package keepassxc

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
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

// db is a KeePassXC database the test makes (tests/kit/stores).
type db struct {
	path, keyFile string
	env           []string
}

var entryXML = stores.KeePassEntry

func newDB(t *testing.T, dbPassword []byte, withKeyFile bool, entries ...string) *db {
	t.Helper()
	d := stores.NewKeePassDB(t, dbPassword, withKeyFile, entries...)
	return &db{path: d.Path, keyFile: d.KeyFile, env: d.Env}
}

func hotp(key []byte, counter uint64) string {
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], counter)
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0xf
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:])&0x7fffffff)%1_000_000)
}

// clock is the real clock whose After fires at once: keepassxc-cli makes
// the code with its own clock, and the test accepts the code of any step
// the run spans.
type clock struct{ t *testing.T }

func (clock) Now() time.Time { return time.Now() }
func (c clock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	ch <- time.Now().Add(d)
	return ch
}

type res struct {
	v   []byte
	err error
}

func TestKeePassXCPasswordAndCode(t *testing.T) {
	password, dbPassword := leakscan.NewSecret(t), leakscan.NewSecret(t)
	key := []byte("fillgate-kpxc-seed-20")
	otp := "otpauth://totp/x?secret=" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(key) + "&period=30&digits=6"
	d := newDB(t, dbPassword, false, entryXML("grhLenZhS8ORIoDso+GMOA==", "github", "alice", password, otp))
	wrap := standins.Wrap(t, "/usr/bin/keepassxc-cli")
	src := &Source{Database: d.path, Entry: "work/github", Command: wrap.Program("keepassxc-cli"), Environ: append(slices.Clone(d.env), "SECRET_JUNK=junk-env"), Clock: clock{t}}
	if got := src.Describe(); got != "from KeePassXC: work/github in "+d.path {
		t.Errorf("Describe = %q", got)
	}
	var asked []string
	req := secrets.Request{Service: "github.com", Field: secrets.FieldPassword, Ask: func(_ context.Context, what string) ([]byte, error) {
		asked = append(asked, what)
		return slices.Clone(dbPassword), nil
	}}
	fetch := func(req secrets.Request) <-chan res {
		ch := make(chan res, 1)
		go func() { v, err := src.Fetch(context.Background(), req); ch <- res{v, err} }()
		return ch
	}
	done := fetch(req)
	run := wrap.Next()
	if want := []string{"show", "--show-protected", "--attributes", "Password", "--", d.path, "work/github"}; !slices.Equal(run.Args, want) {
		t.Errorf("argv = %q; want %q", run.Args, want)
	}
	for _, n := range run.EnvNames() {
		if !slices.Contains(append(slices.Clone(EnvKeys), "LC_MESSAGES"), n) {
			t.Errorf("keepassxc-cli got %s", n)
		}
	}
	for _, s := range [][]byte{password, dbPassword, []byte(otp)} {
		leakscan.Bytes(t, s, "keepassxc-cli's argv", run.Cmdline())
		leakscan.Bytes(t, s, "keepassxc-cli's environment", run.Environ())
	}
	run.Exec()
	r := <-done
	if r.err != nil || !bytes.Equal(r.v, password) {
		t.Fatalf("the password: value differed (%v)", r.err)
	}
	if len(asked) != 1 || asked[0] != "the password of the KeePassXC database "+d.path {
		t.Errorf("asked %q", asked)
	}

	req.Field = secrets.FieldOTP
	before := time.Now()
	done = fetch(req)
	run = wrap.Next()
	if want := []string{"show", "--totp", "--", d.path, "work/github"}; !slices.Equal(run.Args, want) {
		t.Errorf("argv = %q; want %q", run.Args, want)
	}
	run.Exec()
	r = <-done
	after := time.Now()
	// The code is for the step keepassxc-cli ran in: one of the steps
	// between before and after.
	if r.err != nil || string(r.v) != hotp(key, uint64(before.Unix()/30)) && string(r.v) != hotp(key, uint64(after.Unix()/30)) {
		t.Fatalf("the code: value differed from the test's own TOTP (%v)", r.err)
	}
	if n := leakscan.Dirs(t, password, filepath.Dir(d.path)); n == 0 {
		t.Fatal("the leak scan read no files")
	}
	leakscan.Dirs(t, dbPassword, filepath.Dir(d.path))
}

func TestKeePassXCKeyFileAlone(t *testing.T) {
	password := leakscan.NewSecret(t)
	d := newDB(t, nil, true, entryXML("grhLenZhS8ORIoDso+GMOA==", "nas", "admin", password, ""))
	src := &Source{Database: d.path, Entry: "work/nas", KeyFile: d.keyFile, NoPassword: true, Environ: d.env}
	// Nobody can be asked (approval = "none"), and nobody needs to be.
	v, err := src.Fetch(context.Background(), secrets.Request{Field: secrets.FieldPassword})
	if err != nil || !bytes.Equal(v, password) {
		t.Fatalf("with the key file alone: value differed (%v)", err)
	}
}

func TestKeePassXCErrors(t *testing.T) {
	dbPassword := []byte("the-right-one")
	d := newDB(t, dbPassword, false, entryXML("grhLenZhS8ORIoDso+GMOA==", "github", "alice", []byte("pw"), ""))
	ctx := context.Background()
	ask := func(pw string) func(context.Context, string) ([]byte, error) {
		return func(context.Context, string) ([]byte, error) { return []byte(pw), nil }
	}
	src := &Source{Database: d.path, Entry: "work/github", Environ: d.env, Clock: clock{t}}
	if _, err := src.Fetch(ctx, secrets.Request{Field: secrets.FieldPassword, Ask: ask("wrong")}); !errors.Is(err, secrets.ErrLocked) || !strings.Contains(err.Error(), "did not open") {
		t.Errorf("wrong database password: %v", err)
	}
	if _, err := src.Fetch(ctx, secrets.Request{Field: secrets.FieldPassword}); !errors.Is(err, secrets.ErrLocked) || !strings.Contains(err.Error(), "nobody is asked") {
		t.Errorf("nobody to ask: %v", err)
	}
	cancelled := errors.New("the person cancelled")
	if _, err := src.Fetch(ctx, secrets.Request{Field: secrets.FieldPassword, Ask: func(context.Context, string) ([]byte, error) { return nil, cancelled }}); !errors.Is(err, cancelled) {
		t.Errorf("cancelled ask: %v", err)
	}
	missing := &Source{Database: d.path, Entry: "work/nothing", Environ: d.env}
	if _, err := missing.Fetch(ctx, secrets.Request{Field: secrets.FieldPassword, Ask: ask(string(dbPassword))}); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("missing entry: %v", err)
	}
	if _, err := src.Fetch(ctx, secrets.Request{Field: secrets.FieldOTP, Ask: ask(string(dbPassword))}); !errors.Is(err, secrets.ErrNotFound) || !strings.Contains(err.Error(), "no TOTP") {
		t.Errorf("entry without TOTP: %v", err)
	}
	nodb := &Source{Database: d.path + ".gone", Entry: "work/github", Environ: d.env}
	if _, err := nodb.Fetch(ctx, secrets.Request{Field: secrets.FieldPassword, Ask: ask(string(dbPassword))}); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("missing database: %v", err)
	}
}
