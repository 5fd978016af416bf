// Package fakeext is an in-memory stand-in for fillgate's MV3 extension, for
// host-core tests. It speaks the native-messaging framing over any
// reader/writer pair (Connect makes in-memory pipes) and answers the host as
// PROTOCOL.md section 2 says: it says hello, inspects a page the test
// describes, opens and closes prompt windows, and re-checks the page before
// it "inserts" a value, in the order the real extension does (the worker's
// checks, then the in-page function's; see Ext.insert).
//
// An inserted value is kept in memory only so that a test can ask
// ValueEquals; the fake never prints, logs or returns it, and the messages
// it records have their value redacted. After the insert the fake page
// answers the submit as tests/fakes/fakepage models it.
package fakeext

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/tests/fakes/fakepage"
)

// Page is the browser state the fake shows: the active tab and what is
// focused in it. Tests change it with Ext.Update, e.g. between inspect and
// insert.
type Page struct {
	Tab   int64
	Frame int64 // the frame holding the focused field; 0 is the top frame
	// Origins lists the focused frame's origin first, then each frame
	// above it up to the top: the focus chain. A field in the top frame
	// has one origin.
	Origins []string
	Field   fill.FieldInfo
	// FrameProblem is the first problem of a frame element on the way
	// down to the focused frame (a hidden or covered iframe): inspect and
	// peek report it as the field's problem, and an insert into a frame
	// is refused for it (not_usable) before the frame itself is asked.
	FrameProblem string
	// Element names the focused element. Changing it between inspect and
	// insert means focus moved to another element.
	Element string
	// Detached means the element remembered at inspect time was removed
	// from the page.
	Detached bool
	// NoTab means there is no active tab: inspect fails with no_tab and
	// insert answers tab_gone.
	NoTab bool
	// NoAccess means the page cannot be scripted: inspect fails with
	// no_access, peek sees no focus chain, and an insert finds no chain
	// into a frame (origin_changed) or cannot run in the top frame (an
	// internal error).
	NoAccess bool
	// Background means the tab is not the active tab of its window: an
	// inspect that pins it fails with not_active.
	Background bool
	// RejectInsert makes the in-page insert itself fail (insert_failed).
	RejectInsert bool
	// WrongLength makes the insert report matched=false.
	WrongLength bool
	// Form is the focused field's form as inspect reports it (nil: a
	// field in no form). An insert whose form differs from it (the page
	// changed it in between) is refused with form_changed.
	Form *fill.FormInfo
	// After is what the page does once the value is in: how it answers
	// the submit (tests/fakes/fakepage).
	After fakepage.Page
	// Account is the user name the focused field's form shows, as the
	// probe reports it ("" for none).
	Account string
	// Attached is how many of the browser's targets have a debugger
	// attached, Webdriver whether automation is on, and Others how many
	// other extensions could drive the browser, as the drivable request
	// reports them (by default: none, off, none).
	Attached  int
	Webdriver bool
	Others    int
}

// Options configures a fake extension.
type Options struct {
	Version   string // sent in hello; default "0.1.0"
	UserAgent string // sent in hello; default "fakeext"
	Paused    bool   // the popup's pause switch at start
	NoHello   bool   // do not say hello on start
	// Instance is sent in hello: the extension's random per-profile id,
	// which the host compares to refuse a second connection from the
	// same browser and profile. "" sends none, as an extension from
	// before it did (the host then cannot tell a second connection).
	Instance string
	Page     Page // the initial page
	// OnOpenPrompt, if set, is called on a goroutine of its own after the
	// fake has answered open_prompt, e.g. to let a fake human answer the
	// prompt at url.
	OnOpenPrompt func(url string, window int64)
}

// Message is a message the fake received from the host. Raw is the message
// with any "value" member replaced by "[redacted]".
type Message struct {
	ID   *int64 // nil for a notice
	Type string
	Raw  json.RawMessage
}

// remembered is what an inspect token stands for: the focused element of
// one frame, and its kind and box count then.
type remembered struct {
	tab, frame int64
	element    string
	kind       string
	split      int
}

// Ext is a running fake extension.
type Ext struct {
	r       io.Reader
	w       *nativemsg.Writer
	closers []io.Closer
	opt     Options

	mu           sync.Mutex
	page         Page
	paused       bool
	tokens       map[string]remembered
	windows      map[int64]bool // open prompt windows
	nextWindow   int64
	value        []byte // the last inserted value; only ValueEquals reads it
	inserts      int
	holds        bool // the page's field still holds the last inserted value
	submits      int  // inserts followed by a submit
	received     []Message
	changed      chan struct{} // closed and replaced whenever received grows
	disconnectOn map[string]bool
	ignore       map[string]bool
	fail         map[string][2]string // type → error code, detail
	notices      []fill.Notice        // the notifications shown
	failNotices  bool                 // notifications cannot be shown
	leases       []Lease              // the host's last leases notice

	out     [][]byte      // frames waiting for the writer goroutine
	outWake chan struct{} // cap 1

	done     chan struct{}
	doneOnce sync.Once
}

