package cdp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakecdp"
	"github.com/fillgate/fillgate/tests/fakes/fakepage"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolveOrder(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		policy    string
		url, from string
	}{
		{"default", nil, "", cdp.DefaultURL, cdp.SourceDefault},
		{"policy", nil, "http://127.0.0.1:9333", "http://127.0.0.1:9333", cdp.SourcePolicy},
		{"browser env over policy", map[string]string{"BROWSER_CDP_URL": "ws://127.0.0.1:9444"}, "http://127.0.0.1:9333", "ws://127.0.0.1:9444", cdp.SourceBrowserEnv},
		{"fillgate env first", map[string]string{"FILLGATE_CDP_URL": "http://localhost:9555", "BROWSER_CDP_URL": "ws://127.0.0.1:9444"}, "http://127.0.0.1:9333", "http://localhost:9555", cdp.SourceFillgateEnv},
		{"blank env skipped", map[string]string{"FILLGATE_CDP_URL": "  ", "BROWSER_CDP_URL": ""}, "", cdp.DefaultURL, cdp.SourceDefault},
		{"ws browser form", map[string]string{"FILLGATE_CDP_URL": "ws://127.0.0.1:9222/devtools/browser/abc"}, "", "ws://127.0.0.1:9222/devtools/browser/abc", cdp.SourceFillgateEnv},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep, err := cdp.Resolve(envOf(c.env), c.policy)
			if err != nil {
				t.Fatal(err)
			}
			if ep.URL != c.url || ep.Source != c.from {
				t.Fatalf("got %+v, want %s from %s", ep, c.url, c.from)
			}
		})
	}
}

