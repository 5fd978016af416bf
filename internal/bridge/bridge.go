// Package bridge is the fill.Browser that talks to fillgate's MV3 extension
// over a native-messaging port (PROTOCOL.md, section 2).
//
// Wire it up as
//
//	var b *bridge.Bridge
//	port := nativemsg.NewPort(os.Stdin, os.Stdout, func(m json.RawMessage) { b.HandleNotice(m) })
//	b = bridge.New(port, bridge.WithVersion(version), bridge.WithLogger(log))
//	go port.Run(ctx)
//
// The only message that carries a secret is insert. Its body is built
// without encoding/json, straight into one buffer that is zeroed as soon as
// the port has written it; no error, log line or result holds the value.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
)

// ExtensionStatus is what the host knows about the connected extension.
type ExtensionStatus struct {
	// Connected is true once the extension said hello and until the port
	// ends.
	Connected bool   `json:"connected"`
	Version   string `json:"version,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`
	Paused    bool   `json:"paused"`
	// Instance is the extension's random per-profile id.
	Instance string `json:"instance,omitempty"`
}

// config is what the Options set.
type config struct {
	version  string
	pid      int
	log      *slog.Logger
	now      func() time.Time
	leases   func(time.Time) []fill.Lease
	endLease func(id string) bool
	drive    driveConfig // drivable.go
	pause    PauseRecord
}

// PauseRecord keeps the extension's pause switch where the host alone
// writes it. Any page of the extension (one opened in a tab, which a
// program driving the browser can script) can write the extension's
// storage, and a worker that starts again reads it; so a pause holds
// here until the toolbar popup, through the worker, switches it off.
type PauseRecord interface {
	Paused() bool
	SetPaused(paused bool) error
}

// WithPauseRecord keeps the pause switch in r: a hello that says paused
// records it, one that says not paused does not switch off a recorded
// pause (only a "paused" notice does), and an inspection is paused while
// the record is. The default keeps it in the extension only.
func WithPauseRecord(r PauseRecord) Option { return func(c *config) { c.pause = r } }

// Option configures a Bridge.
type Option func(*config)

// WithVersion sets the host version sent in the "host" notice (the
// extension's popup shows it). The default is empty.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithLogger makes the bridge report notable events (never a value) to l.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.log = l
		}
	}
}

// WithClock sets the clock for outcome notices and for how long a peek
// may be shared; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// Bridge implements fill.Browser over a native-messaging port. Its methods
// are safe for concurrent use.
type Bridge struct {
	port *nativemsg.Port
	cfg  config
	log  *slog.Logger

	hello     chan struct{} // closed at the first hello
	helloOnce sync.Once

	mu      sync.Mutex
	status  ExtensionStatus
	windows map[int64]*window // open prompt windows by id
	early   []int64           // prompt_closed for windows not yet registered
	peeking *peekFlight       // the peek on its way to the extension, or nil
	driving *driveFlight      // DriveStatus's last question to the extension, or nil
	// passkeys are the arms waiting for their page's call, by request id
	// (passkey.go).
	passkeys map[string]*passkeyWait
}

var _ fill.Browser = (*Bridge)(nil)

// maxEarly bounds how many unmatched prompt_closed notices are remembered.
const maxEarly = 32

// New returns a Bridge that sends requests over port. Pass HandleNotice to
// the port as its notice handler.
func New(port *nativemsg.Port, opts ...Option) *Bridge {
	cfg := config{pid: os.Getpid(), log: slog.New(slog.DiscardHandler), now: time.Now}
	for _, o := range opts {
		o(&cfg)
	}
	return &Bridge{
		port:    port,
		cfg:     cfg,
		log:     cfg.log,
		hello:   make(chan struct{}),
		windows: make(map[int64]*window),
	}
}

// Via reports fill.ViaExtension.
func (b *Bridge) Via() string { return fill.ViaExtension }

// Hello is closed when the extension has said hello.
func (b *Bridge) Hello() <-chan struct{} { return b.hello }

// Status reports the extension's state as of its last notices.
func (b *Bridge) Status() ExtensionStatus {
	b.mu.Lock()
	s := b.status
	b.mu.Unlock()
	select {
	case <-b.port.Done():
		s.Connected = false
	default:
	}
	return s
}

