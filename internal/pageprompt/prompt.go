// Package pageprompt is the loopback page where the person types a password or
// one-time code for an agent's request.
//
// Each prompt is its own HTTP server on 127.0.0.1 at a random port, with a
// random nonce as its only path. It serves one page, accepts one answer
// (submit or cancel) and then shuts down.
//
// The plaintext never leaves the page: the page's script encrypts what
// the human typed to an X25519 key made for this one prompt (HKDF-SHA256,
// AES-256-GCM, bound to the prompt's nonce and the action; see seal.go and
// PROTOCOL.md) and posts only that. The private key lives in this
// process's memory only. So a DevTools client recording the browser, or
// another local user who binds the port once this process is gone, gets
// nothing usable.
//
// The prompt binds itself to the first client that loads the form: that
// GET sets a random cookie, and only requests carrying it get the form
// again (a reload) or may answer. A GET without it after that burns the
// prompt, so whoever else learns the URL can at worst make the request
// fail visibly; they can neither answer it nor see the form's CSRF token.
//
// A prompt dies with its request: its page disables itself at its
// deadline (with or without this process) and as soon as the prompt ends
// (it holds a watch request open, which ends then). A prompt that ends
// without an answer keeps its port until its budget runs out, answering
// every request with 410, so no one else can take the port while the
// page may still be on screen.
//
// The value is decrypted into a fresh []byte that goes to Wait's caller;
// it is never turned into a string, logged, or echoed in a response.
//
// Limits of "where Go allows": net/http reads the request through its own
// connection buffer, and crypto/ecdh and crypto/aes keep key material this
// package cannot zero (the answer is ciphertext there, the keys die with
// the prompt).
package pageprompt

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// Errors Wait returns when there is no answer to hand over.
var (
	// ErrClosed: Close was called before an answer was collected (an
	// uncollected value was zeroed), or the answer was already collected.
	ErrClosed = errors.New("prompt closed")
	// ErrExpired: the budget in PromptInfo ran out. It wraps
	// context.DeadlineExceeded, like a Wait whose own deadline passed.
	ErrExpired = fmt.Errorf("prompt budget ran out: %w", context.DeadlineExceeded)
	// ErrBurned: a request carried a query string, so a value may sit in
	// the browser's history. The prompt closed without reading it; ask
	// again with a new prompt.
	ErrBurned = errors.New("prompt burned: a request carried a value in its URL, which was discarded")
	// ErrSecondClient: the form was loaded by a client without the cookie
	// the first client got. The prompt URL reached someone besides the
	// human's browser (or the browser lost the cookie), so the prompt
	// closed; ask again with a new prompt.
	ErrSecondClient = errors.New("prompt burned: the prompt was opened by a second client; nothing was typed")
)

// Timeouts of the prompt's HTTP server. None of them bounds the human:
// the time between loading the page and answering is idle time.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 16 << 10
	// drainGrace is how long the server, closed after an answer, lets
	// requests already in flight finish before it drops them.
	drainGrace = 3 * time.Second
)

// Config holds the options of a prompt. The zero Config is ready to use.
type Config struct {
	// Logger receives one record per event: open, refusal, answer, close.
	// Records never hold a value, the URL, the nonce or the CSRF token.
	// Nil discards them.
	Logger *slog.Logger
}

var (
	_ fill.Prompter = Start
	_ fill.Prompter = Config{}.Start
)

// Start opens a prompt with the zero Config. See Config.Start.
func Start(ctx context.Context, info fill.PromptInfo) (fill.Prompt, error) {
	return Config{}.Start(ctx, info)
}

