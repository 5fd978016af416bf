// Package fakecdp is a fake Chrome DevTools Protocol endpoint for unit
// tests of the CDP fallback: an httptest server on 127.0.0.1 speaking
// /json/version, /json/list and, over a WebSocket, the browser- and
// session-level methods internal/cdp uses, built from cdproto types.
//
// Pages are modelled, not rendered. Each frame has an origin and a focus:
// nothing, a field (with a kind, split and problem), or a child frame. The
// in-page function's ops (probe, activeFrame, insert) are answered from
// that model the way extension/inpage.js answers them, so tests can move
// the focus, navigate a frame or close a tab between Inspect and Insert.
// A value the fake receives is kept in memory only; tests ask
// ValueEquals, never read it.
package fakecdp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/coder/websocket"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakepage"
)

// Server is the fake endpoint. Its methods are safe for concurrent use.
type Server struct {
	// URL is the endpoint's http://127.0.0.1:port.
	URL string

	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	browser  string // the browser id in the WebSocket path
	wsURL    string // what /json/version reports; "" means the real one
	targets  []*Target
	frames   []*Frame // every frame ever added
	sessions map[string]*session
	conns    map[*conn]bool
	hungUp   chan struct{} // closed and replaced whenever a client's connection ends
	calls    []Call
	nextID   int
	contexts map[string]bool // browser contexts made with Target.createBrowserContext, while they live
}

// Call is one method the fake received: its name and the target it was
// sent to ("" for the browser). Parameters are not kept: one of them may
// be a value.
type Call struct {
	Method string
	Target string
}

// Target is a page or an out-of-process iframe target.
type Target struct {
	ID   string
	Type string // "page" or "iframe"
	Root *Frame
	// URL is the target's URL as listed (a page's path is part of it).
	URL string
	// Context is the browser context the target was made in ("" for the
	// default one).
	Context string
	hidden  bool // a background tab: its document is not visible
	closed  bool
}

// SetHidden makes the page a background tab (its document not visible),
// or the tab in front of its window again.
func (t *Target) SetHidden(hidden bool) {
	t.Root.s.mu.Lock()
	defer t.Root.s.mu.Unlock()
	t.hidden = hidden
}

// Frame is one frame of a page.
type Frame struct {
	ID     string
	s      *Server
	target *Target // the target whose process the frame lives in
	parent *Frame
	origin string
	gen    int // bumped by a navigation: isolated worlds of older ones are gone

	focusChild *Frame         // the focused element is this child's frame element
	field      fill.FieldInfo // the focused field, when focusChild is nil
	element    int            // the focused element's identity; 0 = nothing focused
	frameIssue string         // a problem of this frame's own element in its parent

	// NotMatched makes inserts report matched=false (a page that cut the
	// value short).
	NotMatched bool
	// Throw makes every call of the in-page function throw in this frame,
	// ThrowOnInsert only the insert.
	Throw, ThrowOnInsert bool
	// After is what the page does once a value is in: how it answers the
	// submit (tests/fakes/fakepage). GoesAway answers the insert call with
	// Chromium's "Inspected target navigated or closed", after the mark
	// the in-page function sends through its binding.
	After fakepage.Page
	// LeavesBeforeInsert makes the document go before the insert: the
	// call ends in "Inspected target navigated or closed" with no mark
	// and nothing inserted.
	LeavesBeforeInsert bool

	form    *fill.FormInfo // the focused field's form; nil: no form
	value   []byte         // the last inserted value
	holds   bool           // the field still holds it
	submits int
}

// session is one attached CDP session.
type session struct {
	id     string
	target *Target
	conn   *conn
	worlds map[string]*worldState // by unique context id
}

// worldState is one isolated world: its frame, the document generation
// it was made for, and the tokens its probes remembered.
type worldState struct {
	frame  *Frame
	gen    int
	tokens map[string]remembered
}

type remembered struct {
	element int
	kind    string
}

// conn is one WebSocket connection.
type conn struct {
	ws       *websocket.Conn
	mu       sync.Mutex
	discover bool
}

// New starts a fake endpoint with no targets; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, browser: newID(), sessions: map[string]*session{}, conns: map[*conn]bool{}, hungUp: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/version", s.version)
	mux.HandleFunc("/json/list", s.list)
	mux.HandleFunc("/devtools/browser/", s.socket)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and drops every connection.
func (s *Server) Close() {
	s.DropConnections()
	s.srv.Close()
}

// DropConnections closes every WebSocket, as a browser that quits does.
func (s *Server) DropConnections() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.ws.CloseNow()
	}
}

// WebSocketURL is the browser's real WebSocket URL.
func (s *Server) WebSocketURL() string {
	return "ws://" + strings.TrimPrefix(s.URL, "http://") + "/devtools/browser/" + s.browser
}

