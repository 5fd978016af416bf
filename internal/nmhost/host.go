// Package nmhost runs fillgate as a native-messaging host: the browser starts
// it for fillgate's extension, it speaks native messaging on stdin/stdout,
// listens on the agent socket, and runs each agent request through the fill
// flow with the extension as the browser.
package nmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/bridge"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/drivable"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/harden"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/logfile"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/internal/nativeprompt"
	"github.com/fillgate/fillgate/internal/planner"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/prompt"
)

// Config is what Run needs. Stdin and Stdout are the native-messaging pipe:
// nothing else may write to Stdout.
type Config struct {
	Caller manifest.Caller
	Stdin  io.Reader
	Stdout io.Writer
	// Env is the environment (the browser's, inherited); nil means
	// os.Getenv.
	Env dirs.Env
	// PolicyPath overrides the policy file; "" means dirs.PolicyFile.
	PolicyPath string
	// Environ is the environment the password stores' programs take
	// their variables from; nil means os.Environ().
	Environ []string
}

// Run serves until the browser closes the pipe (a clean end, nil) or ctx
// ends. Every error it returns says what failed.
func Run(ctx context.Context, cfg Config) error {
	env := cfg.Env
	if env == nil {
		env = os.Getenv
	}
	stateDir, err := dirs.State(env)
	if err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	runDir, err := dirs.Runtime(env)
	if err != nil {
		return fmt.Errorf("runtime dir: %w", err)
	}
	policyPath := cfg.PolicyPath
	if policyPath == "" {
		if policyPath, err = dirs.PolicyFile(env); err != nil {
			return fmt.Errorf("policy file: %w", err)
		}
	}
	log, closeLog, err := logfile.Open(stateDir, logfile.Debug(env), "pid", os.Getpid(), "role", "host")
	if err != nil {
		return err
	}
	defer closeLog.Close()
	if err := harden.Process(); err != nil {
		log.Warn("harden", "err", err)
	}

	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)

	var br *bridge.Bridge
	state := fill.NewMemState()
	port := nativemsg.NewPort(cfg.Stdin, cfg.Stdout, func(m json.RawMessage) { br.HandleNotice(m) },
		nativemsg.WithLogger(log))
	// What drives the browser, as the host sees it (its command line and
	// port files), merged in the bridge with what the extension sees.
	name, profile := browserID(cfg.Caller.Family)
	probe := drivable.New(drivable.Config{
		PID:    drivable.BrowserPID(os.Getppid()),
		Family: cfg.Caller.Family,
		Name:   name,
		Env:    env,
	})
	br = bridge.New(port, bridge.WithVersion(manifest.Version), bridge.WithLogger(log),
		bridge.WithLeases(state.LiveLeases, state.EndLease),
		bridge.WithFamily(cfg.Caller.Family), bridge.WithDriveProbe(probe.Check))

	l, err := agentsock.Listen(runDir)
	if err != nil {
		return fmt.Errorf("agent socket: %w", err)
	}
	defer l.Close()
	log.Info("host started", "caller", cfg.Caller.ID, "socket", l.Path(), "agent_socket", l.OwnsAgentSocket())

	h := &handler{
		caller:     cfg.Caller,
		browser:    name,
		profile:    profile,
		bridge:     br,
		state:      state,
		keyring:    keychain.OS(),
		env:        env,
		environ:    cfg.Environ,
		audit:      audit.Open(stateDir),
		log:        log,
		policyPath: policyPath,
		socket:     l.Path(),
	}
	served := make(chan error, 1)
	go func() { served <- agentsock.Serve(ctx, l, h) }()

	err = port.Run(ctx)
	stop(fill.ErrBrowserGone) // running fills end as failed
	if serr := <-served; serr != nil && !errors.Is(serr, context.Canceled) {
		log.Warn("agent socket", "err", serr)
	}
	switch {
	case err == nil || errors.Is(err, io.EOF):
		log.Info("browser closed the connection; host exiting")
		return nil
	case errors.Is(context.Cause(ctx), ErrStopped):
		log.Info("told to stop; host exiting")
		return nil
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), fill.ErrBrowserGone):
		return nil
	}
	log.Error("native messaging", "err", err)
	return fmt.Errorf("native messaging: %w", err)
}

// handler answers agent-socket requests with the extension as the browser.
type handler struct {
	caller     manifest.Caller
	browser    string // the browser's name, e.g. "chromium", "brave"
	profile    string // its profile, or "default"
	bridge     *bridge.Bridge
	state      *fill.MemState // the State and the leases, in memory
	keyring    *keychain.Keyring
	env        dirs.Env // the browser's environment: the native dialog's display
	environ    []string
	audit      fill.Auditor
	log        *slog.Logger
	policyPath string
	socket     string
}