// Start opens a prompt for info: it listens on 127.0.0.1 at a random port
// and serves the form at a random path until an answer, Close, the budget
// (info.Budget, when positive) or the end of ctx, whichever comes first.
// ctx bounds the prompt's request, not its port: a prompt that ends
// without an answer keeps its port, answering 410, until its budget ends.
func (c Config) Start(ctx context.Context, info fill.PromptInfo) (fill.Prompt, error) {
	if err := checkInfo(info); err != nil {
		return nil, fmt.Errorf("start prompt: %w", err)
	}
	nonce, err := randomToken()
	if err != nil {
		return nil, fmt.Errorf("start prompt: nonce: %w", err)
	}
	csrf, err := randomToken()
	if err != nil {
		return nil, fmt.Errorf("start prompt: csrf token: %w", err)
	}
	cookie, err := randomToken()
	if err != nil {
		return nil, fmt.Errorf("start prompt: cookie: %w", err)
	}
	key, err := newAnswerKey()
	if err != nil {
		return nil, fmt.Errorf("start prompt: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start prompt: listen on loopback: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("port", port, "service", info.Service, "field", info.Field)

	var deadline time.Time
	if info.Budget > 0 {
		deadline = time.Now().Add(info.Budget)
	}
	p := &prompt{
		host:     host,
		origin:   "http://" + host,
		path:     "/" + nonce,
		csrf:     []byte(csrf),
		cookie:   []byte(cookie),
		deadline: deadline,
		key:      key,
		offer:    offerOf(info),
		log:      log,
		served:   make(chan struct{}),
		done:     make(chan struct{}),
	}
	p.page = newFormData(info, p.path, csrf, key.publicB64(), deadline)
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          stdlog.New(firstLine{log}, "", 0),
	}
	go func() {
		defer close(p.served)
		_ = p.srv.Serve(ln) // always ErrServerClosed after Close or Shutdown
	}()
	// The callbacks lock mu before they read timer or unwatch.
	p.mu.Lock()
	if info.Budget > 0 {
		p.timer = time.AfterFunc(info.Budget, p.expire)
	}
	p.unwatch = context.AfterFunc(ctx, func() { _ = p.Close() })
	p.mu.Unlock()
	log.Info("prompt open", "agent", info.Agent.String(), "budget", info.Budget)
	return p, nil
}

// checkInfo refuses a PromptInfo the page could not describe honestly.
func checkInfo(info fill.PromptInfo) error {
	switch {
	case info.Service == "":
		return errors.New("no service")
	case info.Origin == "":
		return errors.New("no origin")
	case info.Field != fill.FieldPassword && info.Field != fill.FieldOTP:
		return fmt.Errorf("field kind %q: want %q or %q", info.Field, fill.FieldPassword, fill.FieldOTP)
	case info.Budget < 0:
		return errors.New("negative budget")
	case info.From == "" && (len(info.Accounts) > 0 || info.Ask != ""):
		return errors.New("accounts to pick or something to ask, with no saved value to approve")
	case len(info.Accounts) == 1:
		return errors.New("one account to pick from")
	}
	for i, a := range info.Accounts {
		if a == "" || slices.Contains(info.Accounts[:i], a) {
			return errors.New("an empty or repeated account to pick")
		}
	}
	return nil
}

// offer is what the prompt offers besides typing a value, which decides
// which answers it takes.
type offer struct {
	from     bool     // a saved value to approve
	accounts []string // accounts to pick among, or none
	ask      bool     // the store needs something typed to approve
	remember bool     // remembering a typed value
}

func offerOf(info fill.PromptInfo) offer {
	return offer{from: info.From != "", accounts: slices.Clone(info.Accounts), ask: info.Ask != "", remember: info.Remember}
}

// pick checks the account an answer names (nil: none) against the ones
// offered; an approval must name one when there is a choice.
func (o offer) pick(account *string, approval bool) (string, error) {
	switch {
	case account == nil && approval && len(o.accounts) > 0:
		return "", errors.New("the answer picks no account")
	case account == nil:
		return "", nil
	case len(o.accounts) == 0:
		return "", errors.New("the answer picks an account, and the prompt offered none")
	case !slices.Contains(o.accounts, *account):
		return "", errors.New("the answer picks an account the prompt did not offer")
	}
	return *account, nil
}

// randomToken is 256 random bits, base64url without padding.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// prompt is one open prompt: its server, and the answer until Wait takes
// it.
type prompt struct {
	host     string // "127.0.0.1:<port>": the only Host header accepted
	origin   string // "http://127.0.0.1:<port>": the only Origin a POST may carry
	path     string // "/<nonce>": the only path served
	csrf     []byte // the form's token
	cookie   []byte // the value of the cookie that binds the prompt to its first client
	deadline time.Time
	page     formData
	offer    offer
	log      *slog.Logger

	srv    *http.Server
	served chan struct{} // closed when Serve returned

	done     chan struct{} // closed once the prompt has an outcome
	doneOnce sync.Once

	mu        sync.Mutex
	key       *answerKey  // the prompt's key pair, until it ends
	timer     *time.Timer // the budget, or nil
	unwatch   func() bool // stops watching Start's ctx
	bound     bool        // the form was served once: the cookie is out
	ended     bool        // an outcome is set: every later request gets 410
	answered  bool        // the outcome is the human's answer (submit or cancel)
	answer    fill.Answer // the human's answer, until Wait takes it
	hasAnswer bool
	endErr    error // what Wait returns when there is no answer to take
}

// URL is the page's address. It goes to the browser, never to the agent.
func (p *prompt) URL() string { return p.origin + p.path }

// Loaded reports whether a browser loaded the form: the prompt bound
// itself to its first client. A prompt nobody loaded was never seen.
func (p *prompt) Loaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bound
}

