// Package nmhost runs fillgate as a native-messaging host: the browser
// starts it for fillgate's extension, it speaks native messaging on
// stdin/stdout, listens on the agent socket, and answers each agent
// request (serve.go): a fill goes through in one pass, routed to the
// browser that shows its field, and runs the fill flow with the extension
// as the browser.
package nmhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/fillgate/fillgate/internal/agentid"
	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/bridge"
	"github.com/fillgate/fillgate/internal/cleanroom"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/drivable"
	"github.com/fillgate/fillgate/internal/engine"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
	"github.com/fillgate/fillgate/internal/harden"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/logfile"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/internal/passkeyring"
	"github.com/fillgate/fillgate/internal/policy"
	"github.com/fillgate/fillgate/internal/procinfo"
	"github.com/fillgate/fillgate/internal/websession"
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
	browserPID := drivable.BrowserPID(os.Getppid())
	probe := drivable.New(drivable.Config{
		PID:    browserPID,
		Family: cfg.Caller.Family,
		Name:   name,
		Env:    env,
	})
	// What outlives this host, shared with the CDP path: the bars on the
	// clean room, and the extension's pause switch of this profile (which
	// a page of the extension opened in a tab could otherwise switch off
	// by writing the extension's storage).
	var bars fill.Bars = state
	opts := []bridge.Option{bridge.WithVersion(manifest.Version), bridge.WithLogger(log),
		bridge.WithLeases(state.LiveLeases, state.EndLease),
		bridge.WithFamily(cfg.Caller.Family), bridge.WithDriveProbe(probe.Check)}
	if st, err := fillstate.Open(filepath.Join(stateDir, "cdp")); err == nil {
		bars = st
		opts = append(opts, bridge.WithPauseRecord(pauseRecord{st, cfg.Caller.ID + " " + name + " " + profile}))
	} else {
		log.Error("state dir: the clean room's bars and the pause switch are kept in memory only", "err", err)
	}
	br = bridge.New(port, opts...)

	l, err := agentsock.Listen(runDir)
	if err != nil {
		return fmt.Errorf("agent socket: %w", err)
	}
	defer l.Close()
	log.Info("host started", "caller", cfg.Caller.ID, "socket", l.Path(), "agent_socket", l.OwnsAgentSocket())

	b := &localHost{
		caller:  cfg.Caller,
		name:    name,
		profile: profile,
		bridge:  br,
		state:   state,
		keyring: keychain.OS(),
		env:     env,
		environ: cfg.Environ,
		audit:   audit.Open(stateDir),
		log:     log,
		socket:  l.Path(),
		rooms:   filepath.Join(runDir, "rooms"),

		browserPID: browserPID,
		bars:       bars,
	}
	if p, err := procinfo.Get(browserPID); err == nil {
		b.exe = p.Exe
	}
	if pol, err := policy.Load(policyPath); err == nil && cfg.Caller.Family != manifest.Firefox {
		b.spare = cleanroom.NewSpare(ctx, cleanroom.Config{Dir: b.rooms, Browser: pol.RoomBrowser, DrivenExe: b.exe, Log: log})
	}
	srv := &server{
		l:          l,
		self:       agentid.Self(),
		policyPath: policyPath,
		loadPolicy: func() (*policy.Policy, error) { return policy.Load(policyPath) },
		local:      b,
		audit:      b.audit,
		log:        log,
	}
	// The agent socket is served only once the extension said hello and
	// no other host serves its browser and profile: a page of the
	// extension opened in a tab, connecting a host of its own, never gets
	// a request.
	served := make(chan error, 1)
	go func() {
		select {
		case <-br.Hello():
		case <-time.After(helloWait):
		case <-ctx.Done():
			served <- ctx.Err()
			return
		}
		if b.second(ctx, l.Others) {
			stop(ErrSecondConnection)
			served <- nil
			return
		}
		served <- agentsock.Serve(ctx, l, srv.serve)
	}()

	defer b.spare.Close() // before the host exits, so its profile goes too
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
	case errors.Is(context.Cause(ctx), ErrSecondConnection):
		return ErrSecondConnection
	case ctx.Err() != nil && !errors.Is(context.Cause(ctx), fill.ErrBrowserGone):
		return nil
	}
	log.Error("native messaging", "err", err)
	return fmt.Errorf("native messaging: %w", err)
}

