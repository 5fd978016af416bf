package rbw

import (
	"slices"
	"testing"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/fakes/standins"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestRbw runs the source against a stand-in rbw that answers as rbw
// does: the value and a newline on stdout (rbw get prints the password
// line only), and on failure "rbw get: …" on stderr and exit status 1.
func TestRbw(t *testing.T) {
	d := standins.Install(t, "rbw")
	password := leakscan.NewSecret(t)
	environ := []string{"PATH=" + d.Path + ":/usr/bin:/bin", "HOME=/home/u", "XDG_RUNTIME_DIR=/run/user/1000", "GITHUB_TOKEN=junk-env"}
	src := &Source{Entry: "github.com", User: "alice", Folder: "work", Environ: environ, Clock: standins.MidStep{}}
	if src.Describe() != "from rbw: github.com (alice)" {
		t.Errorf("Describe = %q", src.Describe())
	}
	allowed := append(slices.Clone(EnvKeys), "LC_MESSAGES")
	pw := secrets.Request{Service: "github.com", Field: secrets.FieldPassword}
	args := []string{"get", "--folder", "work", "github.com", "alice"}
	standins.RunCases(t, d, allowed, src.Fetch, [][]byte{password}, []standins.Case{
		{Name: "password", Req: pw, Args: args, Out: append(slices.Clone(password), '\n'), Want: password},
		{Name: "code", Req: secrets.Request{Field: secrets.FieldOTP}, Args: []string{"code", "--folder", "work", "github.com", "alice"}, Out: []byte("123456\n"), Want: []byte("123456")},
		{Name: "locked", Req: pw, Args: args, Code: 1, Stderr: true, Out: []byte("rbw get: failed to unlock database: failed to read password from pinentry: no pinentry\n"), WantErr: secrets.ErrLocked, WantFix: "run `rbw unlock`"},
		{Name: "logged out", Req: pw, Args: args, Code: 1, Stderr: true, Out: []byte("rbw get: failed to log in to bitwarden instance: ...\n"), WantErr: secrets.ErrLocked, WantFix: "run `rbw login`"},
		{Name: "no entry", Req: pw, Args: args, Code: 1, Stderr: true, Out: []byte("rbw get: couldn't find entry for 'alice@github.com': no entry found\n"), WantErr: secrets.ErrNotFound, WantFix: "rbw list"},
		{Name: "no totp", Req: secrets.Request{Field: secrets.FieldOTP}, Args: []string{"code", "--folder", "work", "github.com", "alice"}, Code: 1, Stderr: true, Out: []byte("rbw code: entry does not contain a totp secret\n"), WantErr: secrets.ErrNotFound, WantFix: "set up TOTP"},
	})
}
