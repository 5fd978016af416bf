package fill

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fillgate/fillgate/internal/wording"
)

// MaxAccount is the longest account name a page may show fillgate (the
// keyring's limit for an item's account).
const MaxAccount = 256

// cleanAccount is the account the page shows when it is one fillgate can
// use: valid UTF-8, printable, at most MaxAccount bytes; else "".
func cleanAccount(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > MaxAccount || !utf8.ValidString(s) ||
		strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return ""
	}
	return s
}

// obtained is where one fill's value comes from once it was approved. It
// is zeroed on every path.
type obtained struct {
	value    []byte // the value to insert: typed, or fetched
	asked    []byte // what the person typed for the source (Plan.Ask)
	source   bool   // the value comes from Plan.Source
	account  string // the saved value's account; for a typed value, the one to remember it under
	remember bool   // remember the typed value after the insert
	how      string // HowTyped, HowApproved, HowLease or HowNone
	// warned: the person answered a prompt that told them a program can
	// read the login page (PromptInfo.Watched).
	warned bool
}

func (g *obtained) zero() {
	clear(g.value)
	clear(g.asked)
	g.value, g.asked = nil, nil
}

// planFor asks the Planner; without one the person types every value.
func (e *Engine) planFor(ctx context.Context, q PlanQuery) (Plan, error) {
	if e.Planner == nil {
		return Plan{Approval: ApprovalEach}, nil
	}
	return e.Planner.Plan(ctx, q)
}

// obtainOpts is what obtain needs besides the plan.
type obtainOpts struct {
	budget time.Duration // the person's time
	stays  bool          // then none: a typed value stays in the field
	mode   string        // "" (nothing drives the browser), DrivenCleanRoom or DrivenInPage
}

// obtain decides where the value comes from: a fill the policy lets run
// with a notice and no prompt, or the person's answer in the prompt. On a
// status it returns no value, as ask does.
func (e *Engine) obtain(ctx context.Context, q PlanQuery, plan Plan, o obtainOpts, progress func(Progress), rn *run) (obtained, Status, string) {
	if how, account, ok := e.unprompted(q, plan); ok {
		got, noticeErr, fetchErr := e.unasked(ctx, q, plan, how, account)
		rn.sw.lap("notified_and_fetched")
		switch {
		case noticeErr == nil && fetchErr == nil:
			return got, "", ""
		case noticeErr == nil:
			return obtained{}, e.classify(ctx, StatusFailed), e.fetchDetail(ctx, plan, fetchErr)
		case ctx.Err() != nil:
			return obtained{}, e.classify(ctx, StatusCancelled), e.cause(ctx, ctx.Err()).Error()
		}
		e.log().Warn("no notice could be shown for a fill with no prompt; asking in the prompt instead", "err", noticeErr)
	} else if plan.Approval == ApprovalNone && !plan.Saved {
		return obtained{}, StatusFailed, fmt.Sprintf("the policy fills %s with no prompt (approval = none), but no saved value is there to fill: %s; nothing was typed",
			q.Service, plan.Unsaved)
	}
	info := PromptInfo{
		Agent: q.Agent, Service: q.Service, Origin: q.In.Origin(), Field: q.Field,
		Via: q.Via, Budget: o.budget, Account: q.In.Account, Remember: plan.Remember, Stays: o.stays,
		Watched: q.In.Watched, CleanRoom: o.mode == DrivenCleanRoom, InPage: o.mode == DrivenInPage,
	}
	if info.CleanRoom {
		info.Watched = false // the value goes into the clean room's page, which no program but fillgate holds
	}
	if plan.Saved && plan.Source != nil {
		info.From, info.Entry = "from "+cmp.Or(plan.Store, "a saved source"), plan.Source.Describe()
		info.Accounts, info.Ask = plan.Accounts, plan.Ask
	}
	a, status, detail := e.ask(ctx, &info, progress, rn)
	if status != "" {
		return obtained{}, status, detail
	}
	got, status, detail := fromAnswer(q, plan, info, a)
	got.warned = info.Watched
	return got, status, detail
}

