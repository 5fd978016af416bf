package fill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/fillgate/fillgate/internal/passkey"
)

// A passkey request (Field FieldPasskey) signs the agent in with a
// passkey of its own, or, with Enrol, adds one: the policy and the
// approval are a password fill's (each, lease, none with a notice; an
// enrolment is always asked), then the tab is armed for the page's one
// WebAuthn call, which passkey.Judge checks and the host's Passkeys
// answer. The private key never leaves Passkeys.

// PasskeyBrowser is a Browser that can arm a tab for one WebAuthn call
// (the extension; the CDP path cannot).
type PasskeyBrowser interface {
	// ArmPasskey arms a.Tab's top frame for one call of a.Ceremony on
	// a.Origin until a.Deadline, calls armed (if not nil) once the
	// browser has armed it, and returns the call as the browser saw it;
	// rpID is for the extension's bookkeeping.
	ArmPasskey(ctx context.Context, a passkey.Arm, rpID string, armed func()) (passkey.Call, error)
	// AnswerPasskey hands the page the response to its call.
	AnswerPasskey(ctx context.Context, request string, r PasskeyResponse) error
	// RefusePasskey ends the page's call in NotAllowedError.
	RefusePasskey(ctx context.Context, request string) error
	// PassPasskey lets the browser's own WebAuthn answer the call.
	PassPasskey(ctx context.Context, request string) error
}

// PasskeyResponse is what the page's call is answered with: a get()'s
// assertion (Signature, UserHandle) or a create()'s attestation
// (AttestationObject, PublicKey as SPKI). It never holds a private key.
type PasskeyResponse struct {
	ID                []byte
	ClientDataJSON    []byte
	AuthenticatorData []byte
	Signature         []byte
	UserHandle        []byte
	AttestationObject []byte
	PublicKey         []byte
}

// Passkeys is where the agents' passkeys are kept and used (the OS
// keyring): the private key never leaves it. Its errors hold no key.
type Passkeys interface {
	// Lookup returns the relying party and credential id of the passkey
	// kept for service and account.
	Lookup(ctx context.Context, service, account string) (passkey.Stored, error)
	// Enrol makes a passkey, keeps it under service and account and
	// returns the page's attestation.
	Enrol(ctx context.Context, service, account string, o passkey.Origin, rp passkey.RPID, userHandle, challenge []byte, p passkey.Presence) (PasskeyResponse, error)
	// Sign signs one sign-in with the passkey kept for service and
	// account.
	Sign(ctx context.Context, service, account string, o passkey.Origin, rp passkey.RPID, challenge []byte, p passkey.Presence) (PasskeyResponse, error)
}

// DefaultPasskeyWait is how long an armed tab waits for the page's call
// when Limits.PasskeyWait is not set.
const DefaultPasskeyWait = time.Minute

// noPasskeysHere is the refusal on a path that cannot arm a tab.
const noPasskeysHere = "passkeys need the fillgate extension in the person's browser: the DevTools Protocol path never offers them " +
	"(its WebAuthn domain would hand the private key to anyone on the debugging port); nothing was asked"

