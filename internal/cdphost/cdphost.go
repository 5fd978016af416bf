// Package cdphost is the CDP fallback's host: when no browser with the
// fillgate extension takes a request (or the agent or the policy says
// so), the request runs in the agent's own fillgate process, which
// enforces the policy and reaches the browser over the Chrome DevTools
// Protocol. It stands beside nmhost, the host of a browser with the
// extension; both build the same fill flow (internal/engine).
package cdphost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/cleanroom"
	"github.com/fillgate/fillgate/internal/desktopnote"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/engine"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
	"github.com/fillgate/fillgate/internal/harden"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/logfile"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/websession"
)

// Options configures one request on the CDP path. None of it comes from a
// page, and the agent cannot use it to choose the CDP endpoint, the
// prompt or the policy.
type Options struct {
	// Client names the fillgate front end, for the prompt and the audit.
	Client string
	// Tab is a CDP target id; "" means the focused tab.
	Tab string
	// Env is the environment; it must be set.
	Env dirs.Env
	// FellBack says the agent asked for no path (auto) and no host
	// answered: a browser that cannot be reached then names both paths.
	FellBack bool
	// OnProgress hears each phase of the request.
	OnProgress func(fill.Progress)
	// OpenURL replaces the system opener (tests).
	OpenURL func(ctx context.Context, url string) error
}

// Run runs checked, under pol, in this process with the browser reached
// over CDP, and returns its result. It never returns an error, since
// every failure is a result the agent can branch on.
func Run(ctx context.Context, checked fill.Checked, pol *policy.Policy, o Options) fill.Result {
	req := checked.Request()
	env := o.Env
	stateDir, err := dirs.State(env)
	if err != nil {
		return failed(req, fmt.Sprintf("cannot find the state dir: %v", err))
	}
	runDir, err := dirs.Runtime(env)
	if err != nil {
		return failed(req, fmt.Sprintf("cannot find the runtime dir: %v", err))
	}
	log, closeLog, err := logfile.Open(stateDir, logfile.Debug(env), "pid", os.Getpid(), "role", "cdp")
	if err != nil {
		return failed(req, err.Error())
	}
	defer closeLog.Close()
	// From here on this process may hold a value.
	if err := harden.Process(); err != nil {
		log.Warn("harden", "err", err)
	}

	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	b := &lazyBrowser{ctx: ctx, lost: lost, fellBack: o.FellBack, connect: func(ctx context.Context) (*cdp.Browser, error) {
		ep, err := cdp.Resolve(env, pol.CDPURL)
		if err != nil {
			return nil, err
		}
		return cdp.Connect(ctx, ep, cdp.Options{
			AllowHosts: pol.CDPAllowHosts,
			Opener:     pol.PromptOpener,
			OpenURL:    o.OpenURL,
			Tab:        o.Tab,
		})
	}}
	defer func() {
		t0 := time.Now()
		b.Close()
		fill.LogTiming(log, time.Since(t0), "via", fill.ViaCDP, "step", "detached")
	}()

	st, err := fillstate.Open(filepath.Join(stateDir, "cdp"))
	if err != nil {
		return failed(req, fmt.Sprintf("cannot open the state dir: %v", err))
	}
	agent := agentid.Of(os.Getpid())
	agent.Via = o.Client
	e := engine.New(pol, engine.Parts{
		Browser: b,
		// One process per request: what outlives it is on disk.
		Store: st,
		// No extension runs on this path to show a browser notification:
		// the desktop's notification service shows the notice of a fill
		// with no prompt, and without one every fill is asked.
		Notifier: desktopnote.New(),
		// No passkeys: CDP's WebAuthn domain would hand the private key
		// to anyone on the debugging port.
		Passkeys: nil,
		Room:     cleanroom.Config{Driven: b, Dir: filepath.Join(runDir, "rooms")},
		Bars:     st,
		Audit:    audit.Open(stateDir),
		// No popup to show a history in: the log and the audit hear it.
		OnOutcome: nil,
		Env:       env,
		Keyring:   keychain.OS(),
		Log:       log,
	})
	return e.Run(ctx, checked, agent, o.OnProgress)
}