func TestResolveRefusesMalformed(t *testing.T) {
	for _, raw := range []string{"ftp://127.0.0.1:9222", "127.0.0.1:9222", "http://", "http://u:p@127.0.0.1:9222", "http://127.0.0.1:9222/?x=1", "%zz"} {
		_, err := cdp.Resolve(envOf(map[string]string{"FILLGATE_CDP_URL": raw}), "http://127.0.0.1:9333")
		var ce *cdp.Error
		if !errors.As(err, &ce) || ce.Reason != cdp.ReasonBadURL || ce.Endpoint.Source != cdp.SourceFillgateEnv {
			t.Errorf("%q: got %v, want a bad-URL error naming FILLGATE_CDP_URL (no fall-through)", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "u:p") {
			t.Errorf("%q: the error quotes user info", raw)
		}
	}
}

func TestEndpointStringHidesPathAndUserInfo(t *testing.T) {
	s := cdp.Endpoint{URL: "ws://127.0.0.1:9222/devtools/browser/secret-id", Source: cdp.SourcePolicy}.String()
	if s != "ws://127.0.0.1:9222 (from policy)" {
		t.Fatalf("String() = %q", s)
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.9.8.7": true, "::1": true, "[::1]": true,
		"::ffff:127.0.0.1": true, "0.0.0.0": false, "192.168.1.2": false, "localhost.evil.test": false,
		"example.com": false, "": false, "::": false,
	} {
		if got := cdp.IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// connect opens a Browser on the fake endpoint.
func connect(t *testing.T, s *fakecdp.Server, o cdp.Options) (*cdp.Browser, *logSink) {
	t.Helper()
	log := &logSink{}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
	b, err := cdp.Connect(step(t), cdp.Endpoint{URL: s.URL, Source: cdp.SourceFillgateEnv}, o)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, log
}

func step(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type logSink struct {
	mu  sync.Mutex
	buf []byte
}

func (l *logSink) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = fmt.Appendf(l.buf, format+"\n", args...)
}

func (l *logSink) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.buf...)
}

func wantErr(t *testing.T, err error, reason cdp.Reason, status fill.Status) *cdp.Error {
	t.Helper()
	var ce *cdp.Error
	if !errors.As(err, &ce) || ce.Reason != reason || ce.Status() != status {
		t.Fatalf("error = %v, want reason %q (%s)", err, reason, status)
	}
	if !strings.Contains(err.Error(), "(from FILLGATE_CDP_URL)") && ce.Endpoint.Source == cdp.SourceFillgateEnv {
		t.Fatalf("error %q does not say where the endpoint came from", err)
	}
	return ce
}

func TestConnectRefusesNonLoopback(t *testing.T) {
	for _, raw := range []string{"http://192.0.2.1:9222", "ws://cdp.example.test:9222/devtools/browser/x", "http://0.0.0.0:9222"} {
		ep := cdp.Endpoint{URL: raw, Source: cdp.SourcePolicy}
		_, err := cdp.Connect(step(t), ep, cdp.Options{AllowHosts: []string{"other.example.test"}})
		var ce *cdp.Error
		if !errors.As(err, &ce) || ce.Reason != cdp.ReasonNotLoopback || ce.Status() != fill.StatusRefused {
			t.Errorf("%s: got %v, want a not-loopback refusal", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "/devtools/") {
			t.Errorf("%s: the error quotes the path: %v", raw, err)
		}
	}
}

func TestConnectRefusesWebSocketOnAnotherHost(t *testing.T) {
	s := fakecdp.New(t)
	s.SetWebSocketURL("ws://192.0.2.7:9222/devtools/browser/abc")
	_, err := cdp.Connect(step(t), cdp.Endpoint{URL: s.URL, Source: cdp.SourceFillgateEnv}, cdp.Options{})
	wantErr(t, err, cdp.ReasonHostMismatch, fill.StatusRefused)
	for _, c := range s.Calls() {
		t.Errorf("a WebSocket method reached the fake although the endpoint was refused: %s", c.Method)
	}
}

func TestConnectAcceptsLoopbackWebSocket(t *testing.T) {
	s := fakecdp.New(t)
	// The endpoint is 127.0.0.1; a WebSocket URL on localhost is loopback
	// too, and is dialled as 127.0.0.1.
	s.SetWebSocketURL(strings.Replace(s.WebSocketURL(), "127.0.0.1", "localhost", 1))
	connect(t, s, cdp.Options{})
}

func TestConnectForms(t *testing.T) {
	s := fakecdp.New(t)
	for _, raw := range []string{s.URL, strings.Replace(s.URL, "http://", "ws://", 1), s.WebSocketURL(), strings.Replace(s.URL, "127.0.0.1", "localhost", 1)} {
		b, err := cdp.Connect(step(t), cdp.Endpoint{URL: raw, Source: cdp.SourceDefault}, cdp.Options{})
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		if err := b.Close(); err != nil {
			t.Errorf("%s: close: %v", raw, err)
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = cdp.Connect(step(t), cdp.Endpoint{URL: "http://" + addr, Source: cdp.SourceFillgateEnv}, cdp.Options{})
	ce := wantErr(t, err, cdp.ReasonRefused, fill.StatusFailed)
	if !strings.Contains(ce.Error(), "http://"+addr) {
		t.Fatalf("the error does not name the endpoint: %v", ce)
	}
}

func TestNotCDP(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	_, err := cdp.Connect(step(t), cdp.Endpoint{URL: srv.URL, Source: cdp.SourceFillgateEnv}, cdp.Options{})
	wantErr(t, err, cdp.ReasonNotCDP, fill.StatusFailed)
}

func TestConnectHonoursContext(t *testing.T) {
	// A server that accepts and never answers /json/version.
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := cdp.Connect(ctx, cdp.Endpoint{URL: srv.URL, Source: cdp.SourceFillgateEnv}, cdp.Options{})
	wantErr(t, err, cdp.ReasonTimeout, fill.StatusFailed)
}

func TestOptionsValidated(t *testing.T) {
	s := fakecdp.New(t)
	if _, err := cdp.Connect(step(t), cdp.Endpoint{URL: s.URL, Source: cdp.SourceDefault}, cdp.Options{Opener: "popup"}); err == nil {
		t.Fatalf("an unknown opener was accepted")
	}
}

// page adds a page at origin with a focused field of kind.
func page(s *fakecdp.Server, rawURL, kind string) *fakecdp.Target {
	p := s.AddPage(rawURL)
	p.Root.Focus(fill.FieldInfo{Kind: kind})
	return p
}

func TestInspectAndInsertOnePage(t *testing.T) {
	s := fakecdp.New(t)
	p := page(s, "https://github.com/login?next=/secret-path", fill.FieldPassword)
	b, log := connect(t, s, cdp.Options{})
	if b.Via() != fill.ViaCDP {
		t.Fatalf("Via() = %q", b.Via())
	}
	in, err := b.Inspect(step(t), fill.Request{Service: "github.com"})
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if in.Origin() != "https://github.com" || in.Field.Kind != fill.FieldPassword || in.Token == "" {
		t.Fatalf("inspection = %+v", in)
	}
	secret := leakscan.NewSecret(t)
	v, err := b.Insert(step(t), in, append([]byte(nil), secret...), fill.InsertOptions{})
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	if !v.Inserted || !v.Matched {
		t.Fatalf("verdict = %+v", v)
	}
	if !p.Root.ValueEquals(secret) {
		t.Fatalf("value differed")
	}
	out, _ := json.Marshal(in)
	leakscan.Bytes(t, secret, "the inspection", out)
	out, _ = json.Marshal(v)
	leakscan.Bytes(t, secret, "the verdict", out)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	leakscan.Bytes(t, secret, "the log", log.Bytes())
	// Close ends the connection, and the browser detaches its sessions.
	if err := s.Disconnected(step(t)); err != nil {
		t.Fatal(err)
	}
	if s.Sessions() != 0 {
		t.Fatalf("%d sessions still attached after Close", s.Sessions())
	}
	if len(s.Targets()) != 1 {
		t.Fatalf("the tab was closed")
	}
	for _, c := range s.Calls() {
		if c.Method == "Target.closeTarget" || c.Method == "Page.navigate" || c.Method == "Page.reload" {
			t.Fatalf("fillgate sent %s", c.Method)
		}
	}
}

func TestInspectRefusesNumericTab(t *testing.T) {
	s := fakecdp.New(t)
	page(s, "https://github.com/", fill.FieldPassword)
	b, _ := connect(t, s, cdp.Options{})
	tab := int64(3)
	_, err := b.Inspect(step(t), fill.Request{Service: "github.com", Tab: &tab})
	wantErr(t, err, cdp.ReasonNumericTab, fill.StatusRefused)
}

// TestPinnedTabMustBeActive: --tab only narrows the choice. A pinned tab
// that is not the active tab of its window (its document is not visible)
// is refused before anything in it is probed, and the refusal names
// neither its origin nor its field.
func TestPinnedTabMustBeActive(t *testing.T) {
	s := fakecdp.New(t)
	bg := page(s, "https://bank.example/login", fill.FieldPassword)
	page(s, "https://github.com/", fill.FieldOther)
	bg.SetHidden(true)
	pinned, _ := connect(t, s, cdp.Options{Tab: bg.ID})
	in, err := pinned.Inspect(step(t), fill.Request{Service: "bank.example"})
	ce := wantErr(t, err, cdp.ReasonTabNotActive, fill.StatusRefused)
	if strings.Contains(ce.Error(), "bank.example") || strings.Contains(ce.Error(), "password") || in.Origin() != "" {
		t.Fatalf("the refusal names the background tab's origin or field: %v", ce)
	}
	calls := 0
	for _, c := range s.Calls() {
		if c.Method == "Runtime.callFunctionOn" && c.Target == bg.ID {
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("%d calls into the background tab; want the one visibility check, no probe", calls)
	}
	bg.SetHidden(false)
	if in, err = pinned.Inspect(step(t), fill.Request{Service: "bank.example"}); err != nil || in.Origin() != "https://bank.example" {
		t.Fatalf("the pinned tab in front: %+v %v", in, err)
	}
}

func TestInspectNoPage(t *testing.T) {
	s := fakecdp.New(t)
	b, _ := connect(t, s, cdp.Options{})
	_, err := b.Inspect(step(t), fill.Request{Service: "github.com"})
	wantErr(t, err, cdp.ReasonNoPageTarget, fill.StatusRefused)
}

func TestTargetChoice(t *testing.T) {
	s := fakecdp.New(t)
	gh := page(s, "https://github.com/login", fill.FieldPassword)
	page(s, "https://gitlab.com/users/sign_in", fill.FieldPassword)
	s.AddPage("chrome://newtab/") // not a web page: never a candidate
	b, _ := connect(t, s, cdp.Options{})

	in, err := b.Inspect(step(t), fill.Request{Service: "github.com"})
	if err != nil || in.Origin() != "https://github.com" {
		t.Fatalf("service github.com: %+v %v", in, err)
	}

	_, err = b.Inspect(step(t), fill.Request{Service: "example.com"})
	ce := wantErr(t, err, cdp.ReasonNoMatch, fill.StatusRefused)
	if ce.Detail != "candidates: https://github.com, https://gitlab.com" {
		t.Fatalf("detail %q: want the candidates' origins only", ce.Detail)
	}

	// A second github.com tab makes it ambiguous, unless only one of them
	// has the kind of field asked for.
	gh2 := page(s, "https://github.com/settings", fill.FieldOther)
	in, err = b.Inspect(step(t), fill.Request{Service: "github.com"})
	if err != nil || in.Origin() != "https://github.com" {
		t.Fatalf("tie broken by field kind: %+v %v", in, err)
	}
	gh2.Root.Focus(fill.FieldInfo{Kind: fill.FieldPassword})
	_, err = b.Inspect(step(t), fill.Request{Service: "github.com"})
	ce = wantErr(t, err, cdp.ReasonAmbiguous, fill.StatusRefused)
	if strings.Contains(ce.Error(), "/login") || strings.Contains(ce.Error(), "/settings") || strings.Contains(ce.Error(), "fake") {
		t.Fatalf("the error names more than origins: %v", ce)
	}

	// --tab picks one; an unknown id is refused.
	pinned, _ := connect(t, s, cdp.Options{Tab: gh2.ID})
	secret := leakscan.NewSecret(t)
	in, err = pinned.Inspect(step(t), fill.Request{Service: "github.com"})
	if err != nil {
		t.Fatalf("inspect with --tab: %v", err)
	}
	if v, err := pinned.Insert(step(t), in, secret, fill.InsertOptions{}); err != nil || !v.Inserted {
		t.Fatalf("insert with --tab: %+v %v", v, err)
	}
	if !gh2.Root.ValueEquals(secret) || gh.Root.Inserted() {
		t.Fatalf("--tab filled the wrong tab")
	}
	_, err = connectOnly(t, s, cdp.Options{Tab: "NOPE"}).Inspect(step(t), fill.Request{Service: "github.com"})
	wantErr(t, err, cdp.ReasonTabNotFound, fill.StatusRefused)

	// Nothing focused anywhere.
	gh.Root.Blur()
	gh2.Root.Blur()
	for _, tg := range s.Targets() {
		tg.Root.Blur()
	}
	_, err = b.Inspect(step(t), fill.Request{Service: "github.com"})
	wantErr(t, err, cdp.ReasonNoFocusedField, fill.StatusRefused)
	if len(s.Targets()) != 4 {
		t.Fatalf("a tab was closed")
	}
}

func connectOnly(t *testing.T, s *fakecdp.Server, o cdp.Options) *cdp.Browser {
	b, _ := connect(t, s, o)
	return b
}

func TestOnePageIsUsedEvenIfItDoesNotMatch(t *testing.T) {
	// With a single tab the policy, not the tab choice, explains the
	// mismatch.
	s := fakecdp.New(t)
	page(s, "https://evil.example/", fill.FieldPassword)
	b, _ := connect(t, s, cdp.Options{})
	in, err := b.Inspect(step(t), fill.Request{Service: "github.com"})
	if err != nil || in.Origin() != "https://evil.example" {
		t.Fatalf("got %+v %v", in, err)
	}
}

func TestOutOfProcessFrame(t *testing.T) {
	s := fakecdp.New(t)
	top := s.AddPage("https://shop.example/checkout")
	mid := top.Root.AddFrame("https://shop.example", false)
	pay := mid.AddFrame("https://pay.example", true)
	pay.Focus(fill.FieldInfo{Kind: fill.FieldOTP})
	b, _ := connect(t, s, cdp.Options{})
	in, err := b.Inspect(step(t), fill.Request{Service: "pay.example", Field: fill.FieldOTP})
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	if strings.Join(in.Origins, " ") != "https://pay.example https://shop.example https://shop.example" {
		t.Fatalf("origins = %v", in.Origins)
	}
	secret := leakscan.NewSecret(t)
	v, err := b.Insert(step(t), in, secret, fill.InsertOptions{})
	if err != nil || !v.Inserted || !pay.ValueEquals(secret) {
		t.Fatalf("insert into the out-of-process frame: %+v %v", v, err)
	}
	attachedIframe := false
	for _, c := range s.Calls() {
		attachedIframe = attachedIframe || c.Target == pay.ID
	}
	if !attachedIframe {
		t.Fatalf("the out-of-process frame was not reached through its own target")
	}
}

func TestFrameProblemIsReported(t *testing.T) {
	s := fakecdp.New(t)
	top := s.AddPage("https://a.example/")
	f := top.Root.AddFrame("https://a.example", true)
	f.Focus(fill.FieldInfo{Kind: fill.FieldPassword})
	f.SetFrameProblem("covered")
	b, _ := connect(t, s, cdp.Options{})
	in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
	if err != nil || in.Field.Problem != "covered" || in.Field.Kind != fill.FieldPassword {
		t.Fatalf("a covered frame element is not reported: %+v %v", in.Field, err)
	}
}

// outcome runs Inspect, then change, then Insert, and checks the verdict
// reason and that nothing was inserted.
func outcome(t *testing.T, build func(*fakecdp.Server) (*fakecdp.Frame, func()), wantReason string) {
	t.Helper()
	s := fakecdp.New(t)
	f, change := build(s)
	b, log := connect(t, s, cdp.Options{})
	in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
	if err != nil {
		t.Fatalf("inspect: %v", err)
	}
	change()
	secret := leakscan.NewSecret(t)
	v, err := b.Insert(step(t), in, secret, fill.InsertOptions{})
	if err != nil {
		leakscan.Bytes(t, secret, "the error", []byte(err.Error()))
		t.Fatalf("insert: %v", err)
	}
	if v.Inserted || v.Reason != wantReason {
		t.Fatalf("verdict = %+v, want reason %s", v, wantReason)
	}
	if f.Inserted() {
		t.Fatalf("a value was inserted")
	}
	out, _ := json.Marshal(v)
	leakscan.Bytes(t, secret, "the verdict", out)
	leakscan.Bytes(t, secret, "the log", log.Bytes())
}

func TestInsertOutcomes(t *testing.T) {
	simple := func(change func(f *fakecdp.Frame, s *fakecdp.Server, tg *fakecdp.Target)) func(*fakecdp.Server) (*fakecdp.Frame, func()) {
		return func(s *fakecdp.Server) (*fakecdp.Frame, func()) {
			tg := page(s, "https://a.example/login", fill.FieldPassword)
			return tg.Root, func() { change(tg.Root, s, tg) }
		}
	}
	framed := func(change func(top, child *fakecdp.Frame, s *fakecdp.Server)) func(*fakecdp.Server) (*fakecdp.Frame, func()) {
		return func(s *fakecdp.Server) (*fakecdp.Frame, func()) {
			tg := s.AddPage("https://a.example/")
			child := tg.Root.AddFrame("https://a.example", true)
			child.Focus(fill.FieldInfo{Kind: fill.FieldPassword})
			return child, func() { change(tg.Root, child, s) }
		}
	}
	cases := map[string]struct {
		build  func(*fakecdp.Server) (*fakecdp.Frame, func())
		reason string
	}{
		"focus moved": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.Focus(fill.FieldInfo{Kind: fill.FieldPassword})
		}), "focus_moved"},
		"navigated away": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.Navigate("https://evil.example")
		}), "origin_changed"},
		"reloaded": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.Navigate("https://a.example")
		}), "element_gone"},
		"tab closed": {simple(func(_ *fakecdp.Frame, s *fakecdp.Server, tg *fakecdp.Target) {
			s.CloseTarget(tg.ID)
		}), "tab_gone"},
		"field became unusable": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.SetFieldProblem("hidden")
		}), "not_usable"},
		"kind changed": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.SetFieldKind(fill.FieldOther)
		}), "kind_changed"},
		"in-page function threw": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.ThrowOnInsert = true
		}), "insert_failed"},
		"focus moved to another frame": {framed(func(top, _ *fakecdp.Frame, _ *fakecdp.Server) {
			other := top.AddFrame("https://a.example", false)
			other.Focus(fill.FieldInfo{Kind: fill.FieldPassword})
		}), "frame_changed"},
		"focus moved to the top frame": {framed(func(top, _ *fakecdp.Frame, _ *fakecdp.Server) {
			top.Focus(fill.FieldInfo{Kind: fill.FieldPassword})
		}), "frame_changed"},
		"frame element covered": {framed(func(_, child *fakecdp.Frame, _ *fakecdp.Server) {
			child.SetFrameProblem("covered")
		}), "not_usable"},
		"frame navigated": {framed(func(_, child *fakecdp.Frame, _ *fakecdp.Server) {
			child.Navigate("https://evil.example")
		}), "origin_changed"},
		"out-of-process frame gone": {framed(func(_, child *fakecdp.Frame, s *fakecdp.Server) {
			s.CloseTarget(child.ID)
		}), "origin_changed"},
		"top page navigated": {framed(func(top, _ *fakecdp.Frame, _ *fakecdp.Server) {
			top.Navigate("https://evil.example")
		}), "origin_changed"},
		"form changed": {simple(func(f *fakecdp.Frame, _ *fakecdp.Server, _ *fakecdp.Target) {
			f.SetForm(&fill.FormInfo{Destination: fill.Destination{Action: "https://evil.example"}})
		}), "form_changed"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) { outcome(t, c.build, c.reason) })
	}
}

