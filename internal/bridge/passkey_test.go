package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/bridge"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/nativemsg"
	"github.com/fillgate/fillgate/internal/passkey"
)

// ext is the extension's end of a native port, played by the test.
type ext struct {
	t  *testing.T
	r  io.Reader
	w  io.Writer
	in chan map[string]any
}

func (x *ext) send(m map[string]any) {
	x.t.Helper()
	b, _ := json.Marshal(m)
	if err := nativemsg.WriteFrame(x.w, b); err != nil {
		x.t.Fatal(err)
	}
}

// next is the host's next message.
func (x *ext) next() map[string]any {
	x.t.Helper()
	select {
	case m := <-x.in:
		return m
	case <-time.After(wait):
		x.t.Fatal("the host sent nothing")
		return nil
	}
}

func passkeySetup(t *testing.T) (*bridge.Bridge, *ext) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hostR, extW := io.Pipe()
	extR, hostW := io.Pipe()
	var b *bridge.Bridge
	port := nativemsg.NewPort(hostR, hostW, func(m json.RawMessage) { b.HandleNotice(m) })
	b = bridge.New(port)
	go func() { _ = port.Run(ctx) }()
	x := &ext{t: t, r: extR, w: extW, in: make(chan map[string]any, 16)}
	go func() {
		for {
			body, err := nativemsg.ReadFrame(extR)
			if err != nil {
				return
			}
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			x.in <- m
		}
	}()
	t.Cleanup(func() { cancel(); extW.Close(); hostW.Close(); hostR.Close(); extR.Close() })
	return b, x
}

func TestArmPasskey(t *testing.T) {
	b, x := passkeySetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	a := passkey.Arm{ID: "r1", Tab: 12, Ceremony: passkey.Get, Service: "example.com", Origin: "https://login.example.com", Deadline: time.Now().Add(time.Minute)}
	type result struct {
		c   passkey.Call
		err error
	}
	done := make(chan result, 1)
	armed := make(chan struct{})
	go func() { c, err := b.ArmPasskey(ctx, a, "example.com", func() { close(armed) }); done <- result{c, err} }()

	arm := x.next()
	if arm["type"] != "passkey_arm" || arm["request"] != "r1" || arm["tab"] != 12.0 || arm["frame"] != 0.0 || arm["ceremony"] != "get" ||
		arm["origin"] != "https://login.example.com" || arm["deadline"] == "" {
		t.Fatalf("passkey_arm = %v", arm)
	}
	select {
	case <-armed:
		t.Fatal("armed was called before the extension armed the tab")
	default:
	}
	x.send(map[string]any{"id": arm["id"], "type": "armed", "tab": 12, "frame": 0})
	select {
	case <-armed: // before the page's call: an agent that does not wait clicks only now
	case <-ctx.Done():
		t.Fatal("armed was not called once the extension armed the tab")
	}
	// A call under another request is let through at once.
	x.send(map[string]any{"type": "passkey_called", "request": "r9", "ceremony": "get", "tab": 12, "frame": 0, "origin": "https://login.example.com", "challenge": "AQID"})
	if m := x.next(); m["type"] != "passkey_pass" || m["request"] != "r9" {
		t.Fatalf("for a call nobody armed the host sent %v; want passkey_pass", m)
	}
	x.send(map[string]any{"type": "passkey_called", "request": "r1", "ceremony": "get", "tab": 12, "frame": 0, "origin": "https://login.example.com",
		"rp_id": "example.com", "challenge": "AQID", "user_verification": "required", "allow": []string{"8RE"}})
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := passkey.Call{ID: "r1", Ceremony: passkey.Get, Tab: 12, Origin: "https://login.example.com", RPID: "example.com",
		Challenge: []byte{1, 2, 3}, UserVerification: "required", Allow: [][]byte{{0xf1, 0x11}}}
	if r.c.ID != want.ID || r.c.Ceremony != want.Ceremony || r.c.Tab != want.Tab || r.c.Origin != want.Origin || r.c.RPID != want.RPID ||
		!bytes.Equal(r.c.Challenge, want.Challenge) || r.c.UserVerification != want.UserVerification || len(r.c.Allow) != 1 || !bytes.Equal(r.c.Allow[0], want.Allow[0]) {
		t.Fatalf("call = %+v; want %+v", r.c, want)
	}

	// The answer carries only the response, base64url.
	go func() {
		m := x.next()
		x.send(map[string]any{"id": m["id"], "type": "ok"})
		done <- result{err: func() error {
			resp, _ := m["response"].(map[string]any)
			if m["type"] != "passkey_answer" || m["request"] != "r1" || resp["signature"] != "BAU" || resp["id"] != "8RE" {
				return errors.New("bad answer")
			}
			return nil
		}()}
	}()
	if err := b.AnswerPasskey(ctx, "r1", fill.PasskeyResponse{ID: []byte{0xf1, 0x11}, ClientDataJSON: []byte("{}"), AuthenticatorData: []byte{1}, Signature: []byte{4, 5}}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r.err != nil {
		t.Fatal(r.err)
	}
}

func TestArmPasskeyEnds(t *testing.T) {
	b, x := passkeySetup(t)
	a := passkey.Arm{ID: "r2", Tab: 3, Ceremony: passkey.Create, Origin: "https://a.test", Deadline: time.Now().Add(time.Minute)}

	// The extension says the arm ended unused.
	errc := make(chan error, 1)
	go func() { _, err := b.ArmPasskey(context.Background(), a, "", nil); errc <- err }()
	arm := x.next()
	if arm["ceremony"] != "create" {
		t.Fatalf("passkey_arm = %v", arm)
	}
	x.send(map[string]any{"id": arm["id"], "type": "armed", "tab": 3, "frame": 0})
	x.send(map[string]any{"type": "passkey_aborted", "request": "r2", "reason": "navigated"})
	if err := <-errc; !errors.Is(err, bridge.ErrPasskeyAborted) {
		t.Fatalf("ArmPasskey = %v; want ErrPasskeyAborted", err)
	}

	// The agent gives up: the host disarms.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err := b.ArmPasskey(ctx, a, "", nil); errc <- err }()
	arm = x.next()
	x.send(map[string]any{"id": arm["id"], "type": "armed", "tab": 3, "frame": 0})
	time.Sleep(50 * time.Millisecond)
	cancel()
	if m := x.next(); m["type"] != "passkey_disarm" || m["request"] != "r2" {
		t.Fatalf("after the agent gave up the host sent %v; want passkey_disarm", m)
	}
	if err := <-errc; err == nil {
		t.Fatal("ArmPasskey returned no error after ctx ended")
	}

	// The extension armed another tab than asked: disarmed, an error.
	go func() { _, err := b.ArmPasskey(context.Background(), a, "", nil); errc <- err }()
	arm = x.next()
	x.send(map[string]any{"id": arm["id"], "type": "armed", "tab": 4, "frame": 0})
	if m := x.next(); m["type"] != "passkey_disarm" {
		t.Fatalf("the host sent %v; want passkey_disarm", m)
	}
	if err := <-errc; err == nil {
		t.Fatal("an arm of another tab was taken")
	}

	// A refusal of the arm is an error.
	go func() { _, err := b.ArmPasskey(context.Background(), a, "", nil); errc <- err }()
	arm = x.next()
	x.send(map[string]any{"id": arm["id"], "type": "error", "error": "origin_changed", "detail": "the tab shows another origin"})
	if err := <-errc; err == nil {
		t.Fatal("a refused arm returned no error")
	}
}