// Wait blocks until the prompt has an outcome or ctx ends. It hands over
// the answer once; the caller owns Answer.Value and must zero it. Without
// an answer it returns ctx.Err(), ErrClosed, ErrExpired, ErrBurned or
// ErrSecondClient.
func (p *prompt) Wait(ctx context.Context) (fill.Answer, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return fill.Answer{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasAnswer {
		return fill.Answer{}, p.endErr
	}
	a := p.answer
	p.answer, p.hasAnswer, p.endErr = fill.Answer{}, false, ErrClosed
	return a, nil
}

// Close ends the prompt at once and burns the nonce; an answer nobody
// collected is zeroed. After an answer the server stops now (until then
// it held the port, answering 410, while the page's window closed).
// Without one (the request ended early) the page's watch ends, so the page
// disables itself, and the port stays bound, answering every request with
// 410, until the budget runs out: nobody else can bind it and receive what
// an open page might still send. It is safe to call more than once and from
// several goroutines.
func (p *prompt) Close() error {
	p.mu.Lock()
	if p.hasAnswer {
		p.answer.Zero()
		p.answer, p.hasAnswer = fill.Answer{}, false
		p.endErr = ErrClosed
	}
	if !p.ended {
		p.ended, p.endErr, p.key = true, ErrClosed, nil
	}
	answered := p.answered
	p.mu.Unlock()
	p.publish()
	if !answered && time.Until(p.deadline) > 0 {
		p.stopWatching(false) // the budget timer ends the hold
		p.log.Debug("prompt closed; its port is held until the budget ends")
		return nil
	}
	p.stopWatching(true)
	if answered {
		// Requests in flight (the final page among them) get drainGrace.
		ctx, cancel := context.WithTimeout(context.Background(), drainGrace)
		_ = p.srv.Shutdown(ctx)
		cancel()
	}
	err := p.srv.Close()
	<-p.served
	p.log.Debug("prompt closed")
	if err != nil {
		return fmt.Errorf("close prompt server: %w", err)
	}
	return nil
}

// settle sets the prompt's outcome, once: an answer (a may be nil) and the
// error Wait returns when there is no answer. It reports false when the
// prompt already had an outcome; the caller then zeroes a.Value itself.
// It does not wake Wait: publish does, once the final page is on its way.
// The prompt's key goes with its outcome.
func (p *prompt) settle(a *fill.Answer, err error) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return false
	}
	p.ended, p.endErr, p.key = true, err, nil
	if a != nil {
		p.answer, p.hasAnswer, p.answered = *a, true, true
	}
	return true
}

// answerKey is the prompt's key, or nil once the prompt ended.
func (p *prompt) answerKey() *answerKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.key
}

// binding says what a GET of the form is to the prompt's binding.
type binding int

const (
	bindFirst  binding = iota // the first GET: it gets the cookie
	bindSame                  // a later GET with the cookie: a reload
	bindSecond                // a later GET without it: another client
)

// bind records a GET of the form: the first binds the prompt to its
// client; later ones are told apart by hasCookie.
func (p *prompt) bind(hasCookie bool) binding {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.bound:
		p.bound = true
		return bindFirst
	case hasCookie:
		return bindSame
	}
	return bindSecond
}

// isEnded reports whether the prompt already has an outcome.
func (p *prompt) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// publish wakes Wait (and ends the page's watch).
func (p *prompt) publish() { p.doneOnce.Do(func() { close(p.done) }) }

// stopWatching stops the watch on Start's ctx and, with budget, the
// budget timer too.
func (p *prompt) stopWatching(budget bool) {
	p.mu.Lock()
	timer, unwatch := p.timer, p.unwatch
	p.mu.Unlock()
	if budget && timer != nil {
		timer.Stop()
	}
	unwatch()
}

// expire ends a prompt whose budget ran out, and ends the hold on the
// port of one that ended early.
func (p *prompt) expire() {
	if p.settle(nil, ErrExpired) {
		p.log.Info("prompt expired")
		p.publish()
	}
	p.stopWatching(false)
	_ = p.srv.Close()
}

// firstLine is the prompt server's error log: the first line of each
// message, as a debug record. A handler's panic comes with a stack trace,
// whose argument words could be the sizes of buffers that held the value;
// it never reaches the log.
type firstLine struct{ log *slog.Logger }

func (f firstLine) Write(b []byte) (int, error) {
	line, _, _ := strings.Cut(string(b), "\n")
	f.log.Debug(line)
	return len(b), nil
}