func TestProbeThrows(t *testing.T) {
	s := fakecdp.New(t)
	tg := page(s, "https://a.example/", fill.FieldPassword)
	tg.Root.Throw = true
	b, _ := connect(t, s, cdp.Options{})
	_, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
	wantErr(t, err, cdp.ReasonProtocol, fill.StatusFailed)
}

func TestInsertNotMatched(t *testing.T) {
	s := fakecdp.New(t)
	tg := page(s, "https://a.example/", fill.FieldPassword)
	tg.Root.NotMatched = true
	b, _ := connect(t, s, cdp.Options{})
	in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := b.Insert(step(t), in, leakscan.NewSecret(t), fill.InsertOptions{})
	if err != nil || !v.Inserted || v.Matched {
		t.Fatalf("verdict = %+v %v, want inserted but not matched", v, err)
	}
}

func TestInsertErrors(t *testing.T) {
	s := fakecdp.New(t)
	page(s, "https://a.example/", fill.FieldPassword)
	b, log := connect(t, s, cdp.Options{})
	in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
	if err != nil {
		t.Fatal(err)
	}
	secret := leakscan.NewSecret(t)

	forged := in
	forged.Token = "another"
	_, err = b.Insert(step(t), forged, secret, fill.InsertOptions{})
	wantErr(t, err, cdp.ReasonUnknownInspect, fill.StatusFailed)
	forged = in
	forged.Origins = []string{"https://evil.example"}
	_, err = b.Insert(step(t), forged, secret, fill.InsertOptions{})
	wantErr(t, err, cdp.ReasonUnknownInspect, fill.StatusFailed)

	_, err = b.Insert(step(t), in, []byte{0xff, 0xfe}, fill.InsertOptions{})
	wantErr(t, err, cdp.ReasonValueNotUTF8, fill.StatusFailed)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = b.Insert(ctx, in, secret, fill.InsertOptions{})
	if err == nil || !errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("cancelled insert: %v", err)
	}

	s.DropConnections()
	select {
	case <-b.Lost():
	case <-step(t).Done():
		t.Fatalf("Lost did not fire when the connection dropped")
	}
	_, err = b.Insert(step(t), in, secret, fill.InsertOptions{})
	if err == nil {
		t.Fatalf("insert after the connection dropped succeeded")
	}
	leakscan.Bytes(t, secret, "the error", []byte(err.Error()))
	leakscan.Bytes(t, secret, "the log", log.Bytes())
}

