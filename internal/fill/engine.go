package fill

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
)

// ErrBrowserGone is the cancellation cause a host uses when the browser
// side (the native port or the CDP connection) went away mid-request.
var ErrBrowserGone = errors.New("the browser disconnected")

// ErrAgentGone is the cancellation cause used when the agent's connection
// closed before the request finished.
var ErrAgentGone = errors.New("the agent disconnected")

// Limits are the Engine's budgets.
type Limits struct {
	PromptBudget  time.Duration // how long the human has; past it: no_response
	Cooldown      time.Duration // after no_response, how long the same agent may not re-ask for the service
	RateLimit     int           // requests per agent per RateWindow; 0 means no limit
	RateWindow    time.Duration
	InspectBudget time.Duration // how long the browser may take to inspect
	InsertBudget  time.Duration // how long the browser may take to insert
	FetchBudget   time.Duration // how long a saved value's source may take (a store's program runs up to 30 s)
	PasskeyWait   time.Duration // how long an armed tab waits for the page's WebAuthn call; 0: DefaultPasskeyWait
	// FallbackHint tells the agent what to do instead after no_response.
	FallbackHint string
}

// DefaultLimits are the budgets used where a policy sets none.
func DefaultLimits() Limits {
	return Limits{
		PromptBudget:  90 * time.Second,
		Cooldown:      10 * time.Minute,
		RateLimit:     6,
		RateWindow:    time.Minute,
		InspectBudget: 5 * time.Second,
		InsertBudget:  10 * time.Second,
		FetchBudget:   40 * time.Second,
		PasskeyWait:   DefaultPasskeyWait,
		FallbackHint: "do not ask again now: the human did not see or answer the prompt. " +
			"Ask them in your own interface to type the secret into the page themselves, " +
			"or to run the request again when they are at the browser",
	}
}