// lazyBrowser is the browser over CDP, connected on the first Inspect:
// the Engine checks the cool-down, the rate and the one-prompt rule before
// anything is dialled, and a browser that cannot be reached is an audited
// outcome like any other. The Engine calls it from one goroutine.
type lazyBrowser struct {
	ctx      context.Context         // the request's
	lost     context.CancelCauseFunc // ends ctx when the browser goes away
	connect  func(context.Context) (*cdp.Browser, error)
	fellBack bool
	b        *cdp.Browser
}

func (l *lazyBrowser) Via() string { return fill.ViaCDP }

func (l *lazyBrowser) Inspect(ctx context.Context, req fill.Request) (fill.Inspection, error) {
	if l.b == nil {
		b, err := l.connect(ctx)
		if err != nil {
			return fill.Inspection{}, connectError{err, l.fellBack}
		}
		l.b = b
		go func() {
			select {
			case <-b.Lost():
				l.lost(fill.ErrBrowserGone)
			case <-l.ctx.Done():
			}
		}()
	}
	return l.b.Inspect(ctx, req)
}

func (l *lazyBrowser) OpenPrompt(ctx context.Context, url string) (fill.PromptWindow, error) {
	return l.b.OpenPrompt(ctx, url)
}

// Drivable implements fill.Browser: the CDP path always is.
func (l *lazyBrowser) Drivable(ctx context.Context) (fill.Drive, error) {
	if l.b == nil {
		return fill.Drive{Driven: true, Reasons: []string{"fillgate reaches it over the DevTools Protocol"}}, nil
	}
	return l.b.Drivable(ctx)
}

func (l *lazyBrowser) Insert(ctx context.Context, in fill.Inspection, value []byte, opt fill.InsertOptions) (fill.Verdict, error) {
	return l.b.Insert(ctx, in, value, opt)
}

// Tab implements cleanroom.Driven.
func (l *lazyBrowser) Tab(ctx context.Context, in fill.Inspection) (websession.Tab, error) {
	return l.b.Tab(ctx, in)
}

// SiteCookies implements cleanroom.Driven.
func (l *lazyBrowser) SiteCookies(ctx context.Context, in fill.Inspection, site string) ([]websession.Cookie, error) {
	return l.b.SiteCookies(ctx, in, site)
}

// HandOver implements cleanroom.Driven.
func (l *lazyBrowser) HandOver(ctx context.Context, in fill.Inspection, s websession.Session) (websession.Shown, error) {
	return l.b.HandOver(ctx, in, s)
}

// Close detaches from the browser, if it was reached.
func (l *lazyBrowser) Close() {
	if l.b != nil {
		_ = l.b.Close()
	}
}

// connectError is a CDP path that could not start. It says how to fix it
// and, after an automatic fallback, names both paths; its status is the CDP
// error's (an endpoint that is not allowed is refused, not failed).
type connectError struct {
	err      error
	fellBack bool
}

func (e connectError) Status() fill.Status {
	var ce *cdp.Error
	if errors.As(e.err, &ce) {
		return ce.Status()
	}
	return fill.StatusFailed
}

func (e connectError) Error() string {
	detail := e.err.Error()
	if e.fellBack {
		detail = "no browser with the fillgate extension is running, and the CDP fallback did not work either: " + detail
	}
	if e.Status() == fill.StatusFailed {
		detail += "; to fix: load the fillgate extension in your browser (`fillgate install`, then `fillgate doctor`), " +
			"or start the browser with --remote-debugging-port=9222 (or point FILLGATE_CDP_URL at it)"
	}
	return detail
}

func (e connectError) Unwrap() error { return e.err }

func failed(req fill.Request, detail string) fill.Result {
	return fill.Result{Status: fill.StatusFailed, Service: req.Service, Via: fill.ViaCDP, Detail: detail}
}