// New returns a fake extension that reads the host's messages from r and
// writes its own to w. Run starts it. If r or w are io.Closers, Disconnect
// closes them.
func New(r io.Reader, w io.Writer, opt Options) *Ext {
	if opt.Version == "" {
		opt.Version = "0.1.0"
	}
	if opt.UserAgent == "" {
		opt.UserAgent = "fakeext"
	}
	e := &Ext{
		r:            r,
		w:            nativemsg.NewWriter(w),
		opt:          opt,
		page:         clonePage(opt.Page),
		paused:       opt.Paused,
		tokens:       make(map[string]remembered),
		windows:      make(map[int64]bool),
		nextWindow:   100,
		changed:      make(chan struct{}),
		disconnectOn: make(map[string]bool),
		ignore:       make(map[string]bool),
		fail:         make(map[string][2]string),
		outWake:      make(chan struct{}, 1),
		done:         make(chan struct{}),
	}
	for _, c := range []any{r, w} {
		if c, ok := c.(io.Closer); ok {
			e.closers = append(e.closers, c)
		}
	}
	return e
}

// Connect starts a fake extension on in-memory pipes. The host reads from
// hostR and writes to hostW (pass them to nativemsg.NewPort). The fake runs
// until ctx ends, Disconnect or Close.
func Connect(ctx context.Context, opt Options) (e *Ext, hostR io.ReadCloser, hostW io.WriteCloser) {
	extR, hostW := io.Pipe()
	hostR, extW := io.Pipe()
	e = New(extR, extW, opt)
	go func() { _ = e.Run(ctx) }()
	return e, hostR, hostW
}

// Run says hello (unless Options.NoHello) and answers the host until its
// input ends, ctx ends or Disconnect is called. It returns nil at the end
// of input.
func (e *Ext) Run(ctx context.Context) error {
	go e.writeLoop()
	go func() {
		select {
		case <-ctx.Done():
			e.Disconnect()
		case <-e.done:
		}
	}()
	if !e.opt.NoHello {
		hello := map[string]any{"type": "hello", "version": e.opt.Version, "user_agent": e.opt.UserAgent, "paused": e.opt.Paused}
		if e.opt.Instance != "" {
			hello["instance"] = e.opt.Instance
		}
		e.send(hello)
	}
	for {
		body, err := nativemsg.ReadFrame(e.r)
		if err != nil {
			e.Disconnect()
			if errors.Is(err, io.EOF) {
				return nil
			}
			select {
			case <-e.done:
				return nil // we hung up ourselves
			default:
			}
			return fmt.Errorf("fakeext: read: %w", err)
		}
		e.handle(body)
	}
}

// Done is closed when the fake has disconnected.
func (e *Ext) Done() <-chan struct{} { return e.done }

// Disconnect hangs up, as when the browser closes or the extension reloads:
// the host's input ends and its writes fail. Later requests get no answer.
func (e *Ext) Disconnect() {
	e.doneOnce.Do(func() {
		close(e.done)
		for _, c := range e.closers {
			_ = c.Close()
		}
	})
}

// Close disconnects and forgets the inserted value (zeroing it).
func (e *Ext) Close() {
	e.Disconnect()
	e.mu.Lock()
	clear(e.value)
	e.value = nil
	e.mu.Unlock()
}

// send queues msg for the writer goroutine, so the fake never blocks its
// reader on a host that is busy writing to it.
func (e *Ext) send(msg any) {
	body, err := json.Marshal(msg)
	if err != nil {
		panic(fmt.Sprintf("fakeext: cannot encode its own message: %v", err))
	}
	e.mu.Lock()
	e.out = append(e.out, body)
	e.mu.Unlock()
	select {
	case e.outWake <- struct{}{}:
	default:
	}
}

func (e *Ext) writeLoop() {
	for {
		select {
		case <-e.done:
			return
		case <-e.outWake:
		}
		e.mu.Lock()
		out := e.out
		e.out = nil
		e.mu.Unlock()
		for _, body := range out {
			select {
			case <-e.done:
				return
			default:
			}
			if err := e.w.WriteFrame(body); err != nil {
				e.Disconnect()
				return
			}
		}
	}
}

// Update changes the page under the fake's lock.
func (e *Ext) Update(change func(p *Page)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	change(&e.page)
}