// fromAnswer reads the person's answer: an approval of the saved value
// (for the account they picked), or a typed value.
func fromAnswer(q PlanQuery, plan Plan, info PromptInfo, a Answer) (obtained, Status, string) {
	bad := func(what string) (obtained, Status, string) {
		a.Zero()
		return obtained{}, StatusFailed, "the prompt's answer " + what + "; nothing was typed"
	}
	picked := ""
	if len(info.Accounts) > 0 && a.Account != "" {
		if !slices.Contains(info.Accounts, a.Account) {
			return bad("names an account the prompt did not offer")
		}
		picked = a.Account
	}
	if !a.Approved {
		clear(a.Asked)
		if len(a.Value) == 0 {
			return bad("holds no value")
		}
		account := q.In.Account
		if picked != "" {
			account = picked
		}
		return obtained{value: a.Value, account: account, remember: a.Remember && plan.Remember, how: HowTyped}, "", ""
	}
	switch {
	case info.From == "":
		return bad("approves a saved value the prompt did not offer")
	case len(info.Accounts) > 0 && picked == "":
		return bad("approves a saved value without picking the account")
	case info.Ask != "" && len(a.Asked) == 0:
		return bad("approves a saved value without what its store needs")
	}
	clear(a.Value)
	account := plan.Account
	if picked != "" {
		account = picked
	}
	return obtained{source: true, account: account, asked: a.Asked, how: HowApproved}, "", ""
}

// unprompted reports whether the fill may run with a notice and no
// prompt: a saved value the source can read without asking anyone, a
// notifier to show the notice, and approval none or a live lease for
// this agent, service, field, account and origin. It returns how and the
// saved value's account.
func (e *Engine) unprompted(q PlanQuery, plan Plan) (how, account string, ok bool) {
	if e.Notifier == nil || !plan.Saved || plan.Source == nil || plan.Ask != "" {
		return "", "", false
	}
	switch plan.Approval {
	case ApprovalNone:
		if len(plan.Accounts) > 0 {
			return "", "", false // the person picks the account in the prompt
		}
		return HowNone, plan.Account, true
	case ApprovalLease:
		item, ok := e.liveLease(q, plan)
		switch {
		case !ok:
		case len(plan.Accounts) > 0 && slices.Contains(plan.Accounts, item):
			return HowLease, item, true
		case len(plan.Accounts) == 0 && item == plan.Account:
			return HowLease, plan.Account, true
		}
	}
	return "", "", false
}

// liveLease returns the item (account) of this agent process's lease on
// the service, field, account and origin, when there is one and it still
// covers: what the person approved is still the value kept (a lease whose
// value, or passkey, was forgotten or replaced since ends here), and no
// program was attached to the tab unbeknown to them.
func (e *Engine) liveLease(q PlanQuery, plan Plan) (item string, ok bool) {
	key := q.Agent.ProcessKey()
	if e.Leases == nil || key == "" {
		return "", false
	}
	l, found := e.Leases.Leased(key, q.Service, q.Field, q.In.Account, q.In.Origin(), e.now())
	switch {
	case !found:
		return "", false
	case l.Stamp != plan.Stamp(l.Item):
		// The value the person approved was forgotten or replaced
		// since: the lease no longer covers, and ends.
		if err := e.Leases.End(l.ID); err != nil {
			e.log().Warn("end a lease whose value is gone", "err", err)
		}
		return "", false
	case q.In.Watched && !l.Watched:
		// A program is attached to the tab now, and was not (or the
		// person was not told) when they approved: they decide again.
		return "", false
	}
	return l.Item, true
}

// unasked runs a fill with no prompt: it shows the notice and fetches the
// value at once, side by side. The value is kept only when the notice was
// shown.
func (e *Engine) unasked(ctx context.Context, q PlanQuery, plan Plan, how, account string) (got obtained, noticeErr, fetchErr error) {
	got = obtained{source: true, account: account, how: how}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	fetched := make(chan error, 1)
	go func() { fetched <- e.fetch(fctx, q, plan, &got) }()
	nctx, cancel := context.WithTimeout(ctx, e.Limits.InspectBudget)
	noticeErr = e.Notifier.Notify(nctx, e.notice(q, plan, how))
	cancel()
	if noticeErr != nil {
		stop() // no notice, no fill: the prompt asks instead
	}
	fetchErr = <-fetched
	if noticeErr != nil || fetchErr != nil {
		got.zero()
	}
	return got, noticeErr, fetchErr
}

