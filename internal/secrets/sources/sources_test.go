package sources

import (
	"testing"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/secrets/bitwarden"
	"github.com/fillgate/fillgate/internal/secrets/keepassxc"
	"github.com/fillgate/fillgate/internal/secrets/keyringsrc"
	"github.com/fillgate/fillgate/internal/secrets/onepassword"
	"github.com/fillgate/fillgate/internal/secrets/pass"
	"github.com/fillgate/fillgate/internal/secrets/rbw"
)

// TestFor builds a source for every store and checks each gets the
// policy's parameters.
func TestFor(t *testing.T) {
	o := Options{Environ: []string{"PATH=/usr/bin"}, Keyring: keychain.OS()}
	cases := []struct {
		src      *policy.Source
		describe string
		check    func(any) bool
	}{
		{nil, "from the OS keyring", func(s any) bool { _, ok := s.(*keyringsrc.Source); return ok }},
		{&policy.Source{Store: policy.StoreKeyring}, "from the OS keyring", func(s any) bool { _, ok := s.(*keyringsrc.Source); return ok }},
		{&policy.Source{Store: policy.StorePass, Entry: "work/github", StoreDir: "/s", Command: "/usr/bin/pass"}, "from pass: work/github",
			func(s any) bool {
				p, ok := s.(*pass.Source)
				return ok && p.StoreDir == "/s" && p.Command == "/usr/bin/pass" && len(p.Environ) == 1
			}},
		{&policy.Source{Store: policy.StoreKeePassXC, Database: "/p.kdbx", Entry: "e", KeyFile: "/k", DBPassword: policy.DBPasswordNone}, "from KeePassXC: e in /p.kdbx",
			func(s any) bool { k, ok := s.(*keepassxc.Source); return ok && k.NoPassword && k.KeyFile == "/k" }},
		{&policy.Source{Store: policy.StoreKeePassXC, Database: "/p.kdbx", Entry: "e"}, "from KeePassXC: e in /p.kdbx",
			func(s any) bool { k, ok := s.(*keepassxc.Source); return ok && !k.NoPassword }},
		{&policy.Source{Store: policy.StoreOnePass, Ref: "op://a/b/c", Account: "acc"}, "from 1Password: op://a/b/c",
			func(s any) bool { p, ok := s.(*onepassword.Source); return ok && p.Account == "acc" }},
		{&policy.Source{Store: policy.StoreBitwarden, Item: "id"}, "from Bitwarden: item id", func(s any) bool { _, ok := s.(*bitwarden.Source); return ok }},
		{&policy.Source{Store: policy.StoreRbw, Entry: "e", User: "u", Folder: "f"}, "from rbw: e (u)",
			func(s any) bool { r, ok := s.(*rbw.Source); return ok && r.Folder == "f" }},
	}
	for _, c := range cases {
		s, err := For(c.src, o)
		if err != nil || s.Describe() != c.describe || !c.check(s) {
			t.Errorf("For(%+v) = %T %q, %v", c.src, s, s.Describe(), err)
		}
	}
	if _, err := For(&policy.Source{Store: "lastpass"}, o); err == nil {
		t.Error("For(unknown store) succeeded")
	}
}