// Engine runs the fill flow: inspect → policy → plan (where the value
// comes from, how it is approved) → prompt, or a notice for a fill the
// person's policy lets run unasked → fetch a saved value → re-check and
// insert → result. It is safe for concurrent use.
type Engine struct {
	Browser  Browser
	Prompter Prompter
	// Native shows the native dialog; nil: none can be shown here.
	Native Native
	// PromptMode is where the person answers: PromptAuto (also ""),
	// PromptNative or PromptBrowser; the person's policy sets it.
	PromptMode string
	Policy     Policy
	State      State
	Limits     Limits
	// Planner says where the value comes from; nil: the person types it
	// every time.
	Planner Planner
	// Leases keeps leases; nil: a lease approves just the one fill.
	Leases Leases
	// Notifier shows the notice of a fill with no prompt; nil: every fill
	// is asked in the prompt.
	Notifier Notifier
	// CleanRoom logs in for a browser a program drives, in a browser
	// only fillgate holds; nil: none here, and such a browser is filled
	// only where the person's policy says driven = "in-page".
	CleanRoom CleanRoom
	// Bars keeps the services barred from the clean room (see Bars); nil
	// keeps none.
	Bars Bars
	// Passkeys keeps and uses the agents' passkeys; nil: passkey requests
	// are refused.
	Passkeys Passkeys
	Audit    Auditor      // optional
	Log      *slog.Logger // optional; never given a value
	// OnOutcome, if set, hears every result (the extension's popup history).
	OnOutcome func(Result)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Run runs one checked request for agent and returns its result.
// progress, if not nil, hears each phase. Run never returns the value and
// zeroes it on every path.
func (e *Engine) Run(ctx context.Context, req Checked, agent Agent, progress func(Progress)) Result {
	if progress == nil {
		progress = func(Progress) {}
	}
	sw := newStopwatch(e.log(), e.Browser.Via())
	// The prompt closes while the value is inserted (closing); the fill
	// returns only once it is closed, so no prompt outlives its request.
	var closing, ahead sync.WaitGroup
	if w, ok := e.CleanRoom.(RoomWarmer); ok {
		defer w.Discard() // a clean room's browser started for nothing
	}
	actx, stopAhead := context.WithCancel(ctx)
	res, how := e.fill(ctx, req, agent, progress, &run{sw: sw, closing: &closing, ahead: actx, aheadDone: &ahead})
	// What runs ahead of the fill (driveAhead) ends with it, before
	// Discard: a clean room it warmed once the fill had returned early
	// would start after the request and outlive it.
	stopAhead()
	ahead.Wait()
	closing.Wait()
	sw.lap("done")
	e.record(agent, res, how)
	return res
}

// Refused records res, the refusal of a request that did not pass the
// door (Check), as Run records its results: in the log, the audit log
// and OnOutcome.
func (e *Engine) Refused(agent Agent, res Result) {
	e.record(agent, res, "")
}

// record logs and audits the outcome res for agent, how its value was
// approved (How…, "" when nothing was inserted), and tells OnOutcome.
func (e *Engine) record(agent Agent, res Result, how string) {
	e.log().Info("fill finished", "agent", agent.String(), "service", res.Service,
		"origin", res.Origin, "field", res.Field, "via", res.Via, "status", string(res.Status), "detail", res.Detail)
	if e.Audit != nil {
		err := e.Audit.Record(AuditEntry{
			Time: e.now(), Agent: agent, Service: res.Service, Origin: res.Origin,
			Field: res.Field, Via: res.Via, Status: res.Status, Detail: res.Detail, How: how,
		})
		if err != nil {
			e.log().Error("audit log", "err", err)
		}
	}
	if e.OnOutcome != nil {
		e.OnOutcome(res)
	}
}

// fill runs the flow; it returns the result and how the value inserted
// was approved (How…, "" when nothing was inserted).
func (e *Engine) fill(ctx context.Context, checked Checked, agent Agent, progress func(Progress), rn *run) (Result, string) {
	sw := rn.sw
	req := checked.Request()
	field := req.Field
	r := Result{Service: req.Service, Field: field, Via: e.Browser.Via()}

	now := e.now()
	if until, ok := e.State.CoolingDown(agent.Key(), req.Service, now); ok {
		r.Fallback = e.Limits.FallbackHint
		return r.with(StatusRefused, fmt.Sprintf(
			"nobody answered the last prompt for %s from this agent; fillgate will not ask again before %s",
			req.Service, until.Format(time.TimeOnly))), ""
	}
	if !e.State.Allow(agent.Key(), now, e.Limits.RateLimit, e.Limits.RateWindow) {
		return r.with(StatusRefused, fmt.Sprintf(
			"too many requests from this agent: at most %d per %s", e.Limits.RateLimit, e.Limits.RateWindow)), ""
	}
	release, err := e.State.Claim(req.Service)
	if errors.Is(err, ErrBusy) {
		return r.with(StatusRefused, fmt.Sprintf(
			"a prompt for %s is already open, or a tab is armed for its passkey; answer or cancel it first", req.Service)), ""
	}
	if err != nil {
		return r.with(StatusFailed, fmt.Sprintf("cannot record the request: %v", err)), ""
	}
	defer release()
	sw.lap("checked")
	if field == FieldPasskey {
		return e.passkeyFill(ctx, checked, agent, progress, rn, r)
	}

	// Inspect (while the planner reads what is saved for the service).
	if w, ok := e.Planner.(Warmer); ok {
		w.Warm(ctx, req.Service, field)
	}
	progress(Progress{Phase: PhaseInspecting})
	drives := e.driveAhead(rn, checked)
	ictx, cancel := context.WithTimeout(ctx, e.Limits.InspectBudget)
	in, err := e.Browser.Inspect(ictx, req)
	cancel()
	sw.lap("inspected")
	if err != nil {
		status, own := ownStatus(err)
		detail := fmt.Sprintf("cannot inspect the browser tab: %v", e.cause(ctx, err))
		if own {
			detail = e.cause(ctx, err).Error() // it speaks for itself
		}
		return r.with(e.classify(ctx, status), detail), ""
	}
	r.Origin = in.Origin()
	in.Account = cleanAccount(in.Account)
	if in.Paused {
		return r.with(StatusRefused, "fills are paused in the fillgate extension; switch them back on in its toolbar popup"), ""
	}
	if ok, detail := e.Policy.Decide(checked, agent, in, e.Browser.Via()); !ok {
		return r.with(StatusRefused, detail), ""
	}
	then, ok, detail := e.Policy.ThenFor(checked, in)
	if !ok {
		return r.with(StatusRefused, detail), ""
	}

	// A browser a program can drive gets the value only where the person
	// allowed it, typed by them; otherwise the login happens in a clean
	// room, and what inserts is the room.
	var (
		target inserter = e.Browser
		room   Room
	)
	mode := e.drivenMode(checked, in, <-drives, rn)
	sw.lap("drive_checked")
	if mode == DrivenCleanRoom {
		var status Status
		room, in, status, detail = e.openRoom(ctx, checked, agent, in, then, progress)
		sw.lap("clean_room_opened")
		if status != "" {
			return r.with(status, detail), ""
		}
		defer room.Close()
		target = room
	}

	// Where the value comes from, and how it is approved.
	q := PlanQuery{Service: req.Service, Field: field, Agent: agent, In: in, Via: e.Browser.Via()}
	plan, err := e.planFor(ctx, q)
	if err != nil {
		return r.with(StatusFailed, "cannot work out where the value comes from: "+err.Error()), ""
	}
	if mode == DrivenInPage {
		plan = inPagePlan(plan)
	}
	sw.lap("planned")
	budget := e.Limits.PromptBudget
	if req.Timeout > 0 && req.Timeout < budget {
		budget = req.Timeout
	}
	got, status, detail := e.obtain(ctx, q, plan, obtainOpts{budget: budget, stays: then == ThenNone, mode: mode}, progress, rn)
	defer got.zero()
	if status != "" {
		if status == StatusNoResponse {
			// Whether the prompt was seen or not: the agent switches to
			// another way of asking, it does not raise a second prompt.
			r.Fallback = e.Limits.FallbackHint
			if err := e.State.NoteNoResponse(agent.Key(), req.Service, e.now().Add(e.Limits.Cooldown)); err != nil {
				e.log().Error("record cool-down", "err", err)
			}
		}
		return r.with(status, detail), ""
	}
	// A value the person did not type never stays in the page.
	keptThen := ""
	if got.source && then == ThenNone {
		then, keptThen = ThenSubmit, "; it was submitted although the agent asked to leave it in the field (then none): fillgate leaves only a value the person typed"
	}

	// Re-check, insert and, unless then is none, submit and leave nothing.
	progress(Progress{Phase: PhaseInserting})
	if got.source && got.value == nil {
		if err := e.fetch(ctx, q, plan, &got); err != nil {
			return r.with(e.classify(ctx, StatusFailed), e.fetchDetail(ctx, plan, err)), ""
		}
		sw.lap("fetched")
	}
	xctx, cancel := context.WithTimeout(ctx, e.Limits.InsertBudget)
	v, err := target.Insert(xctx, in, got.value, InsertOptions{Then: then})
	cancel()
	sw.lap("inserted")
	if !got.remember && room == nil {
		got.zero() // in a clean room, once the session was checked for it
	}
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return r.with(StatusFailed, "the browser did not confirm the insert in time; the value may or may not be in the field: check the page"), ""
		}
		return r.with(e.classify(ctx, StatusFailed), fmt.Sprintf("cannot insert: %v", e.cause(ctx, err))), ""
	}
	if !v.Inserted {
		return r.with(StatusRefused, "nothing was inserted: "+explain(v.Reason)), ""
	}
	r.Submitted, r.Navigated = &v.Submitted, &v.Navigated
	status, detail = afterInsert(v, field, then)
	if room != nil && status == StatusOK {
		inserted := detail
		status, detail = e.handedOver(ctx, room, &r, req.Service, field, got.value)
		if !got.remember {
			got.zero()
		}
		sw.lap("handed_over")
		if status != StatusOK && r.HandedOver == nil {
			detail = inserted + "; " + detail
		}
	}
	detail += got.says(plan) + keptThen
	if status == StatusOK {
		detail += e.keep(ctx, q, plan, &got)
	}
	return r.with(status, detail), got.how
}