func TestPromptTab(t *testing.T) {
	s := fakecdp.New(t)
	user := page(s, "https://a.example/", fill.FieldPassword)
	b, _ := connect(t, s, cdp.Options{Opener: cdp.OpenerCDPTab})
	const url = "http://127.0.0.1:4321/nonce"
	win, err := b.OpenPrompt(step(t), url)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var prompt *fakecdp.Target
	for _, tg := range s.Targets() {
		if tg.URL == url {
			prompt = tg
		}
	}
	if prompt == nil {
		t.Fatalf("no prompt tab")
	}
	// It opened in a browser context made for it, never the default one.
	if prompt.Context == "" || user.Context != "" || len(s.Contexts()) != 1 || s.Contexts()[0] != prompt.Context {
		t.Fatalf("the prompt tab is in context %q (contexts %v), want one of its own", prompt.Context, s.Contexts())
	}
	// The prompt tab is never a fill candidate.
	in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
	if err != nil || in.Origin() != "https://a.example" {
		t.Fatalf("inspect with the prompt open: %+v %v", in, err)
	}
	s.CloseTarget(prompt.ID)
	select {
	case <-win.Closed():
	case <-step(t).Done():
		t.Fatalf("Closed did not fire")
	}
	if err := win.Close(step(t)); err != nil {
		t.Fatalf("close of a closed prompt: %v", err)
	}

	win, err = b.OpenPrompt(step(t), url)
	if err != nil {
		t.Fatal(err)
	}
	if err := win.Close(step(t)); err != nil {
		t.Fatal(err)
	}
	if err := win.Close(step(t)); err != nil {
		t.Fatal(err)
	}
	if tgs := s.Targets(); len(tgs) != 1 || tgs[0] != user {
		t.Fatalf("after closing the prompt the open targets are %d", len(tgs))
	}
	if c := s.Contexts(); len(c) != 0 {
		t.Fatalf("closing the prompt left its browser context: %v", c)
	}
	// Close closes a prompt tab still open, and only that.
	if _, err := b.OpenPrompt(step(t), url); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if tgs := s.Targets(); len(tgs) != 1 || tgs[0] != user {
		t.Fatalf("Close left %d targets, want only the user's", len(tgs))
	}
	if c := s.Contexts(); len(c) != 0 {
		t.Fatalf("Close left the prompt's browser context: %v", c)
	}
}

