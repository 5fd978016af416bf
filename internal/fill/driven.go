package fill

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fillgate/fillgate/internal/leakcheck"
	"github.com/fillgate/fillgate/internal/wording"
)

// A browser a program can drive (the agent's browser tools, a debugging
// port, automation; the CDP path always) is the program's: its pages'
// scripts, its extension pages and the DevTools traffic are all within
// its reach. The value goes into it only where the person allowed that
// (DrivenInPage) and typed the value themselves; otherwise the login
// happens in a clean room and the browser is handed the session.

// roomBudget bounds opening a clean room: its browser's start, the page
// loaded again, the field found and inspected.
const roomBudget = 45 * time.Second

// handoverBudget bounds following a login to its end in the clean room and
// handing its session over.
const handoverBudget = 60 * time.Second

// BarFor is how long a service whose clean-room login left the value
// where the driven browser would get it is barred from the clean room.
const BarFor = 24 * time.Hour

// inserter is what inserts the value: the browser, or a clean room.
type inserter interface {
	Insert(ctx context.Context, in Inspection, value []byte, opt InsertOptions) (Verdict, error)
}

// driveAhead finds out, while the page is inspected, whether a program
// can drive the browser, and when one can and the person's policy logs in
// to the service in a clean room, starts the room's browser at once, so
// the room is up, or nearly, once the inspection is. The channel gets the
// Drive. It runs in rn's ahead context, and Run waits for it: it never
// warms a room once the request is over.
func (e *Engine) driveAhead(rn *run, checked Checked) <-chan Drive {
	ctx := rn.ahead
	out := make(chan Drive, 1)
	rn.aheadDone.Go(func() {
		d := e.drivable(ctx)
		if w, ok := e.CleanRoom.(RoomWarmer); ok && d.Driven && ctx.Err() == nil {
			service := Inspection{Origins: []string{"https://" + checked.Request().Service}}
			if e.Policy.DrivenMode(checked, service) == DrivenCleanRoom {
				w.Warm(ctx)
			}
		}
		out <- d
	})
	return out
}

// drivenMode says how the fill goes for the inspected page: "" when
// nothing but the person can drive the browser (d), else the person's
// DrivenCleanRoom or DrivenInPage. What drives it is kept for the
// prompt's choice of where to ask.
func (e *Engine) drivenMode(checked Checked, in Inspection, d Drive, rn *run) string {
	rn.drive = &d
	rn.drivenSetting = e.Policy.DrivenMode(checked, in)
	if !d.Driven {
		return ""
	}
	return rn.drivenSetting
}