// Fill loads the policy afresh (so an edited file applies at once), checks
// req and runs the fill flow. A policy file that does not parse refuses
// every request.
func (h *handler) Fill(ctx context.Context, req fill.Request, agent fill.Agent, progress func(fill.Progress)) fill.Result {
	pol, err := policy.Load(h.policyPath)
	if err != nil {
		h.log.Error("policy", "err", err)
		res := policy.Refusal(h.policyPath, req.Service, fill.ViaExtension)
		_ = h.audit.Record(fill.AuditEntry{Time: time.Now(), Agent: agent, Service: req.Service, Via: res.Via, Status: res.Status, Detail: res.Detail})
		return res
	}
	environ := h.environ
	if environ == nil {
		environ = os.Environ()
	}
	e := &fill.Engine{
		Browser:    h.bridge,
		Prompter:   prompt.Config{Logger: h.log}.Start,
		Native:     nativeprompt.New(nativeprompt.Config{Program: pol.Pinentry, Env: h.env, Logger: h.log}),
		PromptMode: pol.Prompt,
		Policy:     pol,
		State:      h.state,
		Limits:     pol.Limits(),
		Planner:    &planner.Planner{Policy: pol, Keyring: h.keyring, Environ: environ},
		Leases:     h.state,
		Notifier:   h.bridge,
		Audit:      h.audit,
		Log:        h.log,
		OnOutcome:  h.bridge.Outcome,
	}
	checked, err := fill.Check(req, policy.NormalizeService)
	if err != nil {
		res := fill.Result{Status: fill.StatusRefused, Service: req.Service, Field: req.Field, Via: fill.ViaExtension, Detail: err.Error()}
		e.Refused(agent, res)
		return res
	}
	before := leaseIDs(h.state.LiveLeases(time.Now()))
	res := e.Fill(ctx, checked, agent, progress)
	if !slices.Equal(before, leaseIDs(h.state.LiveLeases(time.Now()))) {
		h.bridge.PushLeases() // the popup lists a lease this fill started
	}
	return res
}

// leaseIDs lists the leases' ids.
func leaseIDs(ls []fill.Lease) []string {
	ids := make([]string, len(ls))
	for i, l := range ls {
		ids[i] = l.ID
	}
	return ids
}

// statusDriveBudget bounds how long a status waits for the extension to
// say what drives the browser.
const statusDriveBudget = time.Second

// Status describes this host for `fillgate doctor` and clients.
func (h *handler) Status() agentsock.HostStatus {
	es := h.bridge.Status()
	ctx, cancel := context.WithTimeout(context.Background(), statusDriveBudget)
	defer cancel()
	drive := h.bridge.DriveStatus(ctx)
	prompt := ""
	if pol, err := policy.Load(h.policyPath); err == nil {
		prompt = pol.Prompt
	}
	return agentsock.HostStatus{
		Version:     manifest.Version,
		PID:         os.Getpid(),
		Browser:     string(h.caller.Family),
		BrowserName: h.browser,
		Profile:     h.profile,
		Caller:      h.caller.ID,
		Extension: agentsock.ExtensionStatus{
			Connected: es.Connected, Version: es.Version, Paused: es.Paused, UserAgent: es.UserAgent, Instance: es.Instance,
		},
		Socket: h.socket,
		Leases: h.state.LiveLeases(time.Now()),
		Drive:  &drive,
		Prompt: prompt,
	}
}

// peekBudget bounds the extension's answer to a peek.
const peekBudget = 2 * time.Second

// Peek asks the extension what its active tab has focused.
func (h *handler) Peek(ctx context.Context) (agentsock.ActiveTab, error) {
	ctx, cancel := context.WithTimeout(ctx, peekBudget)
	defer cancel()
	f, err := h.bridge.Peek(ctx)
	if err != nil {
		return agentsock.ActiveTab{}, err
	}
	return agentsock.ActiveTab{Origin: f.Origin, Field: f.Field.Kind, Problem: f.Field.Problem}, nil
}

// Serves reports whether t is a usable login field of kind field for
// service, as the policy reads the service. A policy that does not parse
// serves nothing (this host's Fill would refuse too).
func (h *handler) Serves(service, field string, t agentsock.ActiveTab) bool {
	pol, err := policy.Load(h.policyPath)
	return err == nil && t.Problem == "" && pol.Serves(service, field, t.Origin, t.Field)
}

// Refused records a fill the router refused before any browser ran it.
func (h *handler) Refused(agent fill.Agent, res fill.Result) {
	err := h.audit.Record(fill.AuditEntry{Time: time.Now(), Agent: agent, Service: res.Service,
		Field: res.Field, Via: res.Via, Status: res.Status, Detail: res.Detail})
	if err != nil {
		h.log.Error("audit log", "err", err)
	}
	h.log.Info("fill refused by the router", "agent", agent.String(), "service", res.Service, "detail", res.Detail)
}
