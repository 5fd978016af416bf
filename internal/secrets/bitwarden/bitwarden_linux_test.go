package bitwarden

import (
	"slices"
	"testing"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/fakes/standins"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// TestBitwarden runs the source against a stand-in bw that answers as the
// Bitwarden CLI does with BW_NOINTERACTION=true: the value on stdout
// (without a newline, to a pipe), and on failure its message on stderr
// ("Vault is locked.", "You are not logged in.", "Not found.") and exit
// status 1.
func TestBitwarden(t *testing.T) {
	d := standins.Install(t, "bw")
	password, session := leakscan.NewSecret(t), leakscan.NewSecret(t)
	environ := []string{"PATH=" + d.Path + ":/usr/bin:/bin", "HOME=/home/u", "BW_SESSION=" + string(session), "NPM_TOKEN=junk-env"}
	src := &Source{Item: "0f6c1a52-3c9e", Environ: environ, Clock: standins.MidStep{}}
	if src.Describe() != "from Bitwarden: item 0f6c1a52-3c9e" {
		t.Errorf("Describe = %q", src.Describe())
	}
	allowed := append(slices.Clone(EnvKeys), "BW_NOINTERACTION", "LC_MESSAGES")
	pw := secrets.Request{Service: "example.org", Field: secrets.FieldPassword}
	args := []string{"get", "password", "0f6c1a52-3c9e"}
	standins.RunCases(t, d, allowed, src.Fetch, [][]byte{password}, []standins.Case{
		{Name: "password", Req: pw, Args: args, Out: password, Want: password},
		{Name: "code", Req: secrets.Request{Field: secrets.FieldOTP}, Args: []string{"get", "totp", "0f6c1a52-3c9e"}, Out: []byte("654321"), Want: []byte("654321")},
		{Name: "locked", Req: pw, Args: args, Code: 1, Stderr: true, Out: []byte("Vault is locked."), WantErr: secrets.ErrLocked, WantFix: "run `bw unlock`"},
		{Name: "logged out", Req: pw, Args: args, Code: 1, Stderr: true, Out: []byte("You are not logged in."), WantErr: secrets.ErrLocked, WantFix: "run `bw login`"},
		{Name: "not found", Req: pw, Args: args, Code: 1, Stderr: true, Out: []byte("Not found."), WantErr: secrets.ErrNotFound, WantFix: "bw list items"},
	})
	// The session reaches bw in its environment, where bw reads it (never
	// on its command line).
	done := make(chan error, 1)
	go func() { _, err := src.Fetch(t.Context(), pw); done <- err }()
	run := d.Next()
	if !slices.Contains(run.Env, "BW_SESSION="+string(session)) || !slices.Contains(run.Env, "BW_NOINTERACTION=true") {
		t.Error("bw did not get BW_SESSION and BW_NOINTERACTION=true")
	}
	leakscan.Bytes(t, session, "bw's argv", run.Cmdline())
	run.Answer(0, false, password)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