// openRoom starts the clean room for the driven tab in names and checks
// what it opened there as the driven page was checked. It returns the
// room and its inspection, or a status and detail.
func (e *Engine) openRoom(ctx context.Context, checked Checked, agent Agent, in Inspection, then string, progress func(Progress)) (Room, Inspection, Status, string) {
	req := checked.Request()
	if then == ThenNone {
		return nil, Inspection{}, StatusRefused, fmt.Sprintf(
			"a program drives this browser, so fillgate logs in for it in a clean room (a browser of its own) and hands it the session; "+
				"nothing stays in the agent's page there, so the value cannot be left in the field (then none). Ask without then none, or, "+
				"to type into that browser with your consent, set driven = \"in-page\" for %s in your policy", req.Service)
	}
	if e.Bars != nil {
		if until, ok := e.Bars.Barred(req.Service, e.now()); ok {
			return nil, Inspection{}, StatusRefused, fmt.Sprintf(
				"a login to %s in fillgate's clean room left the value where the agent's browser would have read it (a cookie, its web storage or its address), "+
					"so fillgate logs in to it in a clean room again only after %s; nothing was asked. To type into the agent's browser instead, with your consent, "+
					"set driven = \"in-page\" for %s in your policy", req.Service, until.Format(time.DateTime), req.Service)
		}
	}
	if e.CleanRoom == nil {
		return nil, Inspection{}, StatusRefused, fmt.Sprintf(
			"a program drives this browser, so fillgate would log in for it in a clean room, and this fillgate has none here; "+
				"to type into that browser with your consent, set driven = \"in-page\" for %s in your policy", req.Service)
	}
	progress(Progress{Phase: PhaseCleanRoom})
	octx, cancel := context.WithTimeout(ctx, roomBudget)
	defer cancel()
	room, rin, err := e.CleanRoom.Open(octx, req, in)
	if err != nil {
		status, own := ownStatus(err)
		if own {
			return nil, Inspection{}, e.classify(ctx, status), e.cause(ctx, err).Error()
		}
		if ctx.Err() == nil && octx.Err() != nil {
			return nil, Inspection{}, StatusFailed, fmt.Sprintf("fillgate's clean room did not open the page within %s; nothing was asked", roomBudget)
		}
		return nil, Inspection{}, e.classify(ctx, StatusFailed), fmt.Sprintf("cannot log in in fillgate's clean room: %v; nothing was asked", e.cause(ctx, err))
	}
	if rin.Origin() != in.Origin() {
		room.Close()
		return nil, Inspection{}, StatusRefused, fmt.Sprintf(
			"opened again in fillgate's clean room, the agent's page went to %s instead of %s; nothing was asked", rin.Origin(), in.Origin())
	}
	// The room's page is inspected over CDP, and so reads as watched; but
	// nothing but fillgate watches it (a lease granted for it, or in a
	// browser nothing drives, covers it).
	rin.Watched = false
	rin.Account = cleanAccount(rin.Account)
	if rin.Account == "" {
		rin.Account = in.Account
	}
	if ok, detail := e.Policy.Decide(checked, agent, rin, e.Browser.Via()); !ok {
		room.Close()
		return nil, Inspection{}, StatusRefused, "in fillgate's clean room: " + detail
	}
	return room, rin, "", ""
}

// handedOver hands the clean room's session to the driven tab after an
// insert that went well, and says so.
func (e *Engine) handedOver(ctx context.Context, room Room, r *Result, service, field string, value []byte) (Status, string) {
	hctx, cancel := context.WithTimeout(ctx, handoverBudget)
	defer cancel()
	h, err := room.HandOver(hctx, func(data string) bool { return leakcheck.Carries(data, value) })
	if errors.Is(err, ErrValueKept) && e.Bars != nil {
		if berr := e.Bars.Bar(service, e.now().Add(BarFor)); berr != nil {
			e.log().Error("bar the service from the clean room", "err", berr)
		}
	}
	if err != nil {
		status, own := ownStatus(err)
		if own {
			return e.classify(ctx, status), e.cause(ctx, err).Error()
		}
		return e.classify(ctx, StatusFailed), fmt.Sprintf("logged in in fillgate's clean room, but the session could not be handed to the agent's browser: %v", e.cause(ctx, err))
	}
	handed := true
	r.HandedOver, r.TabOrigin = &handed, h.TabOrigin
	what := fmt.Sprintf("%d cookie", h.Cookies)
	if h.Cookies != 1 {
		what += "s"
	}
	if h.Storage {
		what += " and the site's web storage"
	}
	said := fmt.Sprintf("logged in in fillgate's clean room (a browser of its own: the %s never entered the agent's browser) "+
		"and handed the session to the agent's tab (%s), which now shows %s", wording.FieldNoun(field), what, h.TabOrigin)
	if h.LoginShown {
		return StatusFailed, said + ", but still with the login form: the session did not hold in that browser (the site may bind " +
			"sessions to the browser they were made in). To have fillgate type into that browser instead, set driven = \"in-page\" for " +
			service + " in your policy"
	}
	if h.Next != "" {
		said += "; the site asks for a " + wording.FieldNoun(h.Next) + " next: focus its field and ask with --field otp"
	}
	return StatusOK, said
}

// inPagePlan keeps, for a browser a program drives where the person
// allowed in-page fills, only what they type: no saved value, no lease,
// no fill without a prompt.
func inPagePlan(p Plan) Plan {
	return Plan{Approval: ApprovalEach, Remember: p.Remember}
}