// SetWebSocketURL makes /json/version report u instead (to test the
// host-mismatch refusal).
func (s *Server) SetWebSocketURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wsURL = u
}

// AddPage adds a page target showing rawURL (its origin is the top
// frame's origin).
func (s *Server) AddPage(rawURL string) *Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addPageLocked(rawURL)
}

func (s *Server) addPageLocked(rawURL string) *Target {
	id := newID()
	t := &Target{ID: id, Type: "page", URL: rawURL}
	t.Root = &Frame{ID: id, s: s, target: t, origin: originOf(rawURL)}
	s.targets = append(s.targets, t)
	s.frames = append(s.frames, t.Root)
	return t
}

// AddFrame adds a child frame showing origin under f. An out-of-process
// frame gets its own "iframe" target whose id is the frame id.
func (f *Frame) AddFrame(origin string, outOfProcess bool) *Frame {
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Frame{ID: newID(), s: s, target: f.target, parent: f, origin: origin}
	if outOfProcess {
		t := &Target{ID: c.ID, Type: "iframe", URL: origin + "/frame", Root: c}
		c.target = t
		s.targets = append(s.targets, t)
	}
	s.frames = append(s.frames, c)
	return c
}

// Focus makes a field of kind field.Kind the focused element of f, and
// every frame element on the way from the top to f focused in its parent.
func (f *Frame) Focus(field fill.FieldInfo) {
	s := f.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	f.focusChild, f.field, f.element = nil, field, s.nextID
	for c, p := f, f.parent; p != nil; c, p = p, p.parent {
		p.focusChild, p.field, p.element = c, fill.FieldInfo{Kind: fill.FieldNone}, 0
	}
}

// SetForm sets the focused field's form, as probe reports it (nil: a
// field in no form). Changing it between Inspect and Insert makes the
// insert answer form_changed.
func (f *Frame) SetForm(form *fill.FormInfo) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.form = form
}

// FieldHolds reports whether the field still holds the last inserted
// value (then none, or a page that put it back).
func (f *Frame) FieldHolds() bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.holds
}

// Submits counts the inserts into f that a submit followed.
func (f *Frame) Submits() int {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.submits
}

// Blur leaves nothing focused in f.
func (f *Frame) Blur() {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.focusChild, f.field, f.element = nil, fill.FieldInfo{Kind: fill.FieldNone}, 0
}

// SetFieldProblem changes the focused field's problem (it became hidden,
// disabled, ...) without changing the element.
func (f *Frame) SetFieldProblem(problem string) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.field.Problem = problem
}

// SetFieldKind changes the focused field's kind (a page script changed its
// type) without changing the element.
func (f *Frame) SetFieldKind(kind string) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.field.Kind = kind
}

// SetFrameProblem makes f's own frame element report problem (hidden,
// covered, ...) when its parent is probed.
func (f *Frame) SetFrameProblem(problem string) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.frameIssue = problem
}

// Navigate loads a new document showing origin in f: its isolated worlds
// and remembered elements are gone and nothing is focused.
func (f *Frame) Navigate(origin string) {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	f.origin = origin
	f.gen++
	f.focusChild, f.field, f.element, f.form = nil, fill.FieldInfo{Kind: fill.FieldNone}, 0, nil
}

// ValueEquals reports whether the last value inserted into f equals b.
func (f *Frame) ValueEquals(b []byte) bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.value != nil && bytes.Equal(f.value, b)
}

// Inserted reports whether anything was inserted into f.
func (f *Frame) Inserted() bool {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	return f.value != nil
}

// CloseTarget closes a target as the user closing the tab would: its
// sessions are detached and, where asked for, targetDestroyed is sent.
func (s *Server) CloseTarget(id string) {
	s.mu.Lock()
	events := s.closeLocked(id)
	s.mu.Unlock()
	for _, e := range events {
		e.send()
	}
}

// Contexts lists the browser contexts made over CDP and not yet
// disposed.
func (s *Server) Contexts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.contexts {
		out = append(out, id)
	}
	return out
}

// Targets lists the targets still open.
func (s *Server) Targets() []*Target {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Target
	for _, t := range s.targets {
		if !t.closed {
			out = append(out, t)
		}
	}
	return out
}

// Calls returns the methods received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Disconnected waits until no client is connected (a browser detaches a
// client's sessions when its connection ends, as this server does).
func (s *Server) Disconnected(ctx context.Context) error {
	for {
		s.mu.Lock()
		n, hungUp := len(s.conns), s.hungUp
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("fakecdp: %d clients still connected: %w", n, ctx.Err())
		case <-hungUp:
		}
	}
}