// afterInsert turns the verdict of an insert that happened into the
// outcome and its detail.
func afterInsert(v Verdict, field, then string) (Status, string) {
	inserted := fmt.Sprintf("inserted into the focused %s field", field)
	visible := "the page, and any tool that reads it (an agent's browser tools included), can see the value in the field until it is submitted"
	if v.Unconfirmed {
		return StatusOK, inserted + "; the page went away during the fill (it navigated, or its frame or tab closed) and took the value with it, before fillgate could confirm the rest: check the page"
	}
	if !v.Matched {
		const short = "the field did not keep the whole value (a length limit or a page script changed it); nothing was submitted"
		if v.Remains {
			return StatusFailed, short + ", and " + visible + ": check the page"
		}
		return StatusFailed, short + ", and fillgate cleared the field; check the page"
	}
	switch {
	case then == ThenNone:
		return StatusOK, inserted + "; nothing was submitted (then none): " + visible
	case v.Remains:
		return StatusFailed, inserted + ", but the page put the value back after fillgate cleared it: " + visible + "; check the page"
	case v.Stopped == "no_submit":
		return StatusFailed, inserted + ", but " + stopped(v.Stopped, v.StoppedBy) + "; fillgate cleared the field: check the page, or ask with --then none and press the page's own sign-in control"
	case v.Stopped != "":
		return StatusFailed, inserted + ", but " + stopped(v.Stopped, v.StoppedBy) + "; fillgate cleared the field"
	case !v.Submitted:
		return StatusFailed, inserted + ", but the form was not submitted; fillgate cleared the field"
	case v.Navigated:
		return StatusOK, inserted + "; the form was submitted and the page navigated away"
	case v.Cleared:
		return StatusOK, inserted + "; the form was submitted, and as the page kept the field (a script handled the login, or it showed an error), fillgate cleared it"
	}
	return StatusOK, inserted + "; the form was submitted, and the page removed or emptied the field"
}

