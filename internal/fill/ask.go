package fill

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Bounds of the checks whether the browser can be driven.
const (
	// driveCheckBudget bounds one Browser.Drivable call.
	driveCheckBudget = 2 * time.Second
	// driveWatchEvery is how often an open loopback prompt checks
	// whether the browser became drivable.
	driveWatchEvery = 250 * time.Millisecond
)

// ask gets the person's answer where the policy's prompt mode says: in a
// native dialog outside the browser whenever anything but the person can
// drive the browser (PromptAuto), always (PromptNative), or in the
// loopback page (PromptBrowser, or PromptAuto when nothing can drive
// it). A loopback prompt of PromptAuto is watched while it is open and
// checked again when the answer arrives: if the browser became drivable,
// the page is closed, its answer discarded, and the person is asked in the
// native dialog for the rest of the budget. It returns the answer, or a
// status and detail when there is none.
//
// A browser a program can drive is one whose login page it can script
// too: the native dialog asked for that reason warns the person of it
// (info.Watched, set here), as it does for a tab a program is attached to.
func (e *Engine) ask(ctx context.Context, info *PromptInfo, progress func(Progress), rn *run) (Answer, Status, string) {
	// One deadline for the person, whichever surface asks.
	pctx, cancel := context.WithTimeout(ctx, info.Budget)
	defer cancel()
	deadline, _ := pctx.Deadline()
	switch e.PromptMode {
	case PromptBrowser:
		a, status, detail, _ := e.askPage(ctx, deadline, *info, false, progress, rn)
		return a, status, detail
	case PromptNative:
		return e.askNative(ctx, pctx, *info, "the policy has fillgate ask in a native dialog (prompt = \"native\")", progress, rn)
	}
	d := rn.drive
	if d == nil {
		dd := e.drivable(pctx)
		d = &dd
	}
	if d.Driven {
		info.Watched = !info.CleanRoom
		return e.askNative(ctx, pctx, *info, "the browser can be driven by a program ("+strings.Join(d.Reasons, "; ")+")", progress, rn)
	}
	a, status, detail, became := e.askPage(ctx, deadline, *info, true, progress, rn)
	if !became.Driven {
		return a, status, detail
	}
	e.log().Warn("the browser became drivable while the prompt was open", "reasons", strings.Join(became.Reasons, "; "))
	if rn.drivenSetting != DrivenInPage {
		// The login would now happen in a clean room, which this fill
		// did not open: the agent asks again.
		return Answer{}, StatusFailed, "a program began to drive the browser while the prompt was open (" + strings.Join(became.Reasons, "; ") +
			"), so the answer was discarded and nothing was inserted; ask again: fillgate then logs in in a clean room and hands the browser the session"
	}
	info.Watched, info.InPage = true, true
	return e.askNative(ctx, pctx, *info, "the browser became drivable by a program while the prompt was open ("+strings.Join(became.Reasons, "; ")+")", progress, rn)
}

// drivable asks the browser whether anything but the person can drive it;
// when it cannot tell, it can.
func (e *Engine) drivable(ctx context.Context) Drive {
	dctx, cancel := context.WithTimeout(ctx, driveCheckBudget)
	defer cancel()
	d, err := e.Browser.Drivable(dctx)
	if err != nil {
		return Drive{Driven: true, Reasons: []string{"fillgate could not tell whether a program drives it: " + err.Error()}}
	}
	return d
}

// askNative asks in the native dialog, until pctx ends. why says why the
// dialog is used, for the refusal when none can be shown.
func (e *Engine) askNative(ctx, pctx context.Context, info PromptInfo, why string, progress func(Progress), rn *run) (Answer, Status, string) {
	unavailable := func(err error) (Answer, Status, string) {
		return Answer{}, StatusRefused, fmt.Sprintf(
			"%s, so fillgate asks outside it, in a native dialog, and none can be shown here: %v; nothing was asked", why, err)
	}
	if e.Native == nil {
		return unavailable(errors.New("this fillgate has no native dialog for this system"))
	}
	if err := e.Native.Available(); err != nil {
		return unavailable(err)
	}
	if d, ok := pctx.Deadline(); ok {
		info.Budget = time.Until(d)
	}
	deadline, _ := pctx.Deadline()
	progress(Progress{Phase: PhaseWaiting, Deadline: deadline, Where: WhereDesktop})
	rn.sw.lap("dialog_started")
	a, err := e.Native.Ask(pctx, info)
	rn.sw.lap("answered")
	switch {
	case err == nil && a.Cancelled:
		a.Zero()
		return Answer{}, StatusCancelled, "the human cancelled the prompt"
	case err == nil:
		return a, "", ""
	case ctx.Err() != nil:
		return Answer{}, e.classify(ctx, StatusCancelled), e.cause(ctx, ctx.Err()).Error()
	case pctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return Answer{}, StatusNoResponse, fmt.Sprintf("nobody answered the prompt within %s; the request was dropped", roundBudget(info.Budget))
	}
	return Answer{}, StatusFailed, fmt.Sprintf("the native dialog ended without an answer: %v", err)
}

