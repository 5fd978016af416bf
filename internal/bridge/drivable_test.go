package bridge_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/bridge"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/kit/syncbuf"
)

// setupWith is setup with more bridge options.
func setupWith(t *testing.T, opt fakeext.Options, opts ...bridge.Option) *env {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ext, hostR, hostW := fakeext.Connect(ctx, opt)
	e := &env{ext: ext, logs: &syncbuf.Buffer{}, wire: &syncbuf.Buffer{}, runErr: make(chan error, 1)}
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.port = nativemsg.NewPort(hostR, tee{hostW, e.wire}, func(m json.RawMessage) { e.b.HandleNotice(m) }, nativemsg.WithLogger(logger))
	e.b = bridge.New(e.port, append([]bridge.Option{bridge.WithLogger(logger)}, opts...)...)
	go func() { e.runErr <- e.port.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		ext.Close()
		hostR.Close()
		hostW.Close()
	})
	select {
	case <-e.b.Hello():
	case <-time.After(wait):
		t.Fatal("no hello from the fake extension")
	}
	return e
}

// probe is a host-side probe that says d.
func probe(d fill.Drive) bridge.Option {
	return bridge.WithDriveProbe(func(context.Context) fill.Drive { return d })
}

// drivableAsked counts the drivable requests the fake extension got.
func drivableAsked(ext *fakeext.Ext) int {
	n := 0
	for _, m := range ext.Received() {
		if m.Type == "drivable" && m.ID != nil {
			n++
		}
	}
	return n
}

func TestDrivableNothing(t *testing.T) {
	e := setupWith(t, fakeext.Options{Page: loginPage}, probe(fill.Drive{}))
	d, err := e.b.Drivable(e.ctx(t))
	if err != nil || d.Driven || len(d.Reasons) != 0 {
		t.Fatalf("Drivable = %+v, %v; want not driven", d, err)
	}
	if drivableAsked(e.ext) != 1 {
		t.Fatalf("the extension got %d drivable requests; want 1", drivableAsked(e.ext))
	}
}

func TestDrivableMerges(t *testing.T) {
	page := loginPage
	page.Attached, page.Webdriver = 2, true
	outside := fill.Drive{Driven: true, Reasons: []string{"the browser was started with --remote-debugging-port"}}
	e := setupWith(t, fakeext.Options{Page: page}, probe(outside))
	d, err := e.b.Drivable(e.ctx(t))
	want := []string{
		"the browser was started with --remote-debugging-port",
		"a debugger is attached to 2 of its pages (DevTools, another extension or a program)",
		"navigator.webdriver is on (automation)",
	}
	if err != nil || !d.Driven || !slices.Equal(d.Reasons, want) {
		t.Fatalf("Drivable = %+v, %v; want driven for %q", d, err, want)
	}
	// The host's probe alone.
	e.ext.Update(func(p *fakeext.Page) { p.Attached, p.Webdriver = 0, false })
	d, err = e.b.Drivable(e.ctx(t))
	if err != nil || !d.Driven || !slices.Equal(d.Reasons, outside.Reasons) {
		t.Fatalf("Drivable = %+v, %v; want %+v", d, err, outside)
	}
	// Without a probe, the extension alone.
	e = setupWith(t, fakeext.Options{Page: page})
	if d, err = e.b.Drivable(e.ctx(t)); err != nil || !d.Driven || !slices.Equal(d.Reasons, want[1:]) {
		t.Fatalf("Drivable = %+v, %v; want %q", d, err, want[1:])
	}
}

func TestDrivableNoAnswerIsAnError(t *testing.T) {
	t.Run("ignored", func(t *testing.T) {
		e := setupWith(t, fakeext.Options{Page: loginPage}, probe(fill.Drive{}))
		e.ext.Ignore("drivable")
		start := time.Now()
		_, err := e.b.Drivable(e.ctx(t))
		if err == nil || !strings.Contains(err.Error(), "drivable") {
			t.Fatalf("Drivable with no answer: %v; want an error naming drivable", err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Fatalf("Drivable waited %v; the extension's answer is bounded", took)
		}
	})
	t.Run("refused", func(t *testing.T) {
		e := setupWith(t, fakeext.Options{Page: loginPage})
		e.ext.FailWith("drivable", "bad_request", "unknown request type")
		if _, err := e.b.Drivable(e.ctx(t)); err == nil {
			t.Fatal("Drivable answered by an error: no error")
		}
	})
	t.Run("disconnected", func(t *testing.T) {
		e := setupWith(t, fakeext.Options{Page: loginPage})
		e.ext.Disconnect()
		<-e.port.Done()
		if _, err := e.b.Drivable(e.ctx(t)); err == nil {
			t.Fatal("Drivable with the extension gone: no error")
		}
	})
}

// rawExt is an extension that answers drivable with reply (an id is
// added) and counts the requests.
type rawExt struct {
	asked atomic.Int32
}

// startRaw connects a Bridge with opts to an extension that answers every
// request with reply.
func startRaw(t *testing.T, reply map[string]any, opts ...bridge.Option) (*bridge.Bridge, *rawExt) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	extR, hostW := io.Pipe()
	hostR, extW := io.Pipe()
	ext := &rawExt{}
	var mu sync.Mutex // one frame at a time on extW
	go func() {
		for {
			body, err := nativemsg.ReadFrame(extR)
			if err != nil {
				return
			}
			var req struct {
				ID *int64 `json:"id"`
			}
			if json.Unmarshal(body, &req) != nil || req.ID == nil {
				continue
			}
			ext.asked.Add(1)
			r := map[string]any{"id": *req.ID}
			for k, v := range reply {
				r[k] = v
			}
			out, _ := json.Marshal(r)
			mu.Lock()
			_ = nativemsg.WriteFrame(extW, out)
			mu.Unlock()
		}
	}()
	port := nativemsg.NewPort(hostR, hostW, func(json.RawMessage) {})
	b := bridge.New(port, opts...)
	go func() { _ = port.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		extR.Close()
		extW.Close()
		hostR.Close()
		hostW.Close()
	})
	return b, ext
}

func TestDrivableNoDebuggerAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	blind := map[string]any{"type": "drivable", "attached": 0, "webdriver": false, "debugger_api": false, "others": 0}
	// Chromium without chrome.debugger cannot see attached debuggers.
	b, _ := startRaw(t, blind)
	d, err := b.Drivable(ctx)
	if err != nil || !d.Driven || !slices.Equal(d.Reasons, []string{"the extension cannot see attached debuggers here (no chrome.debugger)"}) {
		t.Fatalf("Chromium without chrome.debugger: %+v, %v", d, err)
	}
	// Firefox has none to see.
	b, _ = startRaw(t, blind, bridge.WithFamily(manifest.Firefox))
	if d, err = b.Drivable(ctx); err != nil || d.Driven {
		t.Fatalf("Firefox: %+v, %v; want not driven", d, err)
	}
	b, _ = startRaw(t, map[string]any{"type": "drivable", "attached": 0, "webdriver": true, "debugger_api": false, "others": 0}, bridge.WithFamily(manifest.Firefox))
	if d, err = b.Drivable(ctx); err != nil || !slices.Equal(d.Reasons, []string{"navigator.webdriver is on (automation)"}) {
		t.Fatalf("Firefox under automation: %+v, %v", d, err)
	}
}

func TestDrivableMalformed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, reply := range []map[string]any{
		{"type": "drivable", "attached": -1, "debugger_api": true, "others": 0},
		{"type": "drivable", "attached": "many", "debugger_api": true, "others": 0},
		{"type": "pong"},
	} {
		b, _ := startRaw(t, reply)
		if d, err := b.Drivable(ctx); err == nil {
			t.Errorf("reply %v: %+v with no error", reply, d)
		}
	}
}

func TestDriveStatusShares(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b, ext := startRaw(t, map[string]any{"type": "drivable", "attached": 1, "webdriver": false, "debugger_api": true, "others": 0},
		bridge.WithClock(clock), probe(fill.Drive{}))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if d := b.DriveStatus(ctx); !d.Driven || len(d.Reasons) != 1 {
				t.Errorf("DriveStatus = %+v", d)
			}
		})
	}
	wg.Wait()
	if n := ext.asked.Load(); n != 1 {
		t.Fatalf("50 status requests asked the extension %d times; want once", n)
	}
	b.DriveStatus(ctx) // within driveShare: the same answer
	if n := ext.asked.Load(); n != 1 {
		t.Fatalf("a status within a second asked again (%d)", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	b.DriveStatus(ctx)
	if n := ext.asked.Load(); n != 2 {
		t.Fatalf("a status two seconds later asked %d times in all; want 2", n)
	}
}

func TestDriveStatusNeverFails(t *testing.T) {
	e := setupWith(t, fakeext.Options{Page: loginPage})
	e.ext.Ignore("drivable")
	ctx, cancel := context.WithTimeout(e.ctx(t), 50*time.Millisecond)
	defer cancel()
	d := e.b.DriveStatus(ctx)
	if !d.Driven || len(d.Reasons) != 1 || !strings.Contains(d.Reasons[0], "could not tell in time") {
		t.Fatalf("DriveStatus with no answer in time = %+v; want driven, cannot tell", d)
	}
	// Nobody waits for that question any more: the next status asks again,
	// and gets the extension's refusal as "cannot tell".
	e.ext.Unignore("drivable")
	e.ext.FailWith("drivable", "internal", "boom")
	d = e.b.DriveStatus(e.ctx(t))
	if !d.Driven || len(d.Reasons) != 1 || !strings.HasPrefix(d.Reasons[0], "fillgate could not ask the extension: ") {
		t.Fatalf("DriveStatus with a refusal = %+v; want driven, could not ask", d)
	}
}

// TestDrivableOtherExtensions: another extension that holds the debugger
// permission or access to 127.0.0.1 could drive the browser, or script
// the prompt's page, at any moment, attaching and detaching between two
// checks: the browser counts as drivable while one is enabled. An
// extension that cannot tell (or an older one that does not say) counts
// as drivable too.
func TestDrivableOtherExtensions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, c := range []struct {
		reply  map[string]any
		driven bool
		reason string
	}{
		{map[string]any{"type": "drivable", "attached": 0, "debugger_api": true, "others": 0}, false, ""},
		{map[string]any{"type": "drivable", "attached": 0, "debugger_api": true, "others": 1}, true, "another extension could drive it"},
		{map[string]any{"type": "drivable", "attached": 0, "debugger_api": true, "others": 3}, true, "3 other extensions could drive it"},
		{map[string]any{"type": "drivable", "attached": 0, "debugger_api": true, "others": -1}, true, "cannot list the browser's other extensions"},
		{map[string]any{"type": "drivable", "attached": 0, "debugger_api": true}, true, "cannot list the browser's other extensions"},
	} {
		b, _ := startRaw(t, c.reply)
		d, err := b.Drivable(ctx)
		if err != nil || d.Driven != c.driven || (c.reason != "" && (len(d.Reasons) != 1 || !strings.Contains(d.Reasons[0], c.reason))) {
			t.Errorf("reply %v: %+v, %v; want driven %v, %q", c.reply, d, err, c.driven, c.reason)
		}
	}
}