func TestPromptSystemOpener(t *testing.T) {
	s := fakecdp.New(t)
	var got []string
	b, log := connect(t, s, cdp.Options{OpenURL: func(_ context.Context, u string) error { got = append(got, u); return nil }})
	win, err := b.OpenPrompt(step(t), "http://127.0.0.1:4321/nonce")
	if err != nil || len(got) != 1 || got[0] != "http://127.0.0.1:4321/nonce" {
		t.Fatalf("opener got %v (%v)", got, err)
	}
	if win.Closed() != nil {
		t.Fatalf("Closed must be nil for the system opener")
	}
	if err := win.Close(step(t)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"https://127.0.0.1:4321/x", "http://192.0.2.1:4321/x", "javascript:alert(1)", "file:///etc/passwd"} {
		if _, err := b.OpenPrompt(step(t), bad); err == nil {
			t.Errorf("%s was opened", bad)
		}
	}
	if len(got) != 1 {
		t.Fatalf("the opener ran for a refused URL")
	}
	if strings.Contains(string(log.Bytes()), "nonce") {
		t.Fatalf("the prompt URL reached the log")
	}
	failing, _ := connect(t, s, cdp.Options{OpenURL: func(context.Context, string) error { return errors.New("no display") }})
	_, err = failing.OpenPrompt(step(t), "http://127.0.0.1:4321/nonce")
	if err == nil || strings.Contains(err.Error(), "nonce") {
		t.Fatalf("opener failure: %v", err)
	}
}

