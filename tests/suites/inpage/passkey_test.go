package inpage

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/passkey"
	"github.com/fillgate/fillgate/internal/passkeyring"
	"github.com/fillgate/fillgate/tests/kit/poll"
	"github.com/fillgate/fillgate/tests/kit/rp"
)

// called is the worker's passkey_called notice, as the host reads it.
type called struct {
	Type             string `json:"type"`
	Request          string `json:"request"`
	Ceremony         string `json:"ceremony"`
	Tab              int    `json:"tab"`
	Frame            int    `json:"frame"`
	Origin           string `json:"origin"`
	RPID             string `json:"rp_id"`
	Challenge        string `json:"challenge"`
	UserVerification string `json:"user_verification"`
	Allow            []string
	User             struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"user"`
	Algs []int64 `json:"algs"`
}

// keyStore is an in-memory keyring for the test's stand-in host.
type keyStore map[keychain.Item][]byte

func (k keyStore) Store(_ context.Context, it keychain.Item, v []byte) (string, error) {
	k[it] = bytes.Clone(v)
	return "s", nil
}
func (k keyStore) Rewrite(_ context.Context, it keychain.Item, v []byte) error {
	k[it] = bytes.Clone(v)
	return nil
}
func (k keyStore) Get(_ context.Context, it keychain.Item) ([]byte, error) {
	if v, ok := k[it]; ok {
		return bytes.Clone(v), nil
	}
	return nil, keychain.ErrNotFound
}

var b64u = base64.RawURLEncoding

// TestPasskeyDoor runs the passkey door (door.js in the page's main world,
// relay.js in the isolated one, the worker's arms) in Chromium against a
// real relying party (go-webauthn), with the test standing in for the
// host: a call in a tab nobody armed goes to the browser's own WebAuthn
// (a CDP virtual authenticator the TEST adds over its own session stands
// in for the person's platform authenticator) and it still answers; an
// armed tab's one call reaches the host with the origin the browser
// names, and the host's answer is what the page gets, which the relying
// party verifies; pass runs the browser's own, untouched; refuse is
// NotAllowedError; conditional mediation and a frame's call never reach
// the host.
func TestPasskeyDoor(t *testing.T) {
	ctx := testContext(t)
	site := rp.Start(t, rp.Options{})
	_, bctx := startBrowser(t, ctx, true)
	w := attachWorker(t, ctx, bctx)
	w.stopHostRetries(ctx)
	w.call(nil, `function () { globalThis.posted = []; post = (m) => { posted.push(m); }; }`)
	tb := openTab(t, bctx, site.URL)
	rp.AddPersonsAuthenticator(t, tb.ctx)

	// soon bounds a wait for something that comes within moments.
	soon := func() context.Context {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		t.Cleanup(cancel)
		return c
	}
	status := func() string {
		s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// click presses the page's button and waits for its outcome.
	click := func(t *testing.T, button, want string) {
		t.Helper()
		tb.eval(`document.getElementById("status").textContent = "", document.getElementById("` + button + `").click(), true`)
		var got string
		_ = poll.Until(soon(), 50*time.Millisecond, func() (bool, error) { got = status(); return got != "", nil })
		if got != want {
			t.Fatalf("%s: the page says %q; want %q", button, got, want)
		}
	}
	posted := func() []called {
		var p []called
		w.call(&p, `function () { return posted.splice(0).filter((m) => String(m?.type).startsWith("passkey_")); }`)
		return p
	}
	// nextCall waits for the worker to tell the host of a page call.
	nextCall := func(t *testing.T) called {
		t.Helper()
		var got []called
		if err := poll.Until(soon(), 20*time.Millisecond, func() (bool, error) { got = append(got, posted()...); return len(got) > 0, nil }); err != nil {
			t.Fatal("the worker told the host of no call")
		}
		if len(got) != 1 || got[0].Type != "passkey_called" {
			t.Fatalf("posted %+v; want one passkey_called", got)
		}
		return got[0]
	}
	arm := func(t *testing.T, request, ceremony string) {
		t.Helper()
		r := w.answer(map[string]any{"id": 1, "type": "passkey_arm", "request": request, "ceremony": ceremony, "origin": site.URL,
			"deadline": time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)})
		if r.Type != "armed" || r.Frame != 0 {
			t.Fatalf("passkey_arm = %+v", r)
		}
	}
	// hostAnswers sends the host's response to the call under request
	// and returns what the page then says.
	hostAnswers := func(t *testing.T, request string, response map[string]any) string {
		t.Helper()
		if r := w.answer(map[string]any{"id": 2, "type": "passkey_answer", "request": request, "response": response}); r.Type != "ok" {
			t.Fatalf("passkey_answer = %+v", r)
		}
		var got string
		_ = poll.Until(soon(), 50*time.Millisecond, func() (bool, error) { got = status(); return got != "", nil })
		return got
	}
	o, _ := passkey.ParseOrigin(site.URL)
	rpID, _ := passkey.CheckRPID(o, "")
	store := keyStore{}

	t.Run("not armed: the browser's own authenticator answers", func(t *testing.T) {
		click(t, "add", "passkey added")
		click(t, "signin", "welcome ada")
		if p := posted(); len(p) != 0 {
			t.Fatalf("the worker told the host %+v", p)
		}
		if n := len(site.Registrations()); n != 1 {
			t.Fatalf("registrations = %d; want the virtual authenticator's one", n)
		}
	})

	var ours []byte
	t.Run("armed create: the host's attestation is what the site registers", func(t *testing.T) {
		arm(t, "r-create", "create")
		tb.eval(`document.getElementById("status").textContent = "", document.getElementById("add").click(), true`)
		c := nextCall(t)
		if c.Request != "r-create" || c.Ceremony != "create" || c.Frame != 0 || c.Origin != site.URL || c.User.Name != "ada" || c.User.ID == "" {
			t.Fatalf("passkey_called = %+v", c)
		}
		ch, _ := b64u.DecodeString(c.Challenge)
		user, _ := b64u.DecodeString(c.User.ID)
		en, err := passkeyring.Enrol(ctx, store, "localhost", "ada", o, rpID, user, ch, passkey.Presence{UserPresent: true, UserVerified: true})
		if err != nil {
			t.Fatal(err)
		}
		got := hostAnswers(t, "r-create", map[string]any{
			"id": b64u.EncodeToString(en.ID), "client_data_json": b64u.EncodeToString(en.ClientDataJSON),
			"authenticator_data": b64u.EncodeToString(en.AuthData), "attestation_object": b64u.EncodeToString(en.AttestationObject),
			"public_key": b64u.EncodeToString(en.PublicKeySPKI)})
		if got != "passkey added" {
			t.Fatalf("the page says %q", got)
		}
		regs := site.Registrations()
		if last := regs[len(regs)-1]; !bytes.Equal(last.CredentialID, en.ID) || last.AttestationFormat != "none" || !last.UserVerified {
			t.Fatalf("the site registered %+v", last)
		}
		ours = en.ID
	})

	t.Run("armed get: the host's assertion signs the user in, once", func(t *testing.T) {
		for want := uint32(1); want <= 2; want++ {
			arm(t, fmt.Sprintf("r-get-%d", want), "get")
			tb.eval(`document.getElementById("status").textContent = "", document.getElementById("signin").click(), true`)
			c := nextCall(t)
			if c.Ceremony != "get" || c.Origin != site.URL || len(c.Allow) != 2 || c.UserVerification != "preferred" {
				t.Fatalf("passkey_called = %+v", c)
			}
			ch, _ := b64u.DecodeString(c.Challenge)
			sg, err := passkeyring.Sign(ctx, store, "localhost", "ada", o, rpID, ch, passkey.Presence{UserPresent: true})
			if err != nil {
				t.Fatal(err)
			}
			got := hostAnswers(t, c.Request, map[string]any{
				"id": b64u.EncodeToString(sg.ID), "client_data_json": b64u.EncodeToString(sg.ClientDataJSON),
				"authenticator_data": b64u.EncodeToString(sg.AuthData), "signature": b64u.EncodeToString(sg.Signature),
				"user_handle": b64u.EncodeToString(sg.UserHandle)})
			if got != "welcome ada" || site.SignCount(ours) != want {
				t.Fatalf("the page says %q, the site counts %d; want welcome ada, %d", got, site.SignCount(ours), want)
			}
			// The arm was used up: the next call is the browser's own.
			click(t, "signin", "welcome ada")
			if p := posted(); len(p) != 0 || site.SignCount(ours) != want {
				t.Fatalf("a second call under one arm reached the host (%+v) or signed with ours", p)
			}
		}
	})

	t.Run("pass runs the browser's own; refuse is NotAllowedError", func(t *testing.T) {
		arm(t, "r-pass", "get")
		tb.eval(`document.getElementById("status").textContent = "", document.getElementById("signin").click(), true`)
		c := nextCall(t)
		if r := w.answer(map[string]any{"id": 4, "type": "passkey_pass", "request": c.Request}); r.Type != "ok" {
			t.Fatalf("passkey_pass = %+v", r)
		}
		var got string
		_ = poll.Until(soon(), 50*time.Millisecond, func() (bool, error) { got = status(); return got != "", nil })
		if got != "welcome ada" {
			t.Fatalf("after pass the page says %q; want the browser's own login", got)
		}
		arm(t, "r-refuse", "get")
		tb.eval(`document.getElementById("status").textContent = "", document.getElementById("signin").click(), true`)
		c = nextCall(t)
		if r := w.answer(map[string]any{"id": 5, "type": "passkey_refuse", "request": c.Request}); r.Type != "ok" {
			t.Fatalf("passkey_refuse = %+v", r)
		}
		_ = poll.Until(soon(), 50*time.Millisecond, func() (bool, error) { got = status(); return got != "", nil })
		if got != "error: The operation either timed out or was not allowed." {
			t.Fatalf("after refuse the page says %q", got)
		}
		if r := w.answer(map[string]any{"id": 6, "type": "passkey_answer", "request": c.Request, "response": map[string]any{}}); r.Type != "error" {
			t.Fatalf("an answer with no call waiting = %+v", r)
		}
	})

	t.Run("conditional mediation and the page's own tricks never reach the host", func(t *testing.T) {
		arm(t, "r-trick", "get")
		// A forged door port, a conditional get, and a get on another
		// object than navigator.credentials.
		tb.eval(`(() => {
			const { port1, port2 } = new MessageChannel();
			window.dispatchEvent(new MessageEvent("fillgate-door", { ports: [port2] }));
			window.dispatchEvent(new Event("fillgate-relay"));
			port1.postMessage({ n: 1, call: { ceremony: "get", challenge: "AAAA" } });
			const ac = new AbortController();
			navigator.credentials.get({ mediation: "conditional", signal: ac.signal, publicKey: { challenge: new Uint8Array(16) } }).catch(() => {});
			setTimeout(() => ac.abort(), 500);
			return true;
		})()`)
		time.Sleep(time.Second)
		if p := posted(); len(p) != 0 {
			t.Fatalf("the worker told the host %+v", p)
		}
		// The arm is still there for the page's real call.
		tb.eval(`document.getElementById("status").textContent = "", document.getElementById("signin").click(), true`)
		c := nextCall(t)
		if c.Request != "r-trick" {
			t.Fatalf("passkey_called = %+v", c)
		}
		w.answer(map[string]any{"id": 7, "type": "passkey_disarm", "request": c.Request})
		var got string
		_ = poll.Until(soon(), 50*time.Millisecond, func() (bool, error) { got = status(); return got != "", nil })
		if got != "welcome ada" {
			t.Fatalf("after disarm the page says %q; want the browser's own login", got)
		}
	})

	t.Run("a frame's call is the browser's own", func(t *testing.T) {
		arm(t, "r-frame", "get")
		// A same-site frame of the page: no door runs in frames, so its
		// call never reaches the worker, and the arm stays.
		tb.eval(`(() => { const f = document.createElement("iframe"); f.src = "/"; f.id = "fr"; document.body.append(f); return true; })()`)
		_ = poll.Until(soon(), 50*time.Millisecond, func() (bool, error) {
			return chromedp.Run(tb.ctx, chromedp.Evaluate[bool](`!!document.getElementById("fr").contentDocument?.getElementById("signin")`))
		})
		native := tb.eval(`String(document.getElementById("fr").contentWindow.CredentialsContainer.prototype.get).includes("[native code]")`)
		if !native {
			t.Fatal("the door runs in a frame")
		}
		if p := posted(); len(p) != 0 {
			t.Fatalf("the worker told the host %+v", p)
		}
		w.answer(map[string]any{"id": 8, "type": "passkey_disarm", "request": "r-frame"})
	})

	t.Run("navigation disarms", func(t *testing.T) {
		arm(t, "r-nav", "get")
		if err := chromedp.Do(tb.ctx, chromedp.Navigate(site.URL)); err != nil {
			t.Fatal(err)
		}
		var p []called
		_ = poll.Until(soon(), 20*time.Millisecond, func() (bool, error) { p = posted(); return len(p) > 0, nil })
		if len(p) != 1 || p[0].Type != "passkey_aborted" || p[0].Request != "r-nav" {
			t.Fatalf("posted %+v; want passkey_aborted for r-nav", p)
		}
		click(t, "signin", "welcome ada")
		if p := posted(); len(p) != 0 {
			t.Fatalf("the worker told the host %+v", p)
		}
	})
}