// Sessions counts the sessions still attached.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ws := s.wsURL
	s.mu.Unlock()
	if ws == "" {
		ws = s.WebSocketURL()
	}
	writeJSON(w, map[string]string{"Browser": "FakeChrome/1.0", "Protocol-Version": "1.3", "webSocketDebuggerUrl": ws})
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	type entry struct {
		ID    string `json:"id"`
		Type  string `json:"type"`
		URL   string `json:"url"`
		Title string `json:"title"`
	}
	var out []entry
	for _, t := range s.Targets() {
		out = append(out, entry{ID: t.ID, Type: t.Type, URL: t.URL, Title: "fake"})
	}
	writeJSON(w, out)
}

func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/devtools/browser/"+s.browser {
		http.NotFound(w, r)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(64 << 20)
	c := &conn{ws: ws}
	s.mu.Lock()
	s.conns[c] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		for id, ss := range s.sessions {
			if ss.conn == c {
				delete(s.sessions, id)
			}
		}
		close(s.hungUp)
		s.hungUp = make(chan struct{})
		s.mu.Unlock()
		_ = ws.CloseNow()
	}()
	ctx := context.Background()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var msg cdproto.Message
		if err := jsonv2.Unmarshal(data, &msg); err != nil {
			s.t.Errorf("fakecdp: malformed message")
			return
		}
		clear(data)
		s.handle(c, &msg)
		clear(msg.Params)
	}
}

// outgoing is an event or reply to write after the lock is released.
type outgoing struct {
	c   *conn
	msg *cdproto.Message
}

func (o outgoing) send() {
	// encoding/json keeps an empty result object ("result":{}), which
	// json v2's omitempty would drop; clients need it.
	w := struct {
		ID        int64           `json:"id,omitempty"`
		SessionID string          `json:"sessionId,omitempty"`
		Method    string          `json:"method,omitempty"`
		Params    json.RawMessage `json:"params,omitempty"`
		Result    json.RawMessage `json:"result,omitempty"`
		Error     *cdproto.Error  `json:"error,omitempty"`
	}{o.msg.ID, string(o.msg.SessionID), string(o.msg.Method), json.RawMessage(o.msg.Params), json.RawMessage(o.msg.Result), o.msg.Error}
	data, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	o.c.mu.Lock()
	defer o.c.mu.Unlock()
	_ = o.c.ws.Write(context.Background(), websocket.MessageText, data)
}

// handle answers one message: events first, then the reply.
func (s *Server) handle(c *conn, msg *cdproto.Message) {
	s.mu.Lock()
	var tgt string
	var ss *session
	if msg.SessionID != "" {
		ss = s.sessions[string(msg.SessionID)]
		if ss != nil {
			tgt = ss.target.ID
		}
	}
	s.calls = append(s.calls, Call{Method: string(msg.Method), Target: tgt})
	var out []outgoing
	var result any
	var cerr *cdproto.Error
	if msg.SessionID != "" {
		if ss == nil || ss.target.closed {
			cerr = &cdproto.Error{Code: -32001, Message: "Session with given id not found."}
		} else {
			result, out, cerr = s.sessionMethod(ss, msg)
		}
	} else {
		result, out, cerr = s.browserMethod(c, msg)
	}
	s.mu.Unlock()

	for _, o := range out {
		o.send()
	}
	reply := &cdproto.Message{ID: msg.ID, SessionID: msg.SessionID}
	if cerr != nil {
		reply.Error = cerr
	} else {
		if result == nil {
			result = struct{}{}
		}
		raw, err := jsonv2.Marshal(result)
		if err != nil {
			panic(err)
		}
		reply.Result = raw
	}
	outgoing{c: c, msg: reply}.send()
}

// event builds an event message.
func event(c *conn, sessionID, method string, params any) outgoing {
	raw, err := jsonv2.Marshal(params)
	if err != nil {
		panic(err)
	}
	return outgoing{c: c, msg: &cdproto.Message{SessionID: targetSession(sessionID), Method: cdproto.MethodType(method), Params: raw}}
}

// closeLocked marks a target closed, detaches its sessions and returns the
// events to send.
func (s *Server) closeLocked(id string) []outgoing {
	var out []outgoing
	for _, t := range s.targets {
		if t.ID != id || t.closed {
			continue
		}
		t.closed = true
		for sid, ss := range s.sessions {
			if ss.target == t {
				delete(s.sessions, sid)
				out = append(out, event(ss.conn, "", "Target.detachedFromTarget", map[string]string{"sessionId": sid, "targetId": id}))
			}
		}
		for c := range s.conns {
			if c.discover {
				out = append(out, event(c, "", "Target.targetDestroyed", map[string]string{"targetId": id}))
			}
		}
	}
	return out
}

func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return strings.ToUpper(hex.EncodeToString(b))
}

func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "null"
	}
	return u.Scheme + "://" + u.Host
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func errorf(code int64, format string, args ...any) *cdproto.Error {
	return &cdproto.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