// localHost is this host's own side, as the answers on the agent socket
// need it (local): its browser (the extension through the bridge), its
// state, its keyring and its clean rooms.
type localHost struct {
	caller  manifest.Caller
	name    string // the browser's name, e.g. "chromium", "brave"
	profile string // its profile, or "default"
	bridge  *bridge.Bridge
	state   *fill.MemState // the State and the leases, in memory
	keyring *keychain.Keyring
	env     dirs.Env // the browser's environment: the native dialog's display
	environ []string
	audit   fill.Auditor
	log     *slog.Logger
	socket  string
	rooms   string // where clean rooms keep their throw-away profiles
	bars    fill.Bars
	exe     string // the browser's executable, "" when unknown
	// browserPID is the browser's main process.
	browserPID int
	// spare keeps a clean room's browser started for the next request,
	// once a request found the browser driven (cleanroom.Spare).
	spare *cleanroom.Spare
}

var _ local = (*localHost)(nil)

// engine is the fill flow under pol, with the extension as the browser.
func (b *localHost) engine(pol *policy.Policy) *fill.Engine {
	return engine.New(pol, engine.Parts{
		Browser:  b.bridge,
		Store:    b.state,
		Notifier: b.bridge,
		Passkeys: passkeyring.Port{Store: b.keyring},
		Room: cleanroom.Config{
			Driven:    drivenTab{Bridge: b.bridge, family: string(b.caller.Family)},
			Firefox:   b.caller.Family == manifest.Firefox,
			Dir:       b.rooms,
			DrivenExe: b.exe,
			Spare:     b.spare,
		},
		Bars:      b.bars,
		Audit:     b.audit,
		OnOutcome: b.bridge.Outcome,
		Env:       b.env,
		Environ:   b.environ,
		Keyring:   b.keyring,
		Log:       b.log,
	})
}

// fillHere runs the fill flow in this host's browser, and pushes the
// leases to the popup when the fill started one.
func (b *localHost) fillHere(ctx context.Context, pol *policy.Policy, req fill.Checked, agent fill.Agent, progress func(fill.Progress)) fill.Result {
	before := leaseIDs(b.state.LiveLeases(time.Now()))
	res := b.engine(pol).Run(ctx, req, agent, progress)
	if !slices.Equal(before, leaseIDs(b.state.LiveLeases(time.Now()))) {
		b.bridge.PushLeases() // the popup lists a lease this fill started
	}
	return res
}

