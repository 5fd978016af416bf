package fakeext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
)

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for i, lit := range []string{
		`""`, `"plain"`, `"q\"b\\s\/"`, `"\b\f\n\r\t"`, `"\u0001\u001f"`,
		`"\u00e9 é"`, `"\ud83d\ude42 🙂"`, `"\u2028\u2029"`, `"lone \ud800 x"`, `"\ud800\u0041"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatalf("case %d: bad test literal: %v", i, err)
		}
		got, ok := unquote([]byte(lit))
		if !ok || string(got) != want {
			t.Errorf("case %d: unquote differs from encoding/json", i)
		}
	}
	for i, bad := range []string{``, `"`, `x`, `"a`, `"a"b"`, "\"\x01\"", `"\x"`, `"\u12"`, `"\u12g4"`, `"\"`} {
		if _, ok := unquote([]byte(bad)); ok {
			t.Errorf("bad case %d accepted", i)
		}
	}
}

func TestRedact(t *testing.T) {
	body := []byte(`{"id":4,"type":"insert","value":"hunter2-marker","kind":"password"}`)
	got := redact(body)
	if bytes.Contains(got, []byte("hunter2-marker")) {
		t.Fatal("value not redacted")
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil {
		t.Fatal(err)
	}
	if m["value"] != "[redacted]" || m["kind"] != "password" || m["type"] != "insert" {
		t.Fatalf("redacted record %s", got)
	}
	if string(redact([]byte(`{"type":"ping"}`))) != `{"type":"ping"}` {
		t.Fatal("a message without a value changed")
	}
}

// start runs a fake on pipes and gives the test a raw port to it.
func start(t *testing.T, opt Options) (*Ext, *nativemsg.Port, chan json.RawMessage) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ext, hostR, hostW := Connect(ctx, opt)
	notices := make(chan json.RawMessage, 16)
	port := nativemsg.NewPort(hostR, hostW, func(m json.RawMessage) { notices <- m })
	go func() { _ = port.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		ext.Close()
		hostR.Close()
		hostW.Close()
	})
	return ext, port, notices
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestHelloInstance: hello carries the extension's instance id when one
// is set, and no instance member otherwise.
func TestHelloInstance(t *testing.T) {
	for _, id := range []string{"6f0c1d", ""} {
		_, _, notices := start(t, Options{Instance: id})
		var hello map[string]any
		if err := json.Unmarshal(<-notices, &hello); err != nil || hello["type"] != "hello" {
			t.Fatal("first message is not hello")
		}
		got, has := hello["instance"]
		if (id == "") == has || (has && got != id) {
			t.Errorf("Instance %q: hello says instance %v (present %v)", id, got, has)
		}
	}
}

func TestHelloAndRequests(t *testing.T) {
	ext, port, notices := start(t, Options{UserAgent: "UA", Page: Page{Tab: 1, Origins: []string{"https://a.test"}, Field: fill.FieldInfo{Kind: fill.FieldPassword}}})
	var hello struct {
		Type      string
		UserAgent string `json:"user_agent"`
	}
	if err := json.Unmarshal(<-notices, &hello); err != nil || hello.Type != "hello" || hello.UserAgent != "UA" {
		t.Fatal("first message is not hello")
	}
	if _, err := port.Call(ctxT(t), map[string]string{"type": "frobnicate"}); err == nil || !strings.Contains(err.Error(), "bad_request") {
		t.Fatalf("unknown request: %v", err)
	}
	if _, err := port.Call(ctxT(t), map[string]any{"type": "close_prompt", "window": 5}); err == nil {
		t.Fatal("closing an unknown window succeeded")
	}
	if err := ext.CloseWindow(5); err == nil {
		t.Fatal("the human closed a window that was never opened")
	}
	reply, err := port.Call(ctxT(t), map[string]string{"type": "inspect"})
	if err != nil {
		t.Fatal(err)
	}
	var in struct{ Token string }
	if err := json.Unmarshal(reply, &in); err != nil || in.Token == "" {
		t.Fatalf("inspect reply %s", reply)
	}
	// An insert without a value passes the checks and inserts nothing,
	// as the in-page function answers a value that is no string.
	reply, err = port.Call(ctxT(t), map[string]any{"type": "insert", "tab": 1, "frame": 0, "token": in.Token,
		"origins": []string{"https://a.test"}, "kind": "password"})
	if err != nil || !strings.Contains(string(reply), `"reason":"insert_failed"`) || ext.Inserts() != 0 {
		t.Fatalf("insert without a value: %s, %v; want not_inserted, insert_failed", reply, err)
	}
	// One without its tab, frame, token or origins is a bad request.
	_, err = port.Call(ctxT(t), map[string]any{"type": "insert", "tab": 1, "frame": 0, "kind": "password", "value": "x"})
	var re *nativemsg.ReplyError
	if !errors.As(err, &re) || re.Code != "bad_request" || ext.Inserts() != 0 {
		t.Fatalf("insert without a token: %v; want a bad_request error", err)
	}
	if ext.ValueEquals(nil) || ext.ValueEquals([]byte{}) {
		t.Fatal("ValueEquals is true with nothing inserted")
	}
}

