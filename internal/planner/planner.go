// Package planner is the fill flow's Planner (fill.Planner): from the
// person's policy, their OS keyring and their password stores it says, for
// one fill the policy allows, how the fill is approved and where its value
// comes from, and it remembers a typed value the person asked to keep.
//
// It reads no secret to plan: whether the OS keyring holds a value comes
// from fillgate's index of its items (names only). What the agent may
// read of a source's failure is filtered here: no entry name, database or
// store path, item id or account reaches a result.
package planner

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/internal/secrets/sources"
	"github.com/fillgate/fillgate/internal/totp"
)

// Planner implements fill.Planner (and fill.Warmer) for one fill.
type Planner struct {
	Policy  *policy.Policy
	Keyring *keychain.Keyring
	// Environ is fillgate's environment, for the stores' programs (each
	// gets only the variables its package lists).
	Environ []string
	// Clock is the time for one-time codes; nil means the system clock.
	Clock totp.Clock

	warm *listing // started by Warm, or nil
}

var (
	_ fill.Planner = (*Planner)(nil)
	_ fill.Warmer  = (*Planner)(nil)
)

// listing is what the OS keyring holds for one service and field: whether
// it can be used, and fillgate's index of its items (names only).
type listing struct {
	service, field string
	done           chan struct{}
	avail, err     error
	items          []keychain.Listed
}

// Warm implements fill.Warmer: it starts reading the keyring's index for
// service while the page is inspected. It reads no value.
func (p *Planner) Warm(ctx context.Context, service, field string) {
	if p.Keyring == nil || p.warm != nil {
		return
	}
	l := &listing{service: service, field: field, done: make(chan struct{})}
	p.warm = l
	go func() {
		defer close(l.done)
		l.avail, l.items, l.err = p.list(ctx)
	}()
}

// list checks that the keyring can be used and reads its index.
func (p *Planner) list(ctx context.Context) (avail error, items []keychain.Listed, err error) {
	if avail = p.Keyring.Available(ctx); avail != nil {
		return avail, nil, nil
	}
	items, err = p.Keyring.List(ctx)
	return nil, items, err
}

