package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/fillgate/fillgate/host/keychain"
	"github.com/fillgate/fillgate/host/totp"
	"github.com/fillgate/fillgate/policy"
)

// maxSecretInput is the most a secret read by `fillgate remember` may be.
const maxSecretInput = keychain.LinuxMaxValue

type rememberCmd struct {
	Service string `required:"" help:"The service the secret is for: a host, with :port for another port (nas.lan:8443)."`
	Field   string `default:"password" enum:"password,otp" help:"password, or otp for a TOTP seed (the otpauth:// URI or the base32 secret the service showed)."`
	Account string `help:"The account (user name) the secret is for; leave it out for the service's only one."`
	Stdin   bool   `name:"stdin" help:"Read the secret from standard input (to its end; one trailing newline is dropped) instead of asking at the terminal."`
}

func (c *rememberCmd) Run(a *app) error {
	svc, err := policy.NormalizeService(c.Service)
	if err != nil {
		return usageError{err}
	}
	it, err := keychain.NewItem(svc, c.Field, c.Account)
	if err != nil {
		return usageError{err}
	}
	k := keychain.OS()
	if err := k.Available(a.ctx); err != nil {
		return err
	}
	value, err := c.read(a, it)
	if err != nil {
		return err
	}
	defer clear(value)
	if it.Field == keychain.FieldOTP {
		if _, err := totp.Parse(value); err != nil {
			return usageError{err}
		}
	}
	if err := k.Set(a.ctx, it, value); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "remembered the %s in the OS keyring\n", printable(it.String()))
	return nil
}

// read reads the secret: from stdin with --stdin, else at the terminal
// without echo.
func (c *rememberCmd) read(a *app, it keychain.Item) ([]byte, error) {
	if c.Stdin {
		v, err := readSecret(a.stdin, maxSecretInput)
		if err != nil {
			return nil, err
		}
		if len(v) == 0 {
			return nil, usageError{errors.New("standard input held no secret")}
		}
		return v, nil
	}
	f, ok := a.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, usageError{errors.New("standard input is not a terminal: run this in one, or pipe the secret in with --stdin")}
	}
	what := "Password"
	if it.Field == keychain.FieldOTP {
		what = "TOTP seed (otpauth:// URI or base32)"
	}
	v, err := readHidden(f, func() { fmt.Fprintf(a.stderr, "%s for %s (not shown as you type): ", what, printable(it.Service)) }, maxSecretInput)
	fmt.Fprintln(a.stderr)
	if err != nil {
		return nil, err
	}
	if len(v) == 0 {
		return nil, usageError{errors.New("no secret typed; nothing stored")}
	}
	return v, nil
}

// readSecret reads r to its end into one buffer of max bytes (so no copy
// is left behind by growing it), drops one trailing newline (\n or \r\n),
// and refuses more than max bytes. On an error the buffer is zeroed.
func readSecret(r io.Reader, max int) ([]byte, error) {
	tooLong := usageError{fmt.Errorf("the secret on standard input is longer than %d bytes; nothing stored", max)}
	buf := make([]byte, max+2) // room for a trailing \r\n
	n := 0
	for {
		if n == len(buf) {
			var one [1]byte
			m, _ := io.ReadFull(r, one[:])
			clear(one[:])
			if m > 0 {
				clear(buf)
				return nil, tooLong
			}
			break
		}
		m, err := r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			clear(buf)
			return nil, fmt.Errorf("read the secret from standard input: %w", err)
		}
	}
	v := buf[:n]
	for _, end := range []byte{'\n', '\r'} {
		if l := len(v); l > 0 && v[l-1] == end {
			v[l-1] = 0
			v = v[:l-1]
		} else if end == '\n' {
			break
		}
	}
	if len(v) > max {
		clear(buf)
		return nil, tooLong
	}
	return v, nil
}

type savedCmd struct {
	JSON bool `name:"json" help:"A JSON array of {service, field, account}."`
}

func (c *savedCmd) Run(a *app) error {
	items, err := keychain.OS().List(a.ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		if items == nil {
			items = []keychain.Item{}
		}
		b, err := json.Marshal(items)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", b)
		return nil
	}
	if len(items) == 0 {
		fmt.Fprintln(a.stdout, "nothing remembered in the OS keyring")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVICE\tFIELD\tACCOUNT")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", printable(it.Service), it.Field, printable(dash(it.Account)))
	}
	return tw.Flush()
}

type forgetCmd struct {
	Service string `help:"The service whose remembered secrets to remove (every field kind)."`
	Account string `help:"Only this account's secrets for the service."`
	All     bool   `name:"all" help:"Remove every secret fillgate remembered."`
}

func (c *forgetCmd) Run(a *app) error {
	k := keychain.OS()
	switch {
	case c.All && (c.Service != "" || c.Account != ""):
		return usageError{errors.New("--all removes everything: leave out --service and --account")}
	case c.All:
		n, err := k.ForgetAll(a.ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "removed every secret fillgate remembered (%d listed)\n", n)
		return nil
	case c.Service == "":
		return usageError{errors.New("name the service with --service, or use --all")}
	}
	svc, err := policy.NormalizeService(c.Service)
	if err != nil {
		return usageError{err}
	}
	removed, err := k.Forget(a.ctx, svc, c.Account)
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintf(a.stdout, "nothing remembered for %s\n", printable(svc))
		return nil
	}
	for _, it := range removed {
		fmt.Fprintf(a.stdout, "removed the %s\n", printable(it.String()))
	}
	return nil
}
