package onepassword

import (
	"context"
	"slices"
	"testing"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/fakes/standins"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestOnePassword runs the source against a stand-in op that answers as
// the 1Password CLI documents: the value on stdout (op read --no-newline:
// none after it; op item get --otp: a newline), and on failure an
// "[ERROR] date time message" line on stderr and exit status 1.
func TestOnePassword(t *testing.T) {
	d := standins.Install(t, "op")
	password := leakscan.NewSecret(t)
	environ := []string{"PATH=" + d.Path + ":/usr/bin:/bin", "HOME=/home/u", "OP_ACCOUNT=my.1password.com", "OP_SERVICE_ACCOUNT_TOKEN=ops_x", "AWS_SECRET=junk-env"}
	pw := &Source{Ref: "op://Private/GitHub/password", Environ: environ, Clock: standins.MidStep{}}
	code := &Source{Item: "GitHub", Vault: "Private", Account: "my.1password.com", Environ: environ, Clock: standins.MidStep{}}
	if pw.Describe() != "from 1Password: op://Private/GitHub/password" || code.Describe() != "from 1Password: GitHub in Private" {
		t.Errorf("Describe = %q, %q", pw.Describe(), code.Describe())
	}
	allowed := append(slices.Clone(EnvKeys), "LC_MESSAGES")
	password_ := secrets.Request{Service: "github.com", Field: secrets.FieldPassword}
	otp := secrets.Request{Service: "github.com", Field: secrets.FieldOTP}
	readArgs := []string{"read", "--no-newline", "op://Private/GitHub/password"}
	standins.RunCases(t, d, allowed, pw.Fetch, [][]byte{password}, []standins.Case{
		{Name: "password", Req: password_, Args: readArgs, Out: password, Want: password},
		{Name: "app locked", Req: password_, Args: readArgs, Code: 1, Stderr: true,
			Out: []byte("[ERROR] 2024/05/01 10:00:00 authorization prompt dismissed, please try again\n"), WantErr: secrets.ErrLocked, WantFix: "unlock 1Password"},
		{Name: "signed out", Req: password_, Args: readArgs, Code: 1, Stderr: true,
			Out: []byte("[ERROR] 2024/05/01 10:00:00 account is not signed in\n"), WantErr: secrets.ErrLocked, WantFix: "op signin"},
		{Name: "no such item", Req: password_, Args: readArgs, Code: 1, Stderr: true,
			Out: []byte("[ERROR] 2024/05/01 10:00:00 could not read secret 'op://Private/GitHub/password': could not find item GitHub in vault Private\n"), WantErr: secrets.ErrNotFound, WantFix: "check the policy's reference"},
	})
	standins.RunCases(t, d, allowed, code.Fetch, nil, []standins.Case{
		{Name: "code", Req: otp, Args: []string{"item", "get", "GitHub", "--otp", "--vault", "Private", "--account", "my.1password.com"}, Out: []byte("123456\n"), Want: []byte("123456")},
	})
	if _, err := (&Source{Ref: "op://a/b/c", Environ: []string{"PATH=/nonexistent"}}).Fetch(context.Background(), password_); err == nil {
		t.Error("no op on PATH: no error")
	}
}