// refused records a refusal at the door as the fill flow records its
// outcomes: the log, the audit log, the popup's history.
func (b *localHost) refused(pol *policy.Policy, agent fill.Agent, res fill.Result) {
	b.engine(pol).Refused(agent, res)
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

// status describes this host for `fillgate status` and clients, under pol
// (nil: the policy file does not load, and no prompt mode is named).
func (b *localHost) status(pol *policy.Policy) agentsock.HostStatus {
	es := b.bridge.Status()
	ctx, cancel := context.WithTimeout(context.Background(), statusDriveBudget)
	defer cancel()
	drive := b.bridge.DriveStatus(ctx)
	mode := ""
	if pol != nil {
		mode = pol.Prompt
	}
	return agentsock.HostStatus{
		Version:     manifest.Version,
		PID:         os.Getpid(),
		BrowserPID:  b.browserPID,
		Browser:     string(b.caller.Family),
		BrowserName: b.name,
		Profile:     b.profile,
		Caller:      b.caller.ID,
		Extension: agentsock.ExtensionStatus{
			Connected: es.Connected, Version: es.Version, Paused: es.Paused, UserAgent: es.UserAgent, Instance: es.Instance,
		},
		Socket: b.socket,
		Leases: b.state.LiveLeases(time.Now()),
		Drive:  &drive,
		Prompt: mode,
	}
}

// peekBudget bounds the extension's answer to a peek.
const peekBudget = 2 * time.Second

// peek asks the extension what its active tab has focused.
func (b *localHost) peek(ctx context.Context) (agentsock.ActiveTab, error) {
	ctx, cancel := context.WithTimeout(ctx, peekBudget)
	defer cancel()
	f, err := b.bridge.Peek(ctx)
	if err != nil {
		return agentsock.ActiveTab{}, err
	}
	return agentsock.ActiveTab{Origin: f.Origin, Field: f.Field.Kind, Problem: f.Field.Problem}, nil
}

// drivenTab is the extension as the clean room's driven browser, with
// what only the host knows of the browser: its family.
type drivenTab struct {
	*bridge.Bridge
	family string
}

// Tab implements cleanroom.Driven.
func (d drivenTab) Tab(ctx context.Context, in fill.Inspection) (websession.Tab, error) {
	t, err := d.Bridge.Tab(ctx, in)
	t.Family = d.family
	return t, err
}

// ErrSecondConnection ends a host whose browser process and profile
// already have a live connection to another host: only one extension
// worker may speak for a profile, and a second connection is a page of
// the extension opened in a tab (or a program driving the browser)
// playing the extension.
var ErrSecondConnection = errors.New("refused a second native-messaging connection from the same browser and profile: another is live")

// helloWait bounds the wait for the extension's hello before the host
// serves the agent socket anyway (an extension that never says hello
// cannot be told apart from another, and fails its requests itself).
const helloWait = 5 * time.Second

// secondGrace is how long a host that finds another live for its browser
// and profile waits before it looks again: a worker the browser restarted
// connects anew while the host of its old connection is still exiting.
const secondGrace = 1500 * time.Millisecond

// second reports whether another host serves this host's browser process
// and extension instance (its profile), still after secondGrace, and,
// when one does, records the refusal in the log and the audit log.
func (b *localHost) second(ctx context.Context, others func() []string) bool {
	st := b.bridge.Status()
	if st.Instance == "" || b.browserPID == 0 {
		return false
	}
	if _, ok := b.firstOf(ctx, others(), st.Instance); !ok {
		return false
	}
	select {
	case <-time.After(secondGrace):
	case <-ctx.Done():
		return false
	}
	hs, ok := b.firstOf(ctx, others(), st.Instance)
	if !ok {
		return false
	}
	detail := fmt.Sprintf("refused a second native-messaging connection from %s (pid %d, profile %s) while the host pid %d serves it: "+
		"a page of the extension opened in a tab, or a program driving the browser, may be playing the extension", cmpName(b.name), b.browserPID, b.profile, hs.PID)
	b.log.Warn("second connection refused", "browser_pid", b.browserPID, "first_host", hs.PID)
	if err := b.audit.Record(fill.AuditEntry{Time: time.Now(), Status: fill.StatusRefused, Via: fill.ViaExtension,
		Detail: detail, Event: fill.EventSecondConnection}); err != nil {
		b.log.Error("audit log", "err", err)
	}
	return true
}

// firstOf returns the status of another host with the extension of
// instance connected from this host's browser process, if there is one.
func (b *localHost) firstOf(ctx context.Context, others []string, instance string) (agentsock.HostStatus, bool) {
	for _, path := range others {
		cctx, cancel := context.WithTimeout(ctx, statusDriveBudget)
		hs, err := agentsock.OwnStatusAt(cctx, path)
		cancel()
		if err == nil && hs.BrowserPID == b.browserPID && hs.Extension.Connected && hs.Extension.Instance == instance {
			return hs, true
		}
	}
	return agentsock.HostStatus{}, false
}

// cmpName is the browser's name, or "the browser".
func cmpName(name string) string {
	if name == "" {
		return "the browser"
	}
	return name
}

// pauseRecord is the pause switch of one browser profile's extension, in
// the state directory.
type pauseRecord struct {
	st  *fillstate.Dir
	key string
}

func (p pauseRecord) Paused() bool                { return p.st.Paused(p.key) }
func (p pauseRecord) SetPaused(paused bool) error { return p.st.SetPaused(p.key, paused) }