// stopped says why fillgate did not submit after an insert.
func stopped(reason, by string) string {
	switch reason {
	case "invalid":
		by = printable(by, 60)
		if by == "" {
			return "the form's own validation stopped the submit: a field is missing or invalid; fill it in, then ask again"
		}
		return fmt.Sprintf("the form's own validation stopped the submit at the field %q; fill it in, then ask again", by)
	case "button_disabled":
		return "the form's submit button is disabled, so it was not submitted"
	case "no_submit":
		return "there is no submit button to press and the form cannot be submitted with Enter alone (it has several text fields, or the field is in no form), and within 1 s of Enter the page showed no sign of a submit (no navigation, nothing changed)"
	case "form_changed":
		return "the page changed where its form sends the value after the insert, so fillgate did not submit it"
	case "not_matched":
		return "the field did not keep the whole value (a length limit or a page script changed it), so fillgate did not submit it"
	case "method_get":
		return "the form would have put the value in its URL (it names no method, so the browser submits it with GET), so fillgate stopped the submit"
	case "method_dialog":
		return "the form's submit only closes a dialog (method=dialog) and sends nothing, so nothing was submitted"
	}
	return "the form was not submitted (" + reason + ")"
}

// ownStatus returns the outcome an error carries, if it carries one (a
// browser may know that a failure is really a refusal, such as several
// candidate tabs); otherwise failed.
func ownStatus(err error) (Status, bool) {
	var se interface{ Status() Status }
	if errors.As(err, &se) {
		return se.Status(), true
	}
	return StatusFailed, false
}

// classify maps a failure after ctx ended: the browser going away is a
// failure, the agent going away a cancellation.
func (e *Engine) classify(ctx context.Context, otherwise Status) Status {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrBrowserGone):
		return StatusFailed
	case errors.Is(cause, ErrAgentGone):
		return StatusCancelled
	}
	return otherwise
}

// cause prefers the reason ctx ended over err, which is often just
// "context canceled".
func (e *Engine) cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && (errors.Is(c, ErrBrowserGone) || errors.Is(c, ErrAgentGone)) {
		return c
	}
	return err
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) log() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (r Result) with(s Status, detail string) Result {
	r.Status = s
	r.Detail = detail
	return r
}

// roundBudget shows a budget in whole seconds, or in tenths under one.
func roundBudget(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// printable keeps at most n printable runes of s, the page's own text
// (a field's label) that goes into a result.
func printable(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if n == 0 {
			break
		}
		if unicode.IsPrint(r) {
			b.WriteRune(r)
			n--
		}
	}
	return strings.TrimSpace(b.String())
}

// explain turns an in-page refusal reason into a sentence.
func explain(reason string) string {
	switch reason {
	case "paused":
		return "fills are paused in the fillgate extension"
	case "tab_gone":
		return "the tab was closed"
	case "origin_changed":
		return "the page navigated to another origin while the prompt was open"
	case "frame_changed":
		return "focus moved to another frame while the prompt was open"
	case "element_gone":
		return "the field is gone (the page navigated or re-rendered)"
	case "focus_moved":
		return "focus moved to another field while the prompt was open; click into the field and ask again"
	case "kind_changed":
		return "the focused field is no longer the kind that was shown in the prompt"
	case "not_usable":
		return "the field is no longer visible and enabled"
	case "form_changed":
		return "the page changed where the field's form sends the value while the prompt was open"
	case "page_left":
		return "the page began to leave (it navigated, or its frame or tab closed) before the value went in"
	case "":
		return "the page refused"
	}
	return "the page refused (" + reason + ")"
}
