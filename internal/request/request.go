// Package request is the agent's side of a request: `fillgate fill` and the
// MCP tool call it. It asks a running host over the agent socket and, when
// no host answers (or the agent or the policy says so), runs the fill
// itself through the CDP fallback.
package request

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/cleanroom"
	"github.com/fillgate/fillgate/internal/desktopnote"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
	"github.com/fillgate/fillgate/internal/harden"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/logfile"
	"github.com/fillgate/fillgate/internal/nativeprompt"
	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/internal/planner"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/websession"
)

// Options configures one request. None of it comes from a page, and the
// agent cannot use it to choose the CDP endpoint, the prompt or the policy.
type Options struct {
	// Via is auto (or ""), extension or cdp; auto defers to the policy.
	Via string
	// Client names the fillgate front end, for the prompt and the audit:
	// "fillgate fill" or "fillgate mcp".
	Client string
	// Tab is a CDP target id for the CDP path.
	Tab string
	// Socket, when set, is the one agent socket to ask (a forwarded
	// socket of a browser on another machine); "" means the user's own
	// socket directory. With a socket named there is no CDP fallback: the
	// browser is elsewhere.
	Socket string
	// Env is the environment; nil means os.Getenv.
	Env dirs.Env
	// OnProgress hears each phase of the request.
	OnProgress func(fill.Progress)
	// OpenURL replaces the system opener of the CDP path (tests).
	OpenURL func(ctx context.Context, url string) error
}

// Paths a request may take.
const (
	ViaAuto      = "auto"
	ViaExtension = fill.ViaExtension
	ViaCDP       = fill.ViaCDP
)

// Fill runs req and returns its result; it never returns an error, since
// every failure is a result the agent can branch on.
func Fill(ctx context.Context, req fill.Request, o Options) fill.Result {
	env := o.Env
	if env == nil {
		env = os.Getenv
	}
	policyPath, err := dirs.PolicyFile(env)
	if err != nil {
		return failed(req, "", fmt.Sprintf("cannot find the policy file: %v", err))
	}
	pol, err := policy.Load(policyPath)
	if err != nil {
		return policy.Refusal(policyPath, req.Service, "")
	}
	checked, err := fill.Check(req, policy.NormalizeService)
	if err != nil {
		return fill.Result{Status: fill.StatusRefused, Service: req.Service, Detail: err.Error()}
	}
	req = checked.Request()
	via := o.Via
	if via == "" || via == ViaAuto {
		via = pol.Via
	}
	switch via {
	case ViaAuto, ViaExtension, ViaCDP:
	default:
		return fill.Result{Status: fill.StatusRefused, Service: req.Service,
			Detail: fmt.Sprintf("unknown --via %q: use auto, extension or cdp", via)}
	}

	if o.Socket != "" {
		if via == ViaCDP {
			return fill.Result{Status: fill.StatusRefused, Service: req.Service,
				Detail: "--socket names a fillgate host's socket, which does not speak CDP: leave out --via cdp, or --socket"}
		}
		res, err := agentsock.FillAt(ctx, o.Socket, req, o.Client, o.OnProgress)
		if err != nil {
			return failed(req, ViaExtension, fmt.Sprintf("no fillgate host answered on %s (%v); check the forward (ssh -R) and that the browser with the extension runs", o.Socket, err))
		}
		return res
	}
	if via != ViaCDP {
		runDir, err := dirs.Runtime(env)
		if err != nil {
			return failed(req, ViaExtension, fmt.Sprintf("cannot find the agent socket: %v", err))
		}
		res, err := agentsock.Fill(ctx, runDir, req, o.Client, o.OnProgress)
		switch {
		case err == nil:
			return res
		case !errors.Is(err, agentsock.ErrNoHost):
			return failed(req, ViaExtension, fmt.Sprintf("the fillgate host did not finish the request: %v", err))
		case via == ViaExtension:
			return failed(req, ViaExtension, noHost)
		}
	}
	return fillCDP(ctx, checked, o, pol, env, via == ViaAuto)
}

const noHost = "no browser with the fillgate extension is running (no host answered on the agent socket); " +
	"open your browser with the extension loaded, and run `fillgate doctor` if it still fails"