// askPage runs the loopback prompt until deadline. With watch, it checks
// whether the browser became drivable while the page is open and when
// the answer arrives; then it discards everything and reports the Drive.
//
// On an answer, the prompt's window closes, and then the prompt, in
// rn.closing while the caller goes on to insert; on anything else both are
// closed before askPage returns. The prompt's context lives until then: it
// holds the port the page came from for as long as the page may be on
// screen.
func (e *Engine) askPage(ctx context.Context, deadline time.Time, info PromptInfo, watch bool, progress func(Progress), rn *run) (_ Answer, _ Status, detail string, driven Drive) {
	sw := rn.sw
	pctx, cancel := context.WithDeadline(ctx, deadline)
	// The window closes first, then the prompt (which ends with pctx too):
	// it holds the port the page came from for as long as the page may be
	// on screen. Once answered, that goes on in rn.closing.
	var (
		p        Prompt
		win      PromptWindow
		answered bool
	)
	defer func() {
		end := func() {
			if win != nil {
				cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
				if err := win.Close(cctx); err != nil {
					e.log().Warn("close prompt window", "err", err)
				}
				cancel()
				sw.lap("prompt_closed")
			}
			if p != nil {
				p.Close()
			}
			cancel()
		}
		if answered {
			rn.closing.Go(end)
		} else {
			end()
		}
	}()

	var err error
	if p, err = e.Prompter(pctx, info); err != nil {
		p = nil
		return Answer{}, StatusFailed, fmt.Sprintf("cannot start the prompt: %v", err), Drive{}
	}
	sw.lap("prompt_started")
	if win, err = e.Browser.OpenPrompt(pctx, p.URL()); err != nil {
		win = nil
		return Answer{}, e.classify(ctx, StatusFailed), fmt.Sprintf("cannot open the prompt: %v", e.cause(ctx, err)), Drive{}
	}
	sw.lap("prompt_opened")
	progress(Progress{Phase: PhaseWaiting, Deadline: deadline, Where: WhereBrowser})

	type reply struct {
		a   Answer
		err error
	}
	wctx, stop := context.WithCancel(pctx)
	defer stop()
	replies := make(chan reply, 1)
	go func() {
		a, err := p.Wait(wctx)
		replies <- reply{a, err}
	}()
	// discard stops waiting; a reply that arrived after we stopped caring
	// has its value zeroed.
	discard := func() {
		stop()
		rep := <-replies
		rep.a.Zero()
	}
	var drove <-chan Drive
	if watch {
		drove = e.watchDrive(wctx)
	}

	var werr error
	select {
	case rep := <-replies:
		sw.lap("answered")
		if rep.err == nil {
			if rep.a.Cancelled {
				rep.a.Zero()
				return Answer{}, StatusCancelled, "the human cancelled the prompt", Drive{}
			}
			// The answer counts only if, as it arrived, still nothing
			// but the person could have given it.
			if watch {
				if d := e.drivable(ctx); d.Driven {
					rep.a.Zero()
					return Answer{}, "", "", d
				}
				sw.lap("rechecked")
			}
			answered = true
			return rep.a, "", "", Drive{}
		}
		werr = rep.err
	case d := <-drove:
		discard()
		return Answer{}, "", "", d
	case <-win.Closed():
		discard()
		return Answer{}, StatusCancelled, "the prompt window was closed without an answer", Drive{}
	case <-pctx.Done():
		discard()
	}
	switch {
	case ctx.Err() != nil:
		return Answer{}, e.classify(ctx, StatusCancelled), e.cause(ctx, ctx.Err()).Error(), Drive{}
	case pctx.Err() != nil || errors.Is(werr, context.DeadlineExceeded):
		return Answer{}, StatusNoResponse, fmt.Sprintf("nobody answered the prompt within %s; the request was dropped", roundBudget(info.Budget)), Drive{}
	case werr != nil:
		return Answer{}, StatusFailed, fmt.Sprintf("the prompt ended without an answer: %v", werr), Drive{}
	}
	return Answer{}, StatusFailed, "the prompt ended without an answer", Drive{}
}

// watchDrive checks, until ctx ends, whether the browser became drivable,
// and sends the first Drive that says so.
func (e *Engine) watchDrive(ctx context.Context) <-chan Drive {
	out := make(chan Drive, 1)
	go func() {
		t := time.NewTicker(driveWatchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if d := e.drivable(ctx); d.Driven && ctx.Err() == nil {
				out <- d
				return
			}
		}
	}()
	return out
}
