package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/bridge"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// wait bounds every wait in these tests; it is generous because the
// machine is shared. No test depends on how fast anything is.
const wait = 30 * time.Second

// env is a Bridge connected to a fake extension.
type env struct {
	b      *bridge.Bridge
	ext    *fakeext.Ext
	port   *nativemsg.Port
	logs   *syncbuf.Buffer
	wire   *syncbuf.Buffer // every byte the host wrote
	runErr chan error
}

func (e *env) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// tee copies what the host writes into a buffer, so tests can look at the
// wire.
type tee struct {
	w   io.Writer
	buf *syncbuf.Buffer
}

func (t tee) Write(p []byte) (int, error) {
	_, _ = t.buf.Write(p)
	return t.w.Write(p)
}

var loginPage = fakeext.Page{
	Tab: 12, Frame: 0,
	Origins: []string{"https://login.example.test"},
	Field:   fill.FieldInfo{Kind: fill.FieldPassword},
	Element: "input#password",
}

func setup(t *testing.T, opt fakeext.Options) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ext, hostR, hostW := fakeext.Connect(ctx, opt)
	e := &env{ext: ext, logs: &syncbuf.Buffer{}, wire: &syncbuf.Buffer{}, runErr: make(chan error, 1)}
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.port = nativemsg.NewPort(hostR, tee{hostW, e.wire}, func(m json.RawMessage) { e.b.HandleNotice(m) }, nativemsg.WithLogger(logger))
	e.b = bridge.New(e.port, bridge.WithVersion("9.9.9"), bridge.WithLogger(logger))
	go func() { e.runErr <- e.port.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		ext.Close()
		hostR.Close()
		hostW.Close()
	})
	if !opt.NoHello {
		select {
		case <-e.b.Hello():
		case <-time.After(wait):
			t.Fatal("no hello from the fake extension")
		}
	}
	return e
}

func TestHelloStatusAndHostNotice(t *testing.T) {
	e := setup(t, fakeext.Options{Version: "0.1.0", UserAgent: "UA/1", Page: loginPage})
	st := e.b.Status()
	if !st.Connected || st.Version != "0.1.0" || st.UserAgent != "UA/1" || st.Paused {
		t.Fatalf("status %+v", st)
	}
	m, err := e.ext.Wait(e.ctx(t), fakeext.OfType("host"))
	if err != nil {
		t.Fatal(err)
	}
	var host struct {
		Version string
		PID     int
	}
	if err := json.Unmarshal(m.Raw, &host); err != nil || host.Version != "9.9.9" || host.PID != os.Getpid() || m.ID != nil {
		t.Fatalf("host notice %s", m.Raw)
	}
	if e.b.Via() != fill.ViaExtension {
		t.Fatalf("Via() = %q", e.b.Via())
	}
}

func TestNotConnectedBeforeHelloAndAfterEnd(t *testing.T) {
	e := setup(t, fakeext.Options{NoHello: true, Page: loginPage})
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if e.b.Status().Connected {
		t.Fatal("connected without a hello")
	}

	e = setup(t, fakeext.Options{Page: loginPage})
	e.ext.Disconnect()
	<-e.port.Done()
	if e.b.Status().Connected {
		t.Fatal("still connected after the port ended")
	}
	if err := <-e.runErr; err != nil {
		t.Fatalf("Run after the extension hung up: %v", err)
	}
}

func TestPausedNotice(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	e.ext.SetPaused(true)
	// The pong is sent after the notice, and the port dispatches in order.
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if !e.b.Status().Paused {
		t.Fatal("paused notice not reflected in Status")
	}
	e.ext.SetPaused(false)
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if e.b.Status().Paused {
		t.Fatal("unpause not reflected in Status")
	}
}

// memPause is a PauseRecord in memory.
type memPause struct {
	mu     sync.Mutex
	paused bool
}

func (m *memPause) Paused() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.paused }
func (m *memPause) SetPaused(p bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.paused = p
	return nil
}

