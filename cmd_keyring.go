package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/totp"
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
	endLeases(a, svc, c.Account)
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
	JSON bool `name:"json" help:"One JSON object: items, a list of {service, field, account}, and leases, a list of {service, field, account, agent, origin, via, until}."`
}

// savedList is what `fillgate saved --json` prints.
type savedList struct {
	Items  []keychain.Item `json:"items"`
	Leases []savedLease    `json:"leases"`
}

// savedLease is one live lease as `fillgate saved` lists it.
type savedLease struct {
	Service string    `json:"service"`
	Field   string    `json:"field"`
	Account string    `json:"account,omitempty"`
	Agent   string    `json:"agent"`
	Origin  string    `json:"origin"`
	Via     string    `json:"via"`
	Until   time.Time `json:"until"`
}

func (c *savedCmd) Run(a *app) error {
	listed, itemsErr := keychain.OS().List(a.ctx)
	items := make([]keychain.Item, 0, len(listed))
	for _, l := range listed {
		items = append(items, l.Item)
	}
	leases := liveLeases(a)
	if c.JSON {
		b, err := json.Marshal(savedList{Items: items, Leases: leases})
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "%s\n", b)
		return itemsErr
	}
	switch {
	case itemsErr != nil:
	case len(items) == 0:
		fmt.Fprintln(a.stdout, "nothing remembered in the OS keyring")
	default:
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVICE\tFIELD\tACCOUNT")
		for _, it := range items {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", printable(it.Service), it.Field, printable(dash(it.Account)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(leases) > 0 {
		fmt.Fprintln(a.stdout, "\nlive leases (the agent may fill again with a notice and no prompt until then):")
		tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVICE\tFIELD\tACCOUNT\tAGENT\tORIGIN\tVIA\tUNTIL")
		for _, l := range leases {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(l.Service), l.Field, printable(dash(l.Account)),
				printable(l.Agent), printable(l.Origin), l.Via, l.Until.Local().Format(time.TimeOnly))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return itemsErr
}

// liveLeases lists the live leases: those the running hosts keep in
// memory (the extension path) and those in the state dir (the CDP path).
// What cannot be read is left out.
func liveLeases(a *app) []savedLease {
	out := []savedLease{}
	add := func(ls []fill.Lease, via string) {
		for _, l := range ls {
			out = append(out, savedLease{Service: l.Service, Field: l.Field, Account: l.Account, Agent: l.Agent,
				Origin: l.Origin, Via: cmp.Or(l.Via, via), Until: l.Until})
		}
	}
	if dir, err := dirs.Runtime(a.env); err == nil {
		ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
		hs, _ := agentsock.Status(ctx, dir)
		cancel()
		for _, h := range hs {
			add(h.Leases, fill.ViaExtension)
		}
	}
	if st, err := cdpState(a); err == nil && st != nil {
		ls, _ := st.LiveLeases(time.Now())
		add(ls, fill.ViaCDP)
	}
	slices.SortFunc(out, func(x, y savedLease) int { return x.Until.Compare(y.Until) })
	return out
}

// cdpState opens the CDP path's state in the state dir (cdp/), where
// separate `fillgate fill` processes keep their leases; nil, with no
// error, when there is none yet.
func cdpState(a *app) (*fillstate.Dir, error) {
	state, err := dirs.State(a.env)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(state, "cdp")
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return fillstate.Open(dir)
}

// endLeases ends the CDP path's leases on the saved values of service and
// account ("" for every account; service "" too for every lease), after
// the person forgot or replaced them, so that `fillgate saved` and status
// list them no more, and says in one line how many ended (when any). A
// running browser's host keeps its leases in memory, out of reach here:
// those stop covering by themselves, as each names the stamp of the value
// it was granted for. A lease that cannot be ended here does not fill
// either (the CDP path checks the stamp too), so that is only a warning.
func endLeases(a *app, service, account string) {
	st, err := cdpState(a)
	n := 0
	if err == nil && st != nil {
		n, err = st.EndLeases(service, account)
	}
	what := ""
	if service != "" {
		what = " for " + printable(service)
	}
	switch {
	case err != nil:
		fmt.Fprintf(a.stderr, "fillgate: could not end the leases%s on the CDP path (they fill no more all the same): %v\n", what, err)
	case n == 1:
		fmt.Fprintf(a.stdout, "ended 1 lease%s; its agent must ask again\n", what)
	case n > 1:
		fmt.Fprintf(a.stdout, "ended %d leases%s; their agents must ask again\n", n, what)
	}
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
		endLeases(a, "", "")
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
	endLeases(a, svc, c.Account)
	return nil
}