// HandleNotice handles a message from the extension that is not a reply:
// hello, paused, prompt_closed, end_lease, passkey_called and
// passkey_aborted (passkey.go). Others, and late replies, are logged by
// type and dropped.
func (b *Bridge) HandleNotice(raw json.RawMessage) {
	var env struct {
		Type string `json:"type"`
		ID   *int64 `json:"id"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		b.log.Warn("bridge: ignored a malformed notice")
		return
	}
	if env.ID != nil {
		b.log.Info("bridge: ignored a reply nobody waits for", "type", cutType(env.Type))
		return
	}
	switch env.Type {
	case "hello":
		on(b, raw, b.helloed)
	case "paused":
		on(b, raw, b.pauseFlipped)
	case "prompt_closed":
		on(b, raw, func(n promptClosedNotice) { b.windowClosed(n.Window) })
	case "end_lease":
		on(b, raw, func(n endLeaseNotice) { b.endLease(n.Lease) })
	case "passkey_called":
		on(b, raw, b.passkeyCalled)
	case "passkey_aborted":
		on(b, raw, b.passkeyAborted)
	default:
		b.log.Info("bridge: ignored an unknown notice", "type", cutType(env.Type))
	}
}

// on decodes the notice raw into a T and hands it to handle; one that does
// not decode is logged and dropped.
func on[T any](b *Bridge, raw json.RawMessage, handle func(T)) {
	var n T
	if err := json.Unmarshal(raw, &n); err != nil {
		b.log.Warn("bridge: ignored a malformed notice")
		return
	}
	handle(n)
}

// pauseFlipped handles the extension's paused notice: the person flipped
// the switch in the popup.
func (b *Bridge) pauseFlipped(n pausedNotice) {
	b.recordPause(n.Paused)
	b.mu.Lock()
	b.status.Paused = n.Paused
	b.mu.Unlock()
	b.log.Info("bridge: extension pause switch changed", "paused", n.Paused)
}

// helloed handles the extension's hello: its status, and the host notice
// in answer (with the pause switch the host keeps), then the leases.
func (b *Bridge) helloed(n helloNotice) {
	paused := n.Paused
	if rec := b.cfg.pause; rec != nil {
		if n.Paused && !rec.Paused() {
			b.recordPause(true) // switched on while no host ran
		}
		paused = n.Paused || rec.Paused()
	}
	b.mu.Lock()
	b.status = ExtensionStatus{Connected: true, Version: n.Version, UserAgent: n.UserAgent, Paused: paused, Instance: n.Instance}
	b.mu.Unlock()
	b.helloOnce.Do(func() { close(b.hello) })
	b.log.Info("bridge: extension connected", "version", n.Version, "paused", paused)
	if err := b.port.Notify(hostNotice{"host", b.cfg.version, b.cfg.pid, paused}); err != nil {
		b.log.Warn("bridge: could not answer hello", "err", err)
	}
	b.pushLeases(false)
}

// recordPause writes the pause switch to the record, if any.
func (b *Bridge) recordPause(paused bool) {
	if b.cfg.pause == nil {
		return
	}
	if err := b.cfg.pause.SetPaused(paused); err != nil {
		b.log.Error("bridge: cannot record the pause switch", "err", err)
	}
}

// Outcome tells the extension's popup how a request ended: service, origin,
// status and time. It never carries a value or a detail. A failure to send
// is logged: the popup's history is a convenience, and the request's result
// does not depend on it.
func (b *Bridge) Outcome(r fill.Result) {
	err := b.port.Notify(outcomeNotice{"outcome", b.cfg.now().UTC().Format(time.RFC3339), r.Service, r.Origin, r.Status})
	if err != nil {
		b.log.Warn("bridge: could not send the outcome to the extension", "err", err)
	}
}

// Ping checks that the extension answers.
func (b *Bridge) Ping(ctx context.Context) error {
	var reply typeOnly
	return b.call(ctx, "ping", typeOnly{"ping"}, "pong", &reply)
}

// Inspect asks the extension for the focused field of the active tab (or
// req.Tab / req.Frame).
func (b *Bridge) Inspect(ctx context.Context, req fill.Request) (fill.Inspection, error) {
	var reply inspectedReply
	err := b.call(ctx, "inspect", inspectRequest{"inspect", req.Tab, req.Frame}, "inspected", &reply)
	var re *nativemsg.ReplyError
	if errors.As(err, &re) && re.Code == CodeNotActive {
		return fill.Inspection{}, notActive{}
	}
	if err != nil {
		return fill.Inspection{}, err
	}
	in := reply.Inspection
	b.mu.Lock()
	in.Paused = in.Paused || b.status.Paused
	b.mu.Unlock()
	if b.cfg.pause != nil && b.cfg.pause.Paused() {
		in.Paused = true
	}
	return in, nil
}

// Focused is what the active tab has focused, as Peek reports it.
type Focused struct {
	Origin string         `json:"origin"`
	Field  fill.FieldInfo `json:"field"`
}

// Peek asks the extension what the active tab of the last focused window
// has focused: the focused frame's origin and the field's kind and
// problem. Unlike Inspect it remembers no element.
//
// Peeks made while one is on its way to the extension share it and its
// answer (which is then at most one round trip older than the call), so
// many agents asking for the status at once cost the browser one peek at
// a time. A peek out for longer than peekShare is not joined any more
// (one the extension never answers must not hold every later caller),
// and a shared peek is cancelled once no caller waits for it.
func (b *Bridge) Peek(ctx context.Context) (Focused, error) {
	now := b.cfg.now()
	b.mu.Lock()
	fl := b.peeking
	if fl == nil || now.Sub(fl.started) > peekShare {
		fctx, cancel := context.WithCancel(context.Background())
		fl = &peekFlight{started: now, done: make(chan struct{}), cancel: cancel}
		b.peeking = fl
		go b.peek(fctx, fl)
	}
	fl.waiters++
	b.mu.Unlock()
	select {
	case <-fl.done:
		return fl.focused, fl.err
	case <-ctx.Done():
		b.mu.Lock()
		if fl.waiters--; fl.waiters == 0 {
			fl.cancel() // nobody wants its answer any more
			if b.peeking == fl {
				b.peeking = nil // and nobody new joins a cancelled peek
			}
		}
		b.mu.Unlock()
		return Focused{}, callError("peek", ctx.Err())
	}
}

// peekShare is how long after it was sent a peek may still be joined.
const peekShare = time.Second

// peekFlight is a peek on its way to the extension and, once done is
// closed, its answer.
type peekFlight struct {
	started time.Time
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int // guarded by Bridge.mu
	focused Focused
	err     error
}

// peek sends fl's peek and hands its answer to every caller waiting.
func (b *Bridge) peek(ctx context.Context, fl *peekFlight) {
	defer fl.cancel()
	var reply peekedReply
	err := b.call(ctx, "peek", typeOnly{"peek"}, "peeked", &reply)
	b.mu.Lock()
	if b.peeking == fl {
		b.peeking = nil // a peek from now on asks afresh
	}
	b.mu.Unlock()
	fl.focused, fl.err = reply.Focused, err
	close(fl.done)
}

// CodeNotActive is the extension's error code for an inspect of a pinned
// tab that is not the active tab of its window.
const CodeNotActive = "not_active"

// notActive is that refusal: a pin only narrows the choice, and the
// background tab's origin and field stay unnamed.
type notActive struct{}

func (notActive) Error() string {
	return "the tab given with --tab is not the active tab of its window; bring it to the front, or leave --tab out"
}

// Status makes the Engine report it as refused.
func (notActive) Status() fill.Status { return fill.StatusRefused }

// call sends req, checks that the reply has type want and decodes it into
// out. Its errors name the request, never the content of a message.
func (b *Bridge) call(ctx context.Context, name string, req any, want string, out any) error {
	defer b.timed(name, time.Now())
	raw, err := b.port.Call(ctx, req)
	if err != nil {
		return callError(name, err)
	}
	return decode(name, raw, want, out)
}

// timed writes a debug "timing" record of how long the extension took to
// answer the request name (its type and milliseconds only).
func (b *Bridge) timed(name string, t0 time.Time) {
	fill.LogTiming(b.log, time.Since(t0), "call", name)
}

func decode(name string, raw json.RawMessage, want string, out any) error {
	var env struct{ Type string }
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("extension: malformed reply to %s", name)
	}
	if env.Type != want {
		return fmt.Errorf("extension: unexpected reply %s to %s", shortType(env.Type), name)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("extension: malformed %s reply to %s", want, name)
	}
	return nil
}

// callError turns a port error into one that says what happened to name.
func callError(name string, err error) error {
	var re *nativemsg.ReplyError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("extension refused %s: %w", name, err)
	case errors.Is(err, nativemsg.ErrClosed):
		return fmt.Errorf("extension disconnected during %s: %w", name, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("no reply from the extension to %s: %w", name, err)
	}
	return fmt.Errorf("extension %s: %w", name, err)
}

// maxTypeShown is the most of a message's type that a log line or an
// error quotes: the extension's own types are short words, and a message
// that says otherwise is not echoed whole.
const maxTypeShown = 32

// shortType is a message type as an error quotes it: cut short when
// long (cutType), quoted.
func shortType(t string) string { return fmt.Sprintf("%q", cutType(t)) }

// cutType is a message type cut to maxTypeShown bytes, for a log line.
func cutType(t string) string {
	if len(t) > maxTypeShown {
		return t[:maxTypeShown] + "…"
	}
	return t
}