// TestPauseRecord: with a pause record, a hello that says "not paused"
// (the extension's storage, which any page of the extension can write,
// read by a worker that started again) does not switch off a recorded
// pause: the host's answer says paused, and inspections are; only a
// "paused" notice (the toolbar popup's flip) switches it off. A hello
// that says paused records it.
func TestPauseRecord(t *testing.T) {
	rec := &memPause{paused: true}
	e := setupWith(t, fakeext.Options{Page: loginPage}, bridge.WithPauseRecord(rec))
	if !e.b.Status().Paused {
		t.Error("a hello that says not paused switched off the recorded pause")
	}
	m, err := e.ext.Wait(e.ctx(t), fakeext.OfType("host"))
	if err != nil {
		t.Fatal(err)
	}
	var host struct{ Paused bool }
	if err := json.Unmarshal(m.Raw, &host); err != nil || !host.Paused {
		t.Errorf("the host's answer to hello %s does not say paused", m.Raw)
	}
	in, err := e.b.Inspect(e.ctx(t), fill.Request{Service: "example.test"})
	if err != nil || !in.Paused {
		t.Errorf("inspection paused %v (%v); want paused", in.Paused, err)
	}
	e.ext.SetPaused(false)
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if rec.Paused() || e.b.Status().Paused {
		t.Error("the paused notice did not switch the pause off")
	}
	if in, err := e.b.Inspect(e.ctx(t), fill.Request{Service: "example.test"}); err != nil || in.Paused {
		t.Errorf("inspection paused %v (%v) after the switch went off", in.Paused, err)
	}

	rec2 := &memPause{}
	e2 := setupWith(t, fakeext.Options{Page: loginPage, Paused: true}, bridge.WithPauseRecord(rec2))
	if !rec2.Paused() || !e2.b.Status().Paused {
		t.Error("a hello that says paused was not recorded")
	}
}