// SetPaused flips the popup's pause switch and sends the paused notice.
func (e *Ext) SetPaused(paused bool) {
	e.mu.Lock()
	e.paused = paused
	e.mu.Unlock()
	e.send(map[string]any{"type": "paused", "paused": paused})
}

// CloseWindow plays the human closing prompt window id: the fake sends
// prompt_closed for it.
func (e *Ext) CloseWindow(id int64) error {
	e.mu.Lock()
	open := e.windows[id]
	delete(e.windows, id)
	e.mu.Unlock()
	if !open {
		return fmt.Errorf("fakeext: no open prompt window %d", id)
	}
	e.send(map[string]any{"type": "prompt_closed", "window": id})
	return nil
}

// Windows returns the ids of the prompt windows open now.
func (e *Ext) Windows() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]int64, 0, len(e.windows))
	for id := range e.windows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// DisconnectOn makes the fake hang up, without answering, when a request
// of type typ arrives (e.g. "insert": a disconnect mid-request).
func (e *Ext) DisconnectOn(typ string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.disconnectOn[typ] = true
}

// Ignore makes the fake never answer requests of type typ.
func (e *Ext) Ignore(typ string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ignore[typ] = true
}

// Unignore undoes Ignore: requests of type typ are answered again.
func (e *Ext) Unignore(typ string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.ignore, typ)
}

// FailWith makes requests of type typ get an error reply with code and
// detail. An empty code restores normal answers.
func (e *Ext) FailWith(typ, code, detail string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if code == "" {
		delete(e.fail, typ)
		return
	}
	e.fail[typ] = [2]string{code, detail}
}

// ValueEquals reports whether the last inserted value equals b. It is the
// only way to learn anything about the value.
func (e *Ext) ValueEquals(b []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.value != nil && bytes.Equal(e.value, b)
}

// FieldHolds reports whether the page's field still holds the last
// inserted value (with then none, or a page that put it back).
func (e *Ext) FieldHolds() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.holds
}

// Submits counts the inserts that the form's submit followed.
func (e *Ext) Submits() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.submits
}

// Inserts counts the inserts the fake carried out.
func (e *Ext) Inserts() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inserts
}

// Received returns the messages received from the host so far, values
// redacted.
func (e *Ext) Received() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.received)
}

// Wait returns the first received message for which match is true, waiting
// for it until ctx ends.
func (e *Ext) Wait(ctx context.Context, match func(Message) bool) (Message, error) {
	seen := 0
	for {
		e.mu.Lock()
		msgs := e.received[seen:]
		changed := e.changed
		e.mu.Unlock()
		for _, m := range msgs {
			if match(m) {
				return m, nil
			}
		}
		seen += len(msgs)
		select {
		case <-ctx.Done():
			return Message{}, fmt.Errorf("fakeext: waiting for a message: %w", ctx.Err())
		case <-changed:
		}
	}
}

// OfType matches messages of type typ, for Wait.
func OfType(typ string) func(Message) bool {
	return func(m Message) bool { return m.Type == typ }
}

func clonePage(p Page) Page {
	p.Origins = slices.Clone(p.Origins)
	p.Form = cloneForm(p.Form)
	return p
}

func cloneForm(f *fill.FormInfo) *fill.FormInfo {
	if f == nil {
		return nil
	}
	c := *f
	if f.Submitter != nil {
		s := *f.Submitter
		c.Submitter = &s
	}
	return &c
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// Lease is one live lease as the host lists it for the popup.
type Lease struct {
	ID      string `json:"id"`
	Agent   string `json:"agent"`
	Service string `json:"service"`
	Field   string `json:"field"`
	Account string `json:"account"`
	Origin  string `json:"origin"`
	Until   string `json:"until"`
}

// gotLeases keeps the host's leases notice, as the popup shows it.
func (e *Ext) gotLeases(body []byte) {
	var n struct {
		Leases []Lease `json:"leases"`
	}
	if json.Unmarshal(body, &n) != nil {
		return
	}
	e.mu.Lock()
	e.leases = n.Leases
	e.mu.Unlock()
}

// Leases are the leases the host last listed (what the popup shows).
func (e *Ext) Leases() []Lease {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.leases)
}

// EndLease plays the person ending a lease in the popup: the fake sends
// end_lease for it.
func (e *Ext) EndLease(id string) {
	e.send(map[string]any{"type": "end_lease", "lease": id})
}

// Notices are the browser notifications the host had the fake show.
func (e *Ext) Notices() []fill.Notice {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.notices)
}

// FailNotices makes notify requests fail, as in a browser where the
// person turned notifications off.
func (e *Ext) FailNotices(fail bool) {
	e.mu.Lock()
	e.failNotices = fail
	e.mu.Unlock()
}