func TestRecordsMalformedAndNotices(t *testing.T) {
	ext, port, _ := start(t, Options{NoHello: true})
	if err := port.Notify(map[string]string{"type": "outcome", "service": "a.test"}); err != nil {
		t.Fatal(err)
	}
	m, err := ext.Wait(ctxT(t), OfType("outcome"))
	if err != nil || m.ID != nil {
		t.Fatalf("outcome notice: %+v, %v", m, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ext.Wait(ctx, OfType("never")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait after ctx end: %v", err)
	}
}

func TestDisconnectEndsHostInput(t *testing.T) {
	ext, port, _ := start(t, Options{})
	ext.Disconnect()
	<-port.Done()
	<-ext.Done()
	if _, err := port.Call(ctxT(t), map[string]string{"type": "ping"}); !errors.Is(err, nativemsg.ErrClosed) {
		t.Fatalf("call after disconnect: %v", err)
	}
}

func TestRunOverPlainReaderWriter(t *testing.T) {
	// Any reader/writer pair works; end of input ends Run cleanly.
	inR, inW := io.Pipe()
	pr, pw := io.Pipe()
	ext := New(inR, pw, Options{NoHello: true})
	done := make(chan error, 1)
	go func() { done <- ext.Run(context.Background()) }()
	go func() { _ = nativemsg.WriteFrame(inW, []byte(`{"id":1,"type":"ping"}`)) }()
	body, err := nativemsg.ReadFrame(pr)
	if err != nil {
		t.Fatal(err)
	}
	if string(body) != `{"id":1,"type":"pong"}` {
		t.Fatalf("reply %s", body)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// insertAfter inspects page on a fresh fake, lets fault change the fake
// and request change the insert request the host would send (built from
// the inspection), sends the insert (twice with twice: the second's
// answer counts), and returns the reply's type and its reason or error
// code.
func insertAfter(t *testing.T, page Page, fault func(*Ext), request func(map[string]any), twice bool) (typ, why string) {
	t.Helper()
	ext, port, _ := start(t, Options{NoHello: true, Page: page})
	raw, err := port.Call(ctxT(t), map[string]string{"type": "inspect"})
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	var in struct {
		Tab, Frame int64
		Token      string
		Origins    []string
		Field      fill.FieldInfo
		Form       *fill.FormInfo
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("inspect reply %s: %v", raw, err)
	}
	if fault != nil {
		fault(ext)
	}
	req := map[string]any{"type": "insert", "tab": in.Tab, "frame": in.Frame, "token": in.Token, "origins": in.Origins,
		"kind": in.Field.Kind, "then": "none", "value": "correct-horse"}
	if in.Form != nil {
		req["form"] = in.Form
	}
	if request != nil {
		request(req)
	}
	if twice {
		if _, err := port.Call(ctxT(t), req); err != nil {
			t.Fatalf("first insert: %v", err)
		}
	}
	raw, err = port.Call(ctxT(t), req)
	var re *nativemsg.ReplyError
	if errors.As(err, &re) {
		return "error", re.Code
	}
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	var out struct{ Type, Reason string }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("insert reply %s: %v", raw, err)
	}
	return out.Type, out.Reason
}

// TestInsertRecheckOrder pins the fake's re-checks before an insert to
// the real extension's order (extension/sw.js, then extension/inpage.js's
// insert; PROTOCOL.md sections 2 and 3). Each row puts faults into the
// page after the inspect, mostly two at once: the insert must be refused
// by the check the real extension runs first, so a row fails when two
// checks trade places.
func TestInsertRecheckOrder(t *testing.T) {
	password := fill.FieldInfo{Kind: fill.FieldPassword}
	form := &fill.FormInfo{Destination: fill.Destination{Action: "https://login.test", Method: "post"}}
	// A field in the top frame: no frame chain is walked again.
	top := Page{Tab: 1, Frame: 0, Origins: []string{"https://login.test"}, Field: password, Element: "pw", Form: form}
	// A field in a frame: the worker walks the chain down to it first.
	framed := Page{Tab: 1, Frame: 4, Origins: []string{"https://auth.test", "https://www.test"}, Field: password, Element: "pw"}
	code := top
	code.Field = fill.FieldInfo{Kind: fill.FieldOTP, Split: 6}

	page := func(change func(p *Page)) func(*Ext) { return func(e *Ext) { e.Update(change) } }
	paused := func(change func(p *Page)) func(*Ext) {
		return func(e *Ext) {
			e.SetPaused(true)
			e.Update(change)
		}
	}
	otherForm := &fill.FormInfo{Destination: fill.Destination{Action: "https://evil.test", Method: "post"}}
	cases := []struct {
		name    string
		page    Page
		fault   func(*Ext)
		request func(map[string]any)
		twice   bool
		typ     string // the reply's type
		why     string // its reason, or error code
	}{
		{name: "nothing changed", page: top, typ: "inserted"},
		{name: "nothing changed in a frame", page: framed, typ: "inserted"},

		// The worker, before anything else.
		{name: "no origins before paused", page: top, fault: paused(func(*Page) {}),
			request: func(r map[string]any) { delete(r, "origins") }, typ: "error", why: "bad_request"},
		{name: "no token before paused", page: top, fault: paused(func(*Page) {}),
			request: func(r map[string]any) { delete(r, "token") }, typ: "error", why: "bad_request"},
		{name: "paused before the tab closed", page: top, fault: paused(func(p *Page) { p.NoTab = true }), typ: "not_inserted", why: "paused"},
		{name: "tab closed before the top navigated", page: top,
			fault: page(func(p *Page) { p.NoTab, p.Origins = true, []string{"https://evil.test"} }), typ: "not_inserted", why: "tab_gone"},
		{name: "top navigated before focus moved", page: top,
			fault: page(func(p *Page) { p.Origins, p.Element = []string{"https://evil.test"}, "other" }), typ: "not_inserted", why: "origin_changed"},
		{name: "top navigated before the frame changed", page: framed,
			fault: page(func(p *Page) { p.Origins, p.Frame = []string{"https://auth.test", "https://evil.test"}, 9 }), typ: "not_inserted", why: "origin_changed"},

		// The worker's walk down the frame chain, for a field in a frame.
		{name: "no chain before the frame changed", page: framed,
			fault: page(func(p *Page) { p.NoAccess, p.Frame = true, 9 }), typ: "not_inserted", why: "origin_changed"},
		{name: "frame changed before the frame navigated", page: framed,
			fault: page(func(p *Page) { p.Frame, p.Origins = 9, []string{"https://ads.test", "https://www.test"} }), typ: "not_inserted", why: "frame_changed"},
		{name: "frame navigated before a hidden frame element", page: framed,
			fault: page(func(p *Page) { p.Origins, p.FrameProblem = []string{"https://evil.test", "https://www.test"}, "hidden" }), typ: "not_inserted", why: "origin_changed"},
		{name: "a frame deeper before a hidden frame element", page: framed,
			fault: page(func(p *Page) {
				p.Origins, p.FrameProblem = []string{"https://auth.test", "https://auth.test", "https://www.test"}, "hidden"
			}), typ: "not_inserted", why: "origin_changed"},
		{name: "hidden frame element before the element is gone", page: framed,
			fault: page(func(p *Page) { p.FrameProblem, p.Detached = "covered", true }), typ: "not_inserted", why: "not_usable"},

		// The top frame: no chain walk; the in-page function sees focus
		// gone into a child frame as focus moved, and a page it cannot
		// run in is the worker's error.
		{name: "top frame: focus into a child frame", page: top,
			fault: page(func(p *Page) { p.Frame, p.Origins = 9, []string{"https://ads.test", "https://login.test"} }), typ: "not_inserted", why: "focus_moved"},
		{name: "top frame: cannot be scripted", page: top, fault: page(func(p *Page) { p.NoAccess, p.Element = true, "other" }), typ: "error", why: "internal"},

		// The in-page function.
		{name: "element gone before focus moved", page: framed,
			fault: page(func(p *Page) { p.Detached, p.Element = true, "other" }), typ: "not_inserted", why: "element_gone"},
		{name: "unknown token before focus moved", page: top, fault: page(func(p *Page) { p.Element = "other" }),
			request: func(r map[string]any) { r["token"] = "not-a-token" }, typ: "not_inserted", why: "element_gone"},
		{name: "a token is used up by one insert", page: top, twice: true, typ: "not_inserted", why: "element_gone"},
		{name: "a refused insert uses the token up too", page: top, fault: page(func(p *Page) { p.Field.Problem = "hidden" }),
			twice: true, typ: "not_inserted", why: "element_gone"},
		{name: "focus moved before the kind changed", page: top,
			fault: page(func(p *Page) { p.Element, p.Field.Kind = "other", fill.FieldOther }), typ: "not_inserted", why: "focus_moved"},
		{name: "kind changed before not usable", page: top,
			fault: page(func(p *Page) { p.Field = fill.FieldInfo{Kind: fill.FieldOther, Problem: "hidden"} }), typ: "not_inserted", why: "kind_changed"},
		{name: "boxes changed before not usable", page: code,
			fault: page(func(p *Page) { p.Field = fill.FieldInfo{Kind: fill.FieldOTP, Split: 5, Problem: "hidden"} }), typ: "not_inserted", why: "kind_changed"},
		{name: "not usable before the form changed", page: top,
			fault: page(func(p *Page) { p.Field.Problem, p.Form = "covered", otherForm }), typ: "not_inserted", why: "not_usable"},
		{name: "form changed before no value", page: top, fault: page(func(p *Page) { p.Form = otherForm }),
			request: func(r map[string]any) { delete(r, "value") }, typ: "not_inserted", why: "form_changed"},
		{name: "no value", page: top, request: func(r map[string]any) { delete(r, "value") }, typ: "not_inserted", why: "insert_failed"},
		{name: "an empty value", page: top, request: func(r map[string]any) { r["value"] = "" }, typ: "not_inserted", why: "insert_failed"},
		{name: "the page refuses the insert", page: top, fault: page(func(p *Page) { p.RejectInsert = true }), typ: "not_inserted", why: "insert_failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			typ, why := insertAfter(t, c.page, c.fault, c.request, c.twice)
			if typ != c.typ || why != c.why {
				t.Errorf("insert answered %s %q, want %s %q", typ, why, c.typ, c.why)
			}
		})
	}
}

// TestFrameProblemInInspectAndPeek: a frame element's problem on the way
// down is what inspect and peek report as the field's, as the real
// extension's frameProblem comes first.
func TestFrameProblemInInspectAndPeek(t *testing.T) {
	_, port, _ := start(t, Options{NoHello: true, Page: Page{Tab: 1, Frame: 4, Origins: []string{"https://auth.test", "https://www.test"},
		Field: fill.FieldInfo{Kind: fill.FieldPassword, Problem: "tiny"}, FrameProblem: "hidden", Element: "pw"}})
	for _, typ := range []string{"inspect", "peek"} {
		raw, err := port.Call(ctxT(t), map[string]string{"type": typ})
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		var r struct{ Field fill.FieldInfo }
		if err := json.Unmarshal(raw, &r); err != nil || r.Field.Problem != "hidden" {
			t.Errorf("%s answered %s (%v); want the frame element's problem, hidden", typ, raw, err)
		}
	}
}