func TestInspect(t *testing.T) {
	page := fakeext.Page{
		Tab: 7, Frame: 4,
		Origins: []string{"https://auth.example.test", "https://www.example.test"},
		Field:   fill.FieldInfo{Kind: fill.FieldOTP, Split: 6},
		Element: "div.code input:first-child",
	}
	e := setup(t, fakeext.Options{Page: page, Paused: true})
	in, err := e.b.Inspect(e.ctx(t), fill.Request{Service: "example.test"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Tab != 7 || in.Frame != 4 || in.Token == "" || !in.Paused ||
		in.Field != page.Field || strings.Join(in.Origins, " ") != strings.Join(page.Origins, " ") {
		t.Fatalf("inspection %+v", in)
	}
	if in.Origin() != "https://auth.example.test" {
		t.Fatalf("Origin() = %q", in.Origin())
	}

	tab, frame := int64(7), int64(0)
	in, err = e.b.Inspect(e.ctx(t), fill.Request{Tab: &tab, Frame: &frame})
	if err != nil {
		t.Fatal(err)
	}
	if in.Frame != 0 || in.Field.Kind != fill.FieldNone {
		t.Fatalf("pinned frame: %+v", in)
	}
	// The host's own notices (its "host" answer to hello) may come
	// between the requests: look at the inspect requests only.
	var msgs []fakeext.Message
	for _, m := range e.ext.Received() {
		if m.Type == "inspect" {
			msgs = append(msgs, m)
		}
	}
	if len(msgs) != 2 {
		t.Fatalf("the extension got %d inspect requests, want 2", len(msgs))
	}
	var sent struct{ Tab, Frame *int64 }
	if err := json.Unmarshal(msgs[1].Raw, &sent); err != nil ||
		sent.Tab == nil || *sent.Tab != 7 || sent.Frame == nil || *sent.Frame != 0 {
		t.Fatalf("pinned inspect sent as %s", msgs[1].Raw)
	}
	if bytes.Contains(msgs[0].Raw, []byte(`"tab"`)) || bytes.Contains(msgs[0].Raw, []byte(`"frame"`)) {
		t.Fatalf("unpinned inspect sent as %s", msgs[0].Raw)
	}
}

func TestInspectErrors(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	tab := int64(99)
	_, err := e.b.Inspect(e.ctx(t), fill.Request{Tab: &tab})
	assertReplyError(t, err, "no_tab")

	e.ext.Update(func(p *fakeext.Page) { p.NoAccess = true })
	_, err = e.b.Inspect(e.ctx(t), fill.Request{})
	assertReplyError(t, err, "no_access")

	// A pinned background tab is a refusal that names nothing of the tab.
	e.ext.Update(func(p *fakeext.Page) { p.NoAccess, p.Background = false, true })
	tab = loginPage.Tab
	in, err := e.b.Inspect(e.ctx(t), fill.Request{Tab: &tab})
	var st interface{ Status() fill.Status }
	if !errors.As(err, &st) || st.Status() != fill.StatusRefused || in.Origin() != "" ||
		!strings.Contains(err.Error(), "not the active tab of its window") {
		t.Fatalf("pinned background tab: %+v, %v; want a refusal", in, err)
	}
}

func assertReplyError(t *testing.T, err error, code string) {
	t.Helper()
	var re *nativemsg.ReplyError
	if !errors.As(err, &re) || re.Code != code {
		t.Fatalf("got %v, want an error reply %q", err, code)
	}
	if !strings.Contains(err.Error(), "extension refused") {
		t.Fatalf("error %q does not say the extension refused", err)
	}
}

func TestErrorReplyForEveryRequest(t *testing.T) {
	for _, typ := range []string{"ping", "inspect", "open_prompt", "close_prompt", "insert"} {
		t.Run(typ, func(t *testing.T) {
			e := setup(t, fakeext.Options{Page: loginPage})
			in, err := e.b.Inspect(e.ctx(t), fill.Request{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := e.b.OpenPrompt(e.ctx(t), "http://127.0.0.1:1/x")
			if err != nil {
				t.Fatal(err)
			}
			e.ext.FailWith(typ, "internal", "it broke")
			switch typ {
			case "ping":
				err = e.b.Ping(e.ctx(t))
			case "inspect":
				_, err = e.b.Inspect(e.ctx(t), fill.Request{})
			case "open_prompt":
				_, err = e.b.OpenPrompt(e.ctx(t), "http://127.0.0.1:1/y")
			case "close_prompt":
				err = w.Close(e.ctx(t))
			case "insert":
				_, err = e.b.Insert(e.ctx(t), in, []byte("x"), fill.InsertOptions{})
			}
			assertReplyError(t, err, "internal")
			if !strings.Contains(err.Error(), typ) || !strings.Contains(err.Error(), "it broke") {
				t.Fatalf("error %q names neither the request nor the detail", err)
			}
		})
	}
}

func TestOpenPromptHookAndClose(t *testing.T) {
	type opened struct {
		url string
		id  int64
	}
	hook := make(chan opened, 1)
	e := setup(t, fakeext.Options{Page: loginPage, OnOpenPrompt: func(url string, id int64) { hook <- opened{url, id} }})
	const url = "http://127.0.0.1:40123/nonce"
	w, err := e.b.OpenPrompt(e.ctx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	got := <-hook
	if got.url != url {
		t.Fatalf("the fake human got %q", got.url)
	}
	if ids := e.ext.Windows(); len(ids) != 1 || ids[0] != got.id {
		t.Fatalf("open windows %v, want [%d]", ids, got.id)
	}
	if err := w.Close(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if len(e.ext.Windows()) != 0 {
		t.Fatal("window still open after Close")
	}
	if err := w.Close(e.ctx(t)); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n := countType(e.ext.Received(), "close_prompt"); n != 1 {
		t.Fatalf("%d close_prompt requests, want 1", n)
	}
	select {
	case <-w.Closed():
		t.Fatal("Closed fired although the human did not close the window")
	default:
	}
}

func countType(msgs []fakeext.Message, typ string) int {
	n := 0
	for _, m := range msgs {
		if m.Type == typ {
			n++
		}
	}
	return n
}

func TestPromptClosedByHuman(t *testing.T) {
	var e *env
	e = setup(t, fakeext.Options{Page: loginPage})
	w1, err := e.b.OpenPrompt(e.ctx(t), "http://127.0.0.1:1/a")
	if err != nil {
		t.Fatal(err)
	}
	w2, err := e.b.OpenPrompt(e.ctx(t), "http://127.0.0.1:1/b")
	if err != nil {
		t.Fatal(err)
	}
	ids := e.ext.Windows()
	if len(ids) != 2 {
		t.Fatalf("windows %v", ids)
	}
	if err := e.ext.CloseWindow(ids[1]); err != nil { // the second one
		t.Fatal(err)
	}
	select {
	case <-w2.Closed():
	case <-time.After(wait):
		t.Fatal("Closed did not fire on prompt_closed")
	}
	select {
	case <-w1.Closed():
		t.Fatal("prompt_closed for another window closed this one")
	default:
	}
	if err := w2.Close(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Ping(e.ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n := countType(e.ext.Received(), "close_prompt"); n != 0 {
		t.Fatal("Close asked the extension to close a window the human had closed")
	}
}

// prompt_closed can be dispatched before OpenPrompt's goroutine registers
// the window; the window must still report Closed.
func TestPromptClosedBeforeRegistered(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	e.b.HandleNotice(json.RawMessage(`{"type":"prompt_closed","window":101}`)) // the fake's first id
	w, err := e.b.OpenPrompt(e.ctx(t), "http://127.0.0.1:1/a")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Closed():
	default:
		t.Fatal("an early prompt_closed was lost")
	}
}

func TestOutcomeNotice(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ext, hostR, hostW := fakeext.Connect(ctx, fakeext.Options{Page: loginPage})
	defer ext.Close()
	port := nativemsg.NewPort(hostR, hostW, nil)
	b := bridge.New(port, bridge.WithClock(func() time.Time { return now }))
	go func() { _ = port.Run(ctx) }()

	b.Outcome(fill.Result{Status: fill.StatusRefused, Service: "example.test", Origin: "https://example.test",
		Field: fill.FieldPassword, Via: fill.ViaExtension, Detail: "the focused field is a username field"})
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	m, err := ext.Wait(wctx, fakeext.OfType("outcome"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(m.Raw, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "outcome", "time": "2026-11-30T10:00:00Z", "service": "example.test",
		"origin": "https://example.test", "status": "refused"}
	if len(got) != len(want) {
		t.Fatalf("outcome notice %s", m.Raw)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("outcome notice %s", m.Raw)
		}
	}
}

func TestUnexpectedReplyType(t *testing.T) {
	hostR, peerW := io.Pipe()
	peerR, hostW := io.Pipe()
	defer peerW.Close()
	defer hostW.Close()
	port := nativemsg.NewPort(hostR, hostW, nil)
	b := bridge.New(port)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	go func() { _ = port.Run(ctx) }()
	go func() {
		for {
			body, err := nativemsg.ReadFrame(peerR)
			if err != nil {
				return
			}
			var req struct{ ID int64 }
			_ = json.Unmarshal(body, &req)
			reply, _ := json.Marshal(map[string]any{"id": req.ID, "type": "pong", "origins": 5})
			if nativemsg.WriteFrame(peerW, reply) != nil {
				return
			}
		}
	}()
	if _, err := b.Inspect(ctx, fill.Request{}); err == nil || !strings.Contains(err.Error(), `unexpected reply "pong" to inspect`) {
		t.Fatalf("got %v", err)
	}
	if _, err := b.Insert(ctx, fill.Inspection{}, []byte("x"), fill.InsertOptions{}); err == nil || !strings.Contains(err.Error(), `unexpected reply "pong" to insert`) {
		t.Fatalf("got %v", err)
	}
	if _, err := b.OpenPrompt(ctx, "http://127.0.0.1:1/"); err == nil {
		t.Fatal("a pong accepted as prompt_opened")
	}
}