// passkeyFill runs a passkey request after the cool-down, rate and busy
// checks of Run.
func (e *Engine) passkeyFill(ctx context.Context, checked Checked, agent Agent, progress func(Progress), rn *run, r Result) (Result, string) {
	req := checked.Request()
	pb, ok := e.Browser.(PasskeyBrowser)
	if !ok || e.Passkeys == nil {
		return r.with(StatusRefused, noPasskeysHere), ""
	}
	progress(Progress{Phase: PhaseInspecting})
	ictx, cancel := context.WithTimeout(ctx, e.Limits.InspectBudget)
	in, err := e.Browser.Inspect(ictx, Request{Service: req.Service, Field: FieldPassword, Tab: req.Tab})
	cancel()
	rn.sw.lap("inspected")
	if err != nil {
		status, own := ownStatus(err)
		detail := fmt.Sprintf("cannot inspect the browser tab: %v", e.cause(ctx, err))
		if own {
			detail = e.cause(ctx, err).Error()
		}
		return r.with(e.classify(ctx, status), detail), ""
	}
	if len(in.Origins) == 0 {
		return r.with(StatusFailed, "the browser reported no origin for the tab"), ""
	}
	// The tab's top page: only it is ever armed.
	page := Inspection{Tab: in.Tab, Origins: in.Origins[len(in.Origins)-1:], Field: FieldInfo{Kind: FieldNone}, Paused: in.Paused, Watched: in.Watched}
	r.Origin = page.Origin()
	if page.Paused {
		return r.with(StatusRefused, "fills are paused in the fillgate extension; switch them back on in its toolbar popup"), ""
	}
	if ok, detail := e.Policy.Decide(checked, agent, page, e.Browser.Via()); !ok {
		return r.with(StatusRefused, detail), ""
	}
	// In a browser a program drives, the program can make the armed call
	// itself: only where the person allowed that, and each time in the
	// dialog.
	mode := e.drivenMode(checked, page, e.drivable(ctx), rn)
	if mode == DrivenCleanRoom {
		return r.with(StatusRefused, fmt.Sprintf("a program drives this browser, and it could make the page's passkey call itself "+
			"once the tab is armed; fillgate uses the agents' passkey there only where you allowed it: set driven = \"in-page\" for %s in "+
			"your policy, and approve each use in the dialog (never under a lease or approval = \"none\")", req.Service)), ""
	}
	inPage := mode == DrivenInPage
	q := PlanQuery{Service: req.Service, Field: FieldPasskey, Agent: agent, In: page, Via: e.Browser.Via()}
	if req.Enrol {
		return e.passkeyEnrol(ctx, pb, q, req, progress, rn, r)
	}
	plan, err := e.planFor(ctx, q)
	if err != nil {
		return r.with(StatusFailed, "cannot work out which passkey to use: "+err.Error()), ""
	}
	switch {
	case !plan.Saved:
		return r.with(StatusFailed, plan.Unsaved), ""
	case len(plan.Accounts) > 0:
		return r.with(StatusRefused, fmt.Sprintf("several passkeys of the agents' are kept for %s; fillgate uses one only when it is the service's one passkey (forget the others with `fillgate forget --service %s --field passkey --account ACCOUNT`)", req.Service, req.Service)), ""
	}
	if inPage {
		plan.Approval = ApprovalEach // the person approves each use, in the dialog
	}
	rn.sw.lap("planned")
	kept, err := e.Passkeys.Lookup(ctx, req.Service, plan.Account)
	if err != nil {
		return r.with(e.classify(ctx, StatusFailed), "the agents' passkey could not be read from the OS keyring: "+err.Error()), ""
	}

	// Approval: a lease or approval = none with a notice, else the person.
	got := obtained{source: true, account: plan.Account}
	if how, ok := e.unpromptedPasskey(q, plan); ok {
		nctx, cancel := context.WithTimeout(ctx, e.Limits.InspectBudget)
		err := e.Notifier.Notify(nctx, e.passkeyNotice(q, how))
		cancel()
		rn.sw.lap("notified")
		if err == nil {
			got.how = how
		} else {
			e.log().Warn("no notice could be shown for a passkey use with no prompt; asking instead", "err", err)
		}
	} else if plan.Approval == ApprovalNone {
		return r.with(StatusFailed, "the policy uses the passkey with no prompt (approval = none), but no notice can be shown; nothing was signed"), ""
	}
	if got.how == "" {
		info := PromptInfo{Agent: agent, Service: req.Service, Origin: page.Origin(), Field: FieldPasskey, Via: q.Via,
			Account: plan.Account, From: "from the OS keyring", Watched: page.Watched || inPage, InPage: inPage}
		if status, detail := e.askPasskey(ctx, info, req, progress, rn); status != "" {
			return e.unanswered(agent, req.Service, r, status, detail), ""
		}
		got.how, got.warned = HowApproved, page.Watched
	}

	ctx, armed, stop := e.detachable(ctx, req, r, progress)
	defer stop()
	call, arm, res, done := e.armPasskey(ctx, pb, q, passkey.Get, plan.Account, req, armed, progress, r)
	if done {
		return res, ""
	}
	rn.sw.lap("called")
	v := passkey.Judge(arm, call, &kept)
	if res, done := e.notOurs(ctx, pb, call, v, r); done {
		return res, ""
	}
	presence, err := passkey.CallPresence(got.how == HowApproved, call.UserVerification)
	if err != nil {
		e.verdict(ctx, pb.RefusePasskey, call.ID)
		return r.with(StatusRefused, err.Error()+"; the page's call was refused"), ""
	}
	resp, err := e.Passkeys.Sign(ctx, req.Service, plan.Account, v.Origin, v.RP, call.Challenge, presence)
	if err != nil {
		e.verdict(ctx, pb.RefusePasskey, call.ID)
		return r.with(e.classify(ctx, StatusFailed), "the agents' passkey could not sign: "+err.Error()+"; the page's call was refused"), ""
	}
	rn.sw.lap("signed")
	if err := pb.AnswerPasskey(ctx, call.ID, resp); err != nil {
		return r.with(e.classify(ctx, StatusFailed), fmt.Sprintf("cannot answer the page: %v", e.cause(ctx, err))), ""
	}
	rn.sw.lap("answered")
	detail := fmt.Sprintf("answered the page's passkey sign-in on %s with the agents' passkey, %s; the page completes its own login", v.Origin, passkeyHow(got.how))
	return r.with(StatusOK, detail+e.keep(ctx, q, plan, &got)), got.how
}