// listed is the keyring's index for q, from Warm when it read it.
func (p *Planner) listed(ctx context.Context, q fill.PlanQuery) (avail error, items []keychain.Listed, err error) {
	if l := p.warm; l != nil && l.service == q.Service && l.field == q.Field {
		select {
		case <-l.done:
			return l.avail, l.items, l.err
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	return p.list(ctx)
}

// Plan implements fill.Planner.
func (p *Planner) Plan(ctx context.Context, q fill.PlanQuery) (fill.Plan, error) {
	s, ok := p.Policy.Settings(q.Service, q.Field, q.Agent, q.In, q.Via)
	if !ok {
		return fill.Plan{}, errors.New("the policy does not allow this fill")
	}
	plan := fill.Plan{Approval: s.Approval, Lease: s.Lease}
	if q.Field == fill.FieldPasskey {
		return p.passkey(ctx, q, plan), nil
	}
	if s.Source != nil && s.Source.Store != policy.StoreKeyring {
		return p.store(s.Source, q, plan)
	}
	return p.keyring(ctx, s, q, plan), nil
}

// passkey plans the use of the agents' passkey for the service: saved
// when fillgate's index lists one (the service's one passkey, or the
// accounts of several), never a value to type or remember. Plan.Source
// is nil: the passkey is used where it is kept (fill.Passkeys).
func (p *Planner) passkey(ctx context.Context, q fill.PlanQuery, plan fill.Plan) fill.Plan {
	plan.Store = storeName(policy.StoreKeyring)
	plan.Unsaved = "no passkey of the agents' is kept for " + q.Service + "; the person adds one with `fillgate passkey add --service " + q.Service + "`"
	avail, items, err := p.listed(ctx, q)
	switch {
	case avail != nil:
		plan.Unsaved = unavailable(avail)
		return plan
	case err != nil:
		plan.Unsaved = "fillgate could not read its list of what is kept in the OS keyring; run `fillgate doctor`"
		return plan
	}
	var accounts []string
	stamps := map[string]string{}
	for _, it := range items {
		if it.Service == q.Service && it.Field == keychain.FieldPasskey {
			accounts = append(accounts, it.Account)
			stamps[it.Account] = it.Stamp
		}
	}
	switch len(accounts) {
	case 0:
		return plan
	case 1:
		plan.Saved, plan.Account = true, accounts[0]
	default:
		plan.Saved, plan.Accounts = true, accounts
	}
	plan.Unsaved = ""
	plan.Stamps = offered(plan, stamps)
	return plan
}

// store plans a value from the person's own password store: it is always
// offered (the store says at fetch time whether it has it), and a
// KeePassXC database whose password is typed asks for it in the prompt.
// A password store keeps no stamps (plan.Stamps stays nil): fillgate
// cannot tell when its value changes, so a lease on it ends only when its
// time runs out or the person ends it (the popup), never because the
// value was changed or removed in the store.
func (p *Planner) store(src *policy.Source, q fill.PlanQuery, plan fill.Plan) (fill.Plan, error) {
	s, err := sources.For(src, sources.Options{Environ: p.Environ, Keyring: p.Keyring, Clock: p.Clock})
	if err != nil {
		return fill.Plan{}, err
	}
	plan.Source = &source{src: s, hide: hidden(src, q.In.Account)}
	plan.Store = storeName(src.Store)
	plan.Saved = true
	if src.Store == policy.StoreKeePassXC && src.DBPassword != policy.DBPasswordNone {
		// By kind only: the loopback page shows it. The native dialog
		// names the database through the source's Describe.
		plan.Ask = "the password of the KeePassXC database"
	}
	return plan, nil
}

// keyring plans a value from the OS keyring: saved when fillgate's index
// lists an item for the service, field and account; offered to remember
// when the policy allows it and the keyring answers. Plan.Stamps holds
// the index's stamp of each account's value the plan offers.
func (p *Planner) keyring(ctx context.Context, s policy.Settings, q fill.PlanQuery, plan fill.Plan) fill.Plan {
	plan.Store = storeName(policy.StoreKeyring)
	avail, items, err := p.listed(ctx, q)
	if avail != nil {
		plan.Unsaved = unavailable(avail)
		return plan
	}
	plan.Remember = s.Remember && q.Field == fill.FieldPassword
	if err != nil {
		plan.Unsaved = "fillgate could not read its list of what is remembered in the OS keyring; run `fillgate doctor`"
		return plan
	}
	field := keychain.FieldPassword
	if q.Field == fill.FieldOTP {
		field = keychain.FieldOTP
	}
	var accounts []string
	bare := false
	stamps := map[string]string{}
	for _, it := range items {
		if it.Service == q.Service && it.Field == field {
			if it.Account == "" {
				bare = true
			} else {
				accounts = append(accounts, it.Account)
			}
			stamps[it.Account] = it.Stamp
		}
	}
	page := q.In.Account
	switch {
	case page != "" && slices.Contains(accounts, page):
		plan.Saved, plan.Account = true, page
	case bare:
		plan.Saved = true // the service's value that names no account
	case page == "" && len(accounts) == 1:
		plan.Saved, plan.Account = true, accounts[0]
	case page == "" && len(accounts) > 1:
		plan.Saved, plan.Accounts = true, accounts
	}
	if plan.Saved {
		plan.Stamps = offered(plan, stamps)
	}
	src, _ := sources.For(nil, sources.Options{Keyring: p.Keyring, Clock: p.Clock})
	plan.Source = &source{src: src, hide: hidden(nil, page)}
	if !plan.Saved {
		plan.Unsaved = "nothing is remembered for " + q.Service + " in the OS keyring; remember it with `" + rememberCommand(q) + "`"
	}
	return plan
}

// offered keeps, of stamps (by account), those of the accounts plan
// offers: each of those the person picks among, or else its one account
// ("" for the service's value that names none).
func offered(plan fill.Plan, stamps map[string]string) map[string]string {
	accounts := plan.Accounts
	if len(accounts) == 0 {
		accounts = []string{plan.Account}
	}
	out := make(map[string]string, len(accounts))
	for _, a := range accounts {
		if s, ok := stamps[a]; ok {
			out[a] = s
		}
	}
	return out
}

// rememberCommand is the command that remembers the value for q (the
// account left for the person to fill in: the agent never sees it).
func rememberCommand(q fill.PlanQuery) string {
	c := "fillgate remember --service " + q.Service
	if q.Field == fill.FieldOTP {
		c += " --field otp"
	}
	if q.In.Account != "" {
		c += " --account ACCOUNT"
	}
	return c
}

// unavailable says why the OS keyring cannot be used, and what mends it.
func unavailable(err error) string {
	var u *keychain.Unavailable
	if errors.As(err, &u) {
		return "the OS keyring " + u.Reason + "; " + u.Fix
	}
	return "the OS keyring cannot be used; run `fillgate doctor`"
}

// Remember implements fill.Planner: it stores the value in the OS keyring
// for service, field and account, and returns the stamp of the value it
// stored (fill.Plan.Stamps). A one-time code is never remembered (the
// keyring holds the seed, from `fillgate remember --field otp`).
func (p *Planner) Remember(ctx context.Context, service, field, account string, value []byte) (string, error) {
	if field != fill.FieldPassword {
		return "", errors.New("only a password is remembered from the prompt; for one-time codes remember the seed with `fillgate remember --field otp`")
	}
	it, err := keychain.NewItem(service, keychain.FieldPassword, account)
	if err != nil {
		return "", errors.New(redact(err.Error(), hidden(nil, account)))
	}
	stamp, err := p.Keyring.Store(ctx, it, value)
	if err != nil {
		var u *keychain.Unavailable
		if errors.As(err, &u) {
			return "", errors.New(unavailable(err))
		}
		return "", errors.New(redact(err.Error(), hidden(nil, account)))
	}
	return stamp, nil
}

// storeName names a store in the agent's result.
func storeName(store string) string {
	switch store {
	case policy.StorePass:
		return "pass"
	case policy.StoreKeePassXC:
		return "KeePassXC"
	case policy.StoreOnePass:
		return "1Password"
	case policy.StoreBitwarden:
		return "Bitwarden"
	case policy.StoreRbw:
		return "rbw"
	}
	return "the OS keyring"
}

// source is a secret source as the fill flow sees it: its failures are
// *fill.SourceError with nothing in them the agent may not read.
type source struct {
	src  secrets.Source
	hide []hide
}

// Describe names the source for the prompt and the notice (the person's,
// never the agent's).
func (s *source) Describe() string { return s.src.Describe() }

// Fetch reads the value from the store.
func (s *source) Fetch(ctx context.Context, req fill.FetchRequest) ([]byte, error) {
	hide := append(slices.Clone(s.hide), hidden(nil, req.Account)...)
	v, err := s.src.Fetch(ctx, secrets.Request{Service: req.Service, Field: req.Field, Account: req.Account, Ask: req.Ask})
	if err == nil {
		return v, nil
	}
	clear(v)
	var fe *fill.SourceError
	var se *secrets.Error
	switch {
	case errors.As(err, &fe):
		return nil, &fill.SourceError{Detail: redact(fe.Detail, hide), Fix: redact(fe.Fix, hide)}
	case errors.As(err, &se):
		return nil, &fill.SourceError{Detail: redact(se.Detail, hide), Fix: redact(se.Fix, hide)}
	}
	return nil, &fill.SourceError{Detail: redact(err.Error(), hide)}
}

// hide is a string the agent must not read, and what stands in for it.
type hide struct{ s, as string }

// hidden lists what of src and the account must not reach the agent:
// entry names, files, items, vaults, the account.
func hidden(src *policy.Source, account string) []hide {
	var h []hide
	add := func(s, as string) {
		if s != "" {
			h = append(h, hide{s, as})
		}
	}
	add(account, "ACCOUNT")
	if src != nil {
		add(src.Entry, "ENTRY")
		add(src.Database, "DATABASE")
		add(src.KeyFile, "KEY_FILE")
		add(src.StoreDir, "STORE_DIR")
		add(src.Ref, "REF")
		add(src.Item, "ITEM")
		add(src.Vault, "VAULT")
		add(src.Account, "ACCOUNT")
		add(src.User, "USER")
		add(src.Folder, "FOLDER")
	}
	// Longest first, so a name inside another is not replaced first.
	slices.SortStableFunc(h, func(a, b hide) int { return len(b.s) - len(a.s) })
	return h
}

// redact replaces, in s, every whole occurrence of what h lists (not a
// part of a longer word) with its stand-in: ENTRY, DATABASE, ACCOUNT and
// the like, names the person reads off their policy and page.
func redact(s string, h []hide) string {
	for _, x := range h {
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, x.s)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(x.s)
			if wordByte(rest, i-1) || wordByte(rest, end) {
				b.WriteString(rest[:end])
			} else {
				b.WriteString(rest[:i])
				b.WriteString(x.as)
			}
			rest = rest[end:]
		}
		s = b.String()
	}
	return s
}

// wordByte reports whether s[i] is a letter or digit (false outside s).
func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c >= 0x80
}