// fillCDP runs the whole flow in this process with CDP as the browser.
func fillCDP(ctx context.Context, checked fill.Checked, o Options, pol *policy.Policy, env dirs.Env, fellBack bool) fill.Result {
	req := checked.Request()
	stateDir, err := dirs.State(env)
	if err != nil {
		return failed(req, ViaCDP, fmt.Sprintf("cannot find the state dir: %v", err))
	}
	runDir, err := dirs.Runtime(env)
	if err != nil {
		return failed(req, ViaCDP, fmt.Sprintf("cannot find the runtime dir: %v", err))
	}
	log, closeLog, err := logfile.Open(stateDir, logfile.Debug(env), "pid", os.Getpid(), "role", "cdp")
	if err != nil {
		return failed(req, ViaCDP, err.Error())
	}
	defer closeLog.Close()
	// From here on this process may hold a value.
	if err := harden.Process(); err != nil {
		log.Warn("harden", "err", err)
	}

	ctx, lost := context.WithCancelCause(ctx)
	defer lost(nil)
	b := &lazyCDP{ctx: ctx, lost: lost, fellBack: fellBack, connect: func(ctx context.Context) (*cdp.Browser, error) {
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
		return failed(req, ViaCDP, fmt.Sprintf("cannot open the state dir: %v", err))
	}
	agent := agentid.Of(os.Getpid())
	agent.Via = o.Client
	e := &fill.Engine{
		Browser:  b,
		Prompter: pageprompt.Config{Logger: log}.Start,
		// A program drives a browser on this path: the person answers in
		// a native dialog, unless their policy says prompt = "browser".
		Native:     nativeprompt.New(nativeprompt.Config{Program: pol.Pinentry, Env: env, Logger: log}),
		PromptMode: pol.Prompt,
		Policy:     pol,
		State:      st,
		Limits:     pol.Limits(),
		Planner:    &planner.Planner{Policy: pol, Keyring: keychain.OS(), Environ: os.Environ()},
		Leases:     st,
		// No extension runs on this path to show a browser notification:
		// the desktop's notification service shows the notice of a fill
		// with no prompt, and without one every fill is asked.
		Notifier: desktopnote.New(),
		// A program drives every browser on this path: the login happens
		// in a clean room, unless the person's policy says otherwise.
		CleanRoom: cleanroom.New(cleanroom.Config{Driven: b, Dir: filepath.Join(runDir, "rooms"), Browser: pol.RoomBrowser, Log: log}),
		Bars:      st,
		Audit:     audit.Open(stateDir),
		Log:       log,
	}
	return e.Fill(ctx, checked, agent, o.OnProgress)
}

// lazyCDP is the CDP browser, connected on the first Inspect: the Engine
// checks the cool-down, the rate and the one-prompt rule before anything
// is dialled, and a browser that cannot be reached is an audited outcome
// like any other. The Engine calls it from one goroutine.
type lazyCDP struct {
	ctx      context.Context         // the request's
	lost     context.CancelCauseFunc // ends ctx when the browser goes away
	connect  func(context.Context) (*cdp.Browser, error)
	fellBack bool
	b        *cdp.Browser
}

func (l *lazyCDP) Via() string { return fill.ViaCDP }

func (l *lazyCDP) Inspect(ctx context.Context, req fill.Request) (fill.Inspection, error) {
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

func (l *lazyCDP) OpenPrompt(ctx context.Context, url string) (fill.PromptWindow, error) {
	return l.b.OpenPrompt(ctx, url)
}

// Drivable implements fill.Browser: the CDP path always is.
func (l *lazyCDP) Drivable(ctx context.Context) (fill.Drive, error) {
	if l.b == nil {
		return fill.Drive{Driven: true, Reasons: []string{"fillgate reaches it over the DevTools Protocol"}}, nil
	}
	return l.b.Drivable(ctx)
}

func (l *lazyCDP) Insert(ctx context.Context, in fill.Inspection, value []byte, opt fill.InsertOptions) (fill.Verdict, error) {
	return l.b.Insert(ctx, in, value, opt)
}

// Tab implements cleanroom.Driven.
func (l *lazyCDP) Tab(ctx context.Context, in fill.Inspection) (websession.Tab, error) {
	return l.b.Tab(ctx, in)
}

// SiteCookies implements cleanroom.Driven.
func (l *lazyCDP) SiteCookies(ctx context.Context, in fill.Inspection, site string) ([]websession.Cookie, error) {
	return l.b.SiteCookies(ctx, in, site)
}

// HandOver implements cleanroom.Driven.
func (l *lazyCDP) HandOver(ctx context.Context, in fill.Inspection, s websession.Session) (websession.Shown, error) {
	return l.b.HandOver(ctx, in, s)
}

// Close detaches from the browser, if it was reached.
func (l *lazyCDP) Close() {
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

func failed(req fill.Request, via, detail string) fill.Result {
	return fill.Result{Status: fill.StatusFailed, Service: req.Service, Via: via, Detail: detail}
}