// passkeyEnrol adds a passkey: always asked of the person, then the
// tab is armed for the site's create().
func (e *Engine) passkeyEnrol(ctx context.Context, pb PasskeyBrowser, q PlanQuery, req Request, progress func(Progress), rn *run, r Result) (Result, string) {
	info := PromptInfo{Agent: q.Agent, Service: q.Service, Origin: q.In.Origin(), Field: FieldPasskey, Via: q.Via,
		Account: req.Account, Enrol: true, Watched: q.In.Watched}
	if rn.drive != nil && rn.drive.Driven { // here only where the person allowed in-page use
		info.Watched, info.InPage = true, true
	}
	if status, detail := e.askPasskey(ctx, info, req, progress, rn); status != "" {
		return e.unanswered(q.Agent, q.Service, r, status, detail), ""
	}
	call, arm, res, done := e.armPasskey(ctx, pb, q, passkey.Create, req.Account, req, nil, progress, r)
	if done {
		return res, ""
	}
	var kept *passkey.Stored
	if k, err := e.Passkeys.Lookup(ctx, q.Service, req.Account); err == nil {
		kept = &k
	}
	v := passkey.Judge(arm, call, kept)
	if res, done := e.notOurs(ctx, pb, call, v, r); done {
		return res, ""
	}
	resp, err := e.Passkeys.Enrol(ctx, q.Service, req.Account, v.Origin, v.RP, call.UserHandle, call.Challenge,
		passkey.Presence{UserPresent: true, UserVerified: true})
	if err != nil {
		e.verdict(ctx, pb.RefusePasskey, call.ID)
		return r.with(e.classify(ctx, StatusFailed), "the passkey could not be kept in the OS keyring: "+err.Error()+"; the page's call was refused"), ""
	}
	if err := pb.AnswerPasskey(ctx, call.ID, resp); err != nil {
		return r.with(e.classify(ctx, StatusFailed), fmt.Sprintf("cannot answer the page: %v", e.cause(ctx, err))), ""
	}
	return r.with(StatusOK, fmt.Sprintf("added a passkey for your agents on %s (relying party %s), approved in the prompt; the site should list it now", v.Origin, v.RP)), HowApproved
}

// askPasskey asks the person to approve a passkey's use or enrolment, in
// the native dialog only: a passkey's approval is one click, and one in a
// browser page is one a program driving that browser could make.
func (e *Engine) askPasskey(ctx context.Context, info PromptInfo, req Request, progress func(Progress), rn *run) (Status, string) {
	budget := e.Limits.PromptBudget
	if req.Timeout > 0 && req.Timeout < budget {
		budget = req.Timeout
	}
	info.Budget = budget
	pctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	a, status, detail := e.askNative(ctx, pctx, info, "a passkey of the agents' is approved outside every browser", progress, rn)
	defer a.Zero()
	switch {
	case status != "":
		return status, detail
	case !a.Approved || len(a.Value) > 0:
		return StatusFailed, "the prompt's answer approved nothing; nothing was signed"
	}
	return "", ""
}

// unanswered is the result of a passkey prompt with no approval; a prompt
// nobody answered starts the cool-down, as for a fill.
func (e *Engine) unanswered(agent Agent, service string, r Result, status Status, detail string) Result {
	if status == StatusNoResponse {
		r.Fallback = e.Limits.FallbackHint
		if err := e.State.NoteNoResponse(agent.Key(), service, e.now().Add(e.Limits.Cooldown)); err != nil {
			e.log().Error("record cool-down", "err", err)
		}
	}
	return r.with(status, detail)
}

// detachable returns the context a passkey sign-in goes on under, the
// function to call once the tab is armed (nil: nothing to do) and the one
// that lets the context go. For a NoWait request, armed answers the agent
// with StatusArmed, and from then on the agent's hang-up no longer ends
// the request: the arm's deadline, the page's call and the host's own end
// (ctx ending for any other cause) still do.
func (e *Engine) detachable(ctx context.Context, req Request, r Result, progress func(Progress)) (context.Context, func(time.Time), func()) {
	if !req.NoWait {
		return ctx, nil, func() {}
	}
	var detached atomic.Bool
	dctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(ctx, func() {
		if cause := context.Cause(ctx); !detached.Load() || !errors.Is(cause, ErrAgentGone) {
			cancel(cause)
		}
	})
	armed := func(deadline time.Time) {
		detached.Store(true)
		early := r.with(StatusArmed, fmt.Sprintf("the tab is armed for one passkey sign-in on %s until %s (%s): click the page's passkey button now, or let the page ask; "+
			"fillgate answers that one call with the agents' passkey and the page completes its own login (the outcome goes to fillgate's audit log)",
			r.Origin, deadline.Format(time.TimeOnly), roundBudget(deadline.Sub(e.now()))))
		progress(Progress{Phase: PhaseArmed, Deadline: deadline, Result: &early})
	}
	return dctx, armed, func() { unhook(); cancel(nil) }
}