// notice is what the person sees for a fill with no prompt: agent,
// service, origin and where the value comes from.
func (e *Engine) notice(q PlanQuery, plan Plan, how string) Notice {
	why := "the policy fills it with no prompt (approval = none)"
	if how == HowLease {
		why = "under the lease you approved"
	}
	if q.In.Watched {
		why += ". A program attached to the tab over the DevTools Protocol can read it as it goes in"
	}
	return Notice{
		Title: "fillgate is filling the " + wording.FieldNoun(q.Field) + " for " + printable(q.Service, 100),
		Message: fmt.Sprintf("Asked by %s, into %s, from %s; %s.", printable(q.Agent.String(), 120),
			printable(q.In.Origin(), 120), printable(cmp.Or(plan.Store, "a saved source"), 120), why),
	}
}

// fetch reads the saved value into got.value. What the person typed for
// the source goes to it once, through Ask; it is zeroed either way.
func (e *Engine) fetch(ctx context.Context, q PlanQuery, plan Plan, got *obtained) error {
	asked := got.asked
	got.asked = nil
	defer func() { clear(asked) }()
	req := FetchRequest{Service: q.Service, Field: q.Field, Account: got.account}
	if asked != nil {
		req.Ask = func(context.Context, string) ([]byte, error) {
			if asked == nil {
				return nil, &SourceError{Detail: "the store asked twice for what was typed in the prompt"}
			}
			a := asked
			asked = nil
			return a, nil
		}
	}
	fctx, cancel := context.WithTimeout(ctx, e.Limits.FetchBudget)
	defer cancel()
	v, err := plan.Source.Fetch(fctx, req)
	if err != nil {
		clear(v)
		return err
	}
	if len(v) == 0 {
		return &SourceError{Detail: "it returned an empty value", Fix: "check the entry in the store"}
	}
	got.value = v
	return nil
}

// fetchDetail is the result's detail for a source that failed: the
// store's name and its own fix, never an entry name or the account.
func (e *Engine) fetchDetail(ctx context.Context, plan Plan, err error) string {
	store := cmp.Or(plan.Store, "the store")
	var se *SourceError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("the value could not be read from %s: %s; nothing was typed", store, se.Error())
	case ctx.Err() != nil:
		return e.cause(ctx, ctx.Err()).Error()
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s did not give the value in time; nothing was typed", store)
	}
	e.log().Warn("secret source", "store", store, "err", err)
	return fmt.Sprintf("the value could not be read from %s; nothing was typed", store)
}

// says is what the result adds about a saved value: where it came from
// and how it was approved.
func (g *obtained) says(plan Plan) string {
	if !g.source {
		return ""
	}
	how := "approved in the prompt"
	switch g.how {
	case HowLease:
		how = "under a lease, with a notice and no prompt"
	case HowNone:
		how = "with a notice and no prompt (approval = none)"
	}
	return "; the value came from " + cmp.Or(plan.Store, "a saved source") + ", " + how
}

// keep does what a successful fill leaves behind: a typed value the person
// asked to remember goes to the OS keyring, and an approval under a lease
// policy starts the lease. It returns what the result adds.
func (e *Engine) keep(ctx context.Context, q PlanQuery, plan Plan, got *obtained) string {
	note := ""
	remembered := false
	stamp := plan.Stamp(got.account)
	if got.how == HowTyped && got.remember && e.Planner != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.Limits.InsertBudget)
		var err error
		stamp, err = e.Planner.Remember(rctx, q.Service, q.Field, got.account, got.value)
		cancel()
		got.zero()
		if err != nil {
			e.log().Warn("remember the typed value", "service", q.Service, "err", err)
			note += "; it was not remembered in the OS keyring: " + err.Error()
		} else {
			remembered = true
			note += "; it was remembered in the OS keyring, as the person asked"
		}
	}
	key := q.Agent.ProcessKey()
	if plan.Approval != ApprovalLease || e.Leases == nil || plan.Ask != "" || plan.Lease <= 0 ||
		(got.how != HowApproved && !remembered) {
		return note
	}
	if key == "" {
		return note + "; no lease was started: fillgate could not tell which process asked"
	}
	l := Lease{
		ID: NewLeaseID(), AgentKey: key, Agent: q.Agent.String(), Service: q.Service, Field: q.Field,
		Account: q.In.Account, Item: got.account, Stamp: stamp, Origin: q.In.Origin(), Via: q.Via, Watched: got.warned,
		Until: e.now().Add(min(plan.Lease, MaxLease)),
	}
	if err := e.Leases.Grant(l); err != nil {
		e.log().Error("grant a lease", "service", q.Service, "err", err)
		return note
	}
	return note + fmt.Sprintf("; the same agent process may fill it on this page again without a prompt until %s (a lease)", l.Until.Format(time.TimeOnly))
}
