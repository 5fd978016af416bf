// Package keepassxc is the secret source for a KeePassXC database, through
// `keepassxc-cli show`: the entry's password, or its current TOTP code
// (`--totp`, computed by keepassxc-cli).
//
// The database password is never in fillgate's policy, environment or any
// file: with db_password = "prompt" the person types it in fillgate's
// prompt for this fill (Request.Ask) and it goes to keepassxc-cli on its
// standard input, the way keepassxc-cli reads it; with "none" the database
// opens with its key file alone (--no-password).
package keepassxc

import (
	"context"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/storecmd"
	"github.com/fillgate/fillgate/internal/totp"
)

// Store is the store's name in the policy and in messages.
const Store = "keepassxc"

// EnvKeys are the variables keepassxc-cli is given from fillgate's
// environment: where it keeps its settings, and the locale's character
// set (entry names may be any text). It needs no display.
var EnvKeys = []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "LANG", "LC_CTYPE", "TMPDIR"}

// Source reads one entry of a KeePassXC database.
type Source struct {
	Database   string     // the .kdbx file
	Entry      string     // the entry's path in it
	KeyFile    string     // its key file, or ""
	NoPassword bool       // open with the key file alone
	Command    string     // keepassxc-cli from the policy; "" looks it up on PATH
	Environ    []string   // fillgate's environment, to take EnvKeys from
	Clock      totp.Clock // for one-time codes
}

// Describe names the database and entry.
func (s *Source) Describe() string { return "from KeePassXC: " + s.Entry + " in " + s.Database }

// Fetch runs keepassxc-cli show, with the database password on stdin.
func (s *Source) Fetch(ctx context.Context, req secrets.Request) ([]byte, error) {
	path, err := storecmd.Find(Store, "keepassxc-cli", s.Command, s.Environ, "install KeePassXC (Debian: apt install keepassxc; macOS: brew install keepassxc, which puts keepassxc-cli in the app)")
	if err != nil {
		return nil, err
	}
	// Not --quiet: it silences keepassxc-cli's errors too. Its password
	// prompt goes to stderr, which nobody sees.
	args := []string{"show"}
	if req.Field == secrets.FieldOTP {
		args = append(args, "--totp")
	} else {
		args = append(args, "--show-protected", "--attributes", "Password")
	}
	if s.KeyFile != "" {
		args = append(args, "--key-file", s.KeyFile)
	}
	var stdin []byte
	if s.NoPassword {
		args = append(args, "--no-password")
	} else {
		if req.Ask == nil {
			return nil, &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "the database needs its password, and nobody is asked for this fill",
				Fix: "give the database a key file and set db_password = \"none\" in the policy, or approve fills for this service in the prompt"}
		}
		pw, err := req.Ask(ctx, "the password of the KeePassXC database "+s.Database)
		if err != nil {
			return nil, err
		}
		stdin = make([]byte, len(pw)+1)
		copy(stdin, pw)
		clear(pw)
		stdin[len(stdin)-1] = '\n'
		defer clear(stdin)
	}
	args = append(args, "--", s.Database, s.Entry)
	if req.Field == secrets.FieldOTP {
		// keepassxc-cli computes the code when it runs: start it early in
		// a time step.
		if _, err := totp.Fresh(ctx, s.Clock, totp.DefaultPeriod); err != nil {
			return nil, err
		}
	}
	out, err := storecmd.Run(ctx, storecmd.Command{
		Store:    Store,
		Path:     path,
		Args:     args,
		Environ:  s.Environ,
		Keys:     EnvKeys,
		Stdin:    stdin,
		Classify: s.classify,
	})
	if err != nil {
		return nil, err
	}
	return secrets.TrimNewline(out), nil
}

// classify reads what keepassxc-cli said.
func (s *Source) classify(_ int, stderr []byte) *secrets.Error {
	switch {
	case storecmd.Contains(stderr, "invalid credentials", "wrong key or database file is corrupt", "key file"):
		return &secrets.Error{Source: Store, Kind: secrets.KindLocked, Detail: "the database did not open with the password (or key file) given",
			Fix: "type the database password again, or check key_file in the policy"}
	case storecmd.Contains(stderr, "could not find entry", "entry not found"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "there is no entry " + s.Entry + " in " + s.Database, Fix: "check the entry path with keepassxc-cli ls " + s.Database}
	case storecmd.Contains(stderr, "no totp set up"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "the entry " + s.Entry + " has no TOTP set up", Fix: "set up TOTP for the entry in KeePassXC"}
	case storecmd.Contains(stderr, "failed to open", "no such file", "does not exist"):
		return &secrets.Error{Source: Store, Kind: secrets.KindNotFound, Detail: "the database " + s.Database + " could not be opened", Fix: "check database in the policy"}
	}
	return nil
}
