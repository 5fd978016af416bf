// Package request is the agent's client: `fillgate fill` and the MCP tool
// call it. It asks a running host over the agent socket and, when no host
// answers (or the agent or the policy says so), hands the request to the
// CDP fallback's host in this process (internal/cdphost). A request a host
// takes is checked (fill.Check) and the policy enforced there, once; only a
// request no host takes is checked here, on its way to cdphost.
package request

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/cdphost"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
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
	// The policy is read here only to choose the path (its via) and, when
	// no host takes the request, for the CDP path to enforce.
	var pol *policy.Policy
	load := func() *fill.Result {
		path, err := dirs.PolicyFile(env)
		if err != nil {
			res := failed(req, "", fmt.Sprintf("cannot find the policy file: %v", err))
			return &res
		}
		if pol, err = policy.Load(path); err != nil {
			res := policy.Refusal(path, req.Service, "")
			return &res
		}
		return nil
	}
	via := o.Via
	if (via == "" || via == ViaAuto) && o.Socket == "" {
		if res := load(); res != nil {
			return *res
		}
		via = pol.Via
	}
	switch via {
	case "", ViaAuto, ViaExtension, ViaCDP:
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
		if r, ok := refusedByHost(req, err); ok {
			return r
		}
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
		if r, ok := refusedByHost(req, err); ok {
			return r
		}
		switch {
		case err == nil:
			return res
		case !errors.Is(err, agentsock.ErrNoHost):
			return failed(req, ViaExtension, fmt.Sprintf("the fillgate host did not finish the request: %v", err))
		}
	}

	// No host took the request: the door is here, once, before anything
	// is dialled.
	checked, err := fill.Check(req, policy.NormalizeService)
	if err != nil {
		return fill.Result{Status: fill.StatusRefused, Service: req.Service, Field: req.Field, Detail: err.Error()}
	}
	if via == ViaExtension {
		return failed(checked.Request(), ViaExtension, noHost)
	}
	if pol == nil {
		if res := load(); res != nil {
			return *res
		}
	}
	return cdphost.Run(ctx, checked, pol, cdphost.Options{
		Client: o.Client, Tab: o.Tab, Env: env, FellBack: via != ViaCDP,
		OnProgress: o.OnProgress, OpenURL: o.OpenURL,
	})
}

const noHost = "no browser with the fillgate extension is running (no host answered on the agent socket); " +
	"open your browser with the extension loaded, and run `fillgate doctor` if it still fails"

// refusedByHost is the result of a request whose host refused it at its
// door for what it asks (a service missing, an unknown field: agentsock's
// bad_request), when err says so: refused, as this process's door
// refuses it when no host answers.
func refusedByHost(req fill.Request, err error) (fill.Result, bool) {
	var he *agentsock.HostError
	if !errors.As(err, &he) || he.Code != agentsock.CodeBadRequest {
		return fill.Result{}, false
	}
	return fill.Result{Status: fill.StatusRefused, Service: req.Service, Field: req.Field, Via: ViaExtension, Detail: he.Detail}, true
}

func failed(req fill.Request, via, detail string) fill.Result {
	return fill.Result{Status: fill.StatusFailed, Service: req.Service, Via: via, Detail: detail}
}
