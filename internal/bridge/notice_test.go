package bridge_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/bridge"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
)

func TestNotify(t *testing.T) {
	e := setup(t, fakeext.Options{Page: loginPage})
	n := fill.Notice{Title: "fillgate is filling the password for github.com", Message: "Asked by claude (pid 1)."}
	if err := e.b.Notify(e.ctx(t), n); err != nil {
		t.Fatal(err)
	}
	if got := e.ext.Notices(); len(got) != 1 || got[0] != n {
		t.Errorf("the extension showed %+v", got)
	}
	e.ext.FailNotices(true)
	if err := e.b.Notify(e.ctx(t), n); err == nil {
		t.Error("a notice the extension could not show did not fail")
	}
}

// TestLeasesInThePopup: the host lists its leases after the extension's
// hello and on PushLeases (no agent key, no value), and the popup's
// end_lease ends one and gets the new list.
func TestLeasesInThePopup(t *testing.T) {
	var mu sync.Mutex
	until := time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)
	leases := []fill.Lease{{ID: "l1", AgentKey: "/usr/bin/claude", Agent: "claude (pid 1)", Service: "github.com",
		Field: fill.FieldPassword, Account: "alice", Origin: "https://github.com", Until: until}}
	ended := ""
	list := func(time.Time) []fill.Lease {
		mu.Lock()
		defer mu.Unlock()
		return append([]fill.Lease(nil), leases...)
	}
	end := func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		ended, leases = id, nil
		return true
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ext, hostR, hostW := fakeext.Connect(ctx, fakeext.Options{Page: loginPage})
	t.Cleanup(ext.Close)
	var b *bridge.Bridge
	port := nativemsg.NewPort(hostR, hostW, func(m json.RawMessage) { b.HandleNotice(m) })
	b = bridge.New(port, bridge.WithLeases(list, end), bridge.WithLogger(slog.New(slog.DiscardHandler)))
	go func() { _ = port.Run(ctx) }()

	m, err := ext.Wait(ctxFor(t), fakeext.OfType("leases"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ext.Leases(); len(got) != 1 || got[0] != (fakeext.Lease{ID: "l1", Agent: "claude (pid 1)", Service: "github.com",
		Field: fill.FieldPassword, Account: "alice", Origin: "https://github.com", Until: "2026-11-30T10:30:00Z"}) {
		t.Errorf("the popup lists %+v", got)
	}
	var raw map[string][]map[string]any
	_ = json.Unmarshal(m.Raw, &raw)
	if _, ok := raw["leases"][0]["agent_key"]; ok {
		t.Error("the leases notice carries the agent key")
	}
	ext.EndLease("l1")
	n := 0
	if _, err := ext.Wait(ctxFor(t), func(m fakeext.Message) bool {
		if m.Type == "leases" {
			n++
		}
		return n == 2
	}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if ended != "l1" || len(ext.Leases()) != 0 {
		t.Errorf("ended %q; the popup lists %+v", ended, ext.Leases())
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}
