package nativeprompt

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/pinentry"
	"github.com/fillgate/fillgate/internal/pinentry/pinentrytest"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// step is one dialog the fake person expects, and how they answer it.
type step struct {
	// cmd is "GETPIN" or "CONFIRM"; ok is the OK button the dialog
	// must have (it tells the dialogs apart).
	cmd, ok string
	reply   pinentrytest.Reply
}

// fakePerson answers the dialogs of one Ask with steps, in order, and
// records what each dialog showed.
type fakePerson struct {
	t     *testing.T
	mu    sync.Mutex
	steps []step
	seen  []pinentrytest.Request
	// opened and closed count the pinentry sessions: every one opened
	// must be closed by the time Ask returns.
	opened, closed int
}

// answer is the fake pinentry's person.
func (p *fakePerson) answer(r pinentrytest.Request) pinentrytest.Reply {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, r)
	i := len(p.seen) - 1
	if i >= len(p.steps) {
		p.t.Errorf("dialog %d (%s %q) is one more than expected", i+1, r.Command, r.Dialog.OK)
		return pinentrytest.Reply{Err: pinentrytest.Canceled}
	}
	s := p.steps[i]
	if r.Command != s.cmd || r.Dialog.OK != s.ok {
		p.t.Errorf("dialog %d is %s with OK %q, want %s with OK %q", i+1, r.Command, r.Dialog.OK, s.cmd, s.ok)
	}
	return s.reply
}

// start is pinentryBackend.start over the fake.
func (p *fakePerson) start(ctx context.Context, program string, env []string) (session, error) {
	c, stop, err := pinentrytest.Pipe(ctx, p.answer)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.opened++
	p.mu.Unlock()
	return &fakeSession{Conn: c, stop: func() {
		stop()
		p.mu.Lock()
		p.closed++
		p.mu.Unlock()
	}}, nil
}

// fakeSession is a session over the fake.
type fakeSession struct {
	*pinentry.Conn
	stop func()
	once sync.Once
}

// Close ends the fake.
func (s *fakeSession) Close() { s.once.Do(s.stop) }

// dialogs returns what the person saw.
func (p *fakePerson) dialogs() []pinentrytest.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]pinentrytest.Request(nil), p.seen...)
}

// harness is a Dialog over a fake pinentry, with its log.
type harness struct {
	*Dialog
	person *fakePerson
	log    *syncbuf.Buffer
}

// newHarness is a Dialog whose dialogs the fake person answers with
// steps.
func newHarness(t *testing.T, steps ...step) *harness {
	t.Helper()
	p := &fakePerson{t: t, steps: steps}
	log := &syncbuf.Buffer{}
	d := New(Config{
		Env: func(k string) string {
			return map[string]string{"DISPLAY": ":4242", "PATH": "/agent/bin", "SECRET_TOKEN": "x"}[k]
		},
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	d.platform = func(cfg Config) (backend, error) {
		b := newPinentry("/usr/bin/pinentry-fake", dialogEnv(cfg.Env))
		b.start = p.start
		return b, nil
	}
	h := &harness{Dialog: d, person: p, log: log}
	t.Cleanup(func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.opened != p.closed {
			t.Errorf("%d pinentry sessions opened, %d closed", p.opened, p.closed)
		}
		if len(p.seen) < len(p.steps) {
			t.Errorf("%d dialogs shown, want %d", len(p.seen), len(p.steps))
		}
	})
	return h
}

// info is a realistic request.
func info() fill.PromptInfo {
	return fill.PromptInfo{
		Agent:   fill.Agent{Name: "claude", PID: 4121, Via: "fillgate fill"},
		Service: "github.com",
		Origin:  "https://github.com",
		Field:   fill.FieldPassword,
		Via:     fill.ViaExtension,
		Budget:  time.Minute,
		Account: "alice@example.com",
	}
}

// Replies of the fake person.
var (
	okReply     = pinentrytest.Reply{}
	cancelReply = pinentrytest.Reply{Err: pinentrytest.Canceled}
	notOKReply  = pinentrytest.Reply{Err: pinentrytest.NotConfirmed}
)

// typeReply types v.
func typeReply(v []byte) pinentrytest.Reply { return pinentrytest.Reply{PIN: v} }

// noLeak fails t if the secret is in the log or the error.
func noLeak(t *testing.T, h *harness, err error, secrets ...[]byte) {
	t.Helper()
	for _, s := range secrets {
		leakscan.Bytes(t, s, "the log", h.log.Bytes())
		if err != nil {
			leakscan.Bytes(t, s, "the error", []byte(err.Error()))
		}
	}
}

// contains fails t unless s holds every want.
func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}