// armPasskey arms the tab for the page's call and waits for it; done
// with the result when none came. armed, if not nil, hears the arm's
// deadline once the browser has armed the tab.
func (e *Engine) armPasskey(ctx context.Context, pb PasskeyBrowser, q PlanQuery, c passkey.Ceremony, account string, req Request, armed func(time.Time), progress func(Progress), r Result) (passkey.Call, passkey.Arm, Result, bool) {
	wait := e.Limits.PasskeyWait
	if wait <= 0 {
		wait = DefaultPasskeyWait
	}
	if req.Timeout > 0 && req.Timeout < wait {
		wait = req.Timeout
	}
	arm := passkey.Arm{ID: newArmID(), Tab: q.In.Tab, Ceremony: c, Service: q.Service, Account: account,
		Origin: q.In.Origin(), Deadline: e.now().Add(wait)}
	progress(Progress{Phase: PhaseInserting, Deadline: arm.Deadline})
	actx, cancel := context.WithDeadline(ctx, arm.Deadline)
	defer cancel()
	var onArmed func()
	if armed != nil {
		onArmed = func() { armed(arm.Deadline) }
	}
	call, err := pb.ArmPasskey(actx, arm, "", onArmed)
	what := "get()"
	if c == passkey.Create {
		what = "create()"
	}
	switch {
	case err == nil:
		return call, arm, r, false
	case ctx.Err() != nil:
		return call, arm, r.with(e.classify(ctx, StatusCancelled), e.cause(ctx, ctx.Err()).Error()), true
	case actx.Err() != nil:
		return call, arm, r.with(StatusNoResponse, fmt.Sprintf("the page did not call navigator.credentials.%s within %s of the tab being armed; nothing was signed", what, roundBudget(wait))), true
	}
	status, own := ownStatus(err)
	if own {
		return call, arm, r.with(status, err.Error()), true
	}
	return call, arm, r.with(StatusFailed, fmt.Sprintf("the tab was not armed for the page's %s: %v; nothing was signed", what, e.cause(ctx, err))), true
}

// notOurs hands a call Judge did not answer to the browser (Pass) or
// refuses it, and says so; done is false for an answer.
func (e *Engine) notOurs(ctx context.Context, pb PasskeyBrowser, call passkey.Call, v passkey.Verdict, r Result) (Result, bool) {
	switch v.Outcome {
	case passkey.Answer:
		return r, false
	case passkey.Refuse:
		e.verdict(ctx, pb.RefusePasskey, call.ID)
		return r.with(StatusRefused, v.Reason+"; the page's call was refused"), true
	}
	e.verdict(ctx, pb.PassPasskey, call.ID)
	return r.with(StatusRefused, v.Reason+"; fillgate did not answer it and let the browser's own passkeys answer"), true
}

// verdict sends a refusal or a pass, logging a failure (the page's call
// falls through to the browser on its own soon after).
func (e *Engine) verdict(ctx context.Context, send func(context.Context, string) error, request string) {
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.Limits.InspectBudget)
	defer cancel()
	if err := send(vctx, request); err != nil {
		e.log().Warn("passkey verdict", "err", err)
	}
}

// unpromptedPasskey is unprompted for a passkey: approval none, or a live
// lease on the same passkey for this agent process and origin.
func (e *Engine) unpromptedPasskey(q PlanQuery, plan Plan) (string, bool) {
	if e.Notifier == nil {
		return "", false
	}
	switch plan.Approval {
	case ApprovalNone:
		return HowNone, true
	case ApprovalLease:
		if item, ok := e.liveLease(q, plan); ok && item == plan.Account {
			return HowLease, true
		}
	}
	return "", false
}

// passkeyNotice is what the person sees for a passkey use with no prompt.
func (e *Engine) passkeyNotice(q PlanQuery, how string) Notice {
	why := "the policy uses it with no prompt (approval = none)"
	if how == HowLease {
		why = "under the lease you approved"
	}
	return Notice{
		Title:   "fillgate is signing in with the agents' passkey for " + printable(q.Service, 100),
		Message: fmt.Sprintf("Asked by %s, on %s; %s.", printable(q.Agent.String(), 120), printable(q.In.Origin(), 120), why),
	}
}

// passkeyHow says how a passkey's use was approved, for the result.
func passkeyHow(how string) string {
	switch how {
	case HowLease:
		return "under a lease, with a notice and no prompt"
	case HowNone:
		return "with a notice and no prompt (approval = none)"
	}
	return "approved in the prompt"
}

// newArmID returns a fresh random request id for an arm.
func newArmID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}