// TestInsertThen: Inspect reports the focused field's form, Insert sends
// it back with then, and the verdict carries the page's account of the
// submit; a document that goes away during the call (Chromium's "Inspected
// target navigated or closed") is a navigation, not a failure.
func TestInsertThen(t *testing.T) {
	form := &fill.FormInfo{Destination: fill.Destination{Action: "https://a.example"},
		Submitter: &fill.Destination{Action: "https://a.example"}}
	cases := []struct {
		name  string
		then  string
		after fakepage.Page
		want  fill.Verdict
		holds bool
	}{
		{"default submit", "", fakepage.Page{},
			fill.Verdict{Inserted: true, Matched: true, Submitted: true, Navigated: true, Cleared: true}, false},
		{"none", fill.ThenNone, fakepage.Page{}, fill.Verdict{Inserted: true, Matched: true, Remains: true}, true},
		{"script login", fill.ThenSubmit, fakepage.Page{Submit: fakepage.Script},
			fill.Verdict{Inserted: true, Matched: true, Submitted: true, Cleared: true}, false},
		{"validation", fill.ThenSubmit, fakepage.Page{Submit: fakepage.Invalid, InvalidField: "Terms"},
			fill.Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "invalid", StoppedBy: "Terms"}, false},
		{"form changed after the insert", fill.ThenSubmit, fakepage.Page{FormChanges: true},
			fill.Verdict{Inserted: true, Matched: true, Cleared: true, Stopped: "form_changed"}, false},
		{"gone mid-call", fill.ThenSubmit, fakepage.Page{Submit: fakepage.GoesAway},
			fill.Verdict{Inserted: true, Matched: true, Navigated: true, Unconfirmed: true}, false},
	}
	t.Run("gone before the insert", func(t *testing.T) {
		s := fakecdp.New(t)
		tg := page(s, "https://a.example/login", fill.FieldPassword)
		tg.Root.SetForm(form)
		tg.Root.LeavesBeforeInsert = true
		b, _ := connect(t, s, cdp.Options{})
		in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
		if err != nil {
			t.Fatal(err)
		}
		secret := leakscan.NewSecret(t)
		v, err := b.Insert(step(t), in, secret, fill.InsertOptions{})
		if err != nil || v != (fill.Verdict{Reason: "page_left"}) {
			t.Fatalf("verdict %+v, %v; want not inserted, page_left (no mark came)", v, err)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := fakecdp.New(t)
			tg := page(s, "https://a.example/login", fill.FieldPassword)
			tg.Root.SetForm(form)
			tg.Root.After = c.after
			b, log := connect(t, s, cdp.Options{})
			in, err := b.Inspect(step(t), fill.Request{Service: "a.example"})
			if err != nil {
				t.Fatal(err)
			}
			if in.Form == nil || in.Form.Action != form.Action || in.Form.Submitter == nil {
				t.Fatalf("inspected form %+v", in.Form)
			}
			secret := leakscan.NewSecret(t)
			v, err := b.Insert(step(t), in, secret, fill.InsertOptions{Then: c.then})
			if err != nil {
				t.Fatalf("insert: %v", err)
			}
			if v != c.want || tg.Root.FieldHolds() != c.holds || !tg.Root.ValueEquals(secret) {
				t.Fatalf("verdict %+v, field holds %v; want %+v, %v", v, tg.Root.FieldHolds(), c.want, c.holds)
			}
			out, _ := json.Marshal(v)
			leakscan.Bytes(t, secret, "the verdict", out)
			leakscan.Bytes(t, secret, "the log", log.Bytes())
		})
	}
}
