package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/remember"
)

type rememberCmd struct {
	Service string `required:"" help:"The service the secret is for: a host, with :port for another port (nas.lan:8443)."`
	Field   string `default:"password" enum:"password,otp" help:"password, or otp for a TOTP seed (the otpauth:// URI or the base32 secret the service showed)."`
	Account string `help:"The account (user name) the secret is for; leave it out for the service's only one."`
	Stdin   bool   `name:"stdin" help:"Read the secret from standard input (to its end; one trailing newline is dropped) instead of asking at the terminal."`
}

// Run stores the secret, then ends the CDP path's leases on the value it
// replaced.
func (c *rememberCmd) Run(a *app) error {
	svc, err := policy.NormalizeService(c.Service)
	if err != nil {
		return usageError{err}
	}
	it, err := keychain.NewItem(svc, c.Field, c.Account)
	if err != nil {
		return usageError{err}
	}
	what := "Password"
	if it.Field == keychain.FieldOTP {
		what = "TOTP seed (otpauth:// URI or base32)"
	}
	in := remember.Input{Stdin: a.stdin, Piped: c.Stdin, Terminal: a.stderr,
		Prompt: fmt.Sprintf("%s for %s (not shown as you type): ", what, printable(it.Service))}
	if err := remember.Store(a.ctx, keychain.OS(), it, in); err != nil {
		var bad *remember.InputError
		if errors.As(err, &bad) {
			return usageError{err}
		}
		return err
	}
	fmt.Fprintf(a.stdout, "remembered the %s in the OS keyring\n", printable(it.String()))
	endLeases(a, svc, c.Account)
	return nil
}

type savedCmd struct {
	JSON bool `name:"json" help:"One JSON object: items, a list of {service, field, account}, and leases, a list of {service, field, account, agent, origin, via, until}."`
}

// savedList is what `fillgate saved --json` prints.
type savedList struct {
	Items  []keychain.Item  `json:"items"`
	Leases []remember.Lease `json:"leases"`
}

// Run lists the kept items and the live leases.
func (c *savedCmd) Run(a *app) error {
	listed, itemsErr := keychain.OS().List(a.ctx)
	items := make([]keychain.Item, 0, len(listed))
	for _, l := range listed {
		items = append(items, l.Item)
	}
	leases := remember.Leases(a.ctx, a.env)
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

// endLeases ends the CDP path's leases on the kept values of service and
// account (see remember.EndLeases) and says in one line how many ended
// (when any); one that cannot be ended is only a warning.
func endLeases(a *app, service, account string) {
	n, err := remember.EndLeases(a.env, service, account)
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
	Service string `help:"The service whose remembered secrets to remove (every field kind, unless --field)."`
	Account string `help:"Only this account's secrets for the service."`
	Field   string `enum:",password,otp,passkey" default:"" help:"Only this kind: password, otp, or passkey (the agents' passkey; remove it on the site too)."`
	All     bool   `name:"all" help:"Remove every secret fillgate remembered."`
}

// Run removes the items, then ends the CDP path's leases on them.
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
	var removed []keychain.Item
	if c.Field != "" {
		removed, err = forgetKind(a, k, svc, c.Field, c.Account)
	} else {
		removed, err = k.Forget(a.ctx, svc, c.Account)
	}
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintf(a.stdout, "nothing remembered for %s\n", printable(svc))
		return nil
	}
	for _, it := range removed {
		fmt.Fprintf(a.stdout, "removed the %s\n", printable(it.String()))
		if it.Field == keychain.FieldPasskey {
			fmt.Fprintf(a.stdout, "the site still lists that passkey: remove it in the site's own security settings too\n")
		}
	}
	endLeases(a, svc, c.Account)
	return nil
}

// forgetKind removes the items of one field kind of service: with account
// "", every account's.
func forgetKind(a *app, k *keychain.Keyring, svc, field, account string) ([]keychain.Item, error) {
	if field == "otp" {
		field = keychain.FieldOTP
	}
	listed, err := k.List(a.ctx)
	if err != nil {
		return nil, err
	}
	var items []keychain.Item
	for _, l := range listed {
		if l.Service == svc && l.Field == field && (account == "" || l.Account == account) {
			items = append(items, l.Item)
		}
	}
	// An item missing from the index (keychain's package doc) is found by
	// trying.
	exact := keychain.Item{Service: svc, Field: field, Account: account}
	if !slices.Contains(items, exact) {
		items = append(items, exact)
	}
	var removed []keychain.Item
	for _, it := range items {
		ok, err := k.Delete(a.ctx, it)
		if err != nil {
			return removed, err
		}
		if ok {
			removed = append(removed, it)
		}
	}
	return removed, nil
}
