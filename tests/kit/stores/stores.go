//go:build unix

// Package stores makes throw-away password stores for tests: a pass store
// with a GnuPG key made for it, and a KeePassXC database. No secret ever
// goes through a file or a command line on the way in: entries reach pass
// and keepassxc-cli on their standard input or a pipe.
package stores

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Pass is a throw-away password store with a GnuPG key made for it.
type Pass struct {
	Root, GnuPG, Dir string
	Env              []string // for gpg and pass, and for the source
}

// NewPass makes a GnuPG home with a new key (passphrase: none, or the one
// given), and a password store encrypted to it. gpg-agent, which gpg
// starts, is stopped when the test ends.
func NewPass(t testing.TB, passphrase string) *Pass {
	t.Helper()
	for _, p := range []string{"gpg", "gpgconf", "pass"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s not found: run tests/setup (apt-get install -y pass gnupg)", p)
		}
	}
	s := &Pass{Root: t.TempDir()}
	s.GnuPG, s.Dir = filepath.Join(s.Root, "g"), filepath.Join(s.Root, "store")
	if err := os.Mkdir(s.GnuPG, 0o700); err != nil {
		t.Fatal(err)
	}
	// No XDG_RUNTIME_DIR: gpg-agent's sockets go in GNUPGHOME, which this
	// test owns.
	s.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + s.Root, "GNUPGHOME=" + s.GnuPG, "PASSWORD_STORE_DIR=" + s.Dir}
	t.Cleanup(func() { _ = s.Cmd(nil, "gpgconf", "--kill", "all") })
	if err := s.Cmd(nil, "gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", passphrase,
		"--quick-gen-key", "fillgate test <test@fillgate.invalid>", "future-default", "default", "never"); err != nil { // ed25519/cv25519: quick to make
		t.Fatalf("make a GnuPG key: %v", err)
	}
	var out bytes.Buffer
	cmd := exec.Command("gpg", "--list-keys", "--with-colons")
	cmd.Env, cmd.Stdout = s.Env, &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	var fpr string
	for _, l := range strings.Split(out.String(), "\n") {
		if f, ok := strings.CutPrefix(l, "fpr:::::::::"); ok && fpr == "" {
			fpr = strings.TrimSuffix(f, ":")
		}
	}
	if err := s.Cmd(nil, "pass", "init", fpr); err != nil {
		t.Fatalf("pass init: %v", err)
	}
	return s
}

// Cmd runs a setup command with stdin in the store's environment.
func (s *Pass) Cmd(stdin []byte, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Env = s.Env
	cmd.Stdin = bytes.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", name, err, out)
	}
	return nil
}

// Insert adds an entry, its content given on stdin (never in argv).
func (s *Pass) Insert(t testing.TB, entry string, content []byte) {
	t.Helper()
	if err := s.Cmd(content, "pass", "insert", "--multiline", entry); err != nil {
		t.Fatal(err)
	}
}

// KeePassDB is a KeePassXC database a test made.
type KeePassDB struct {
	Path, KeyFile string
	Env           []string
}

// KeePassEntry is one entry of a KeePass 2 XML export, for NewKeePassDB.
func KeePassEntry(uuid, title, user string, password []byte, otp string) string {
	x := `<Entry><UUID>` + uuid + `</UUID>` +
		`<String><Key>Title</Key><Value>` + title + `</Value></String>` +
		`<String><Key>UserName</Key><Value>` + user + `</Value></String>` +
		`<String><Key>Password</Key><Value ProtectInMemory="True">` + string(password) + `</Value></String>`
	if otp != "" {
		x += `<String><Key>otp</Key><Value ProtectInMemory="True">` + strings.ReplaceAll(otp, "&", "&amp;") + `</Value></String>`
	}
	return x + `</Entry>`
}

// NewKeePassDB makes a database with keepassxc-cli import, holding the
// entries in a group "work", opened by dbPassword (nil: none) and, when
// withKeyFile, a key file. The XML, which holds the secrets, goes to
// keepassxc-cli through a pipe, never a file.
func NewKeePassDB(t testing.TB, dbPassword []byte, withKeyFile bool, entries ...string) *KeePassDB {
	t.Helper()
	if _, err := exec.LookPath("keepassxc-cli"); err != nil {
		t.Fatal("keepassxc-cli not found: run tests/setup (apt-get install -y keepassxc)")
	}
	root := t.TempDir()
	d := &KeePassDB{Path: filepath.Join(root, "test.kdbx"), Env: []string{"PATH=/usr/bin:/bin", "HOME=" + root, "XDG_CONFIG_HOME=" + filepath.Join(root, "config")}}
	xml := `<?xml version="1.0" encoding="UTF-8"?><KeePassFile><Meta><Generator>fillgate-test</Generator></Meta><Root>` +
		`<Group><UUID>5HF2BPs/TNes5abojk9g5Q==</UUID><Name>Root</Name>` +
		`<Group><UUID>qlvKjYKiSvaw9ykkGcXK+w==</UUID><Name>work</Name>` + strings.Join(entries, "") + `</Group></Group></Root></KeePassFile>`
	args := []string{"import"}
	var stdin []byte
	if dbPassword != nil {
		args = append(args, "--set-password")
		stdin = []byte(string(dbPassword) + "\n" + string(dbPassword) + "\n")
	}
	if withKeyFile {
		d.KeyFile = filepath.Join(root, "test.keyx")
		args = append(args, "--set-key-file", d.KeyFile)
	}
	args = append(args, "/dev/fd/3", d.Path)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("keepassxc-cli", args...)
	cmd.Env, cmd.Stdin, cmd.ExtraFiles = d.Env, bytes.NewReader(stdin), []*os.File{r}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	_, _ = w.Write([]byte(xml))
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("keepassxc-cli import: %v: %s", err, out.String())
	}
	return d
}
