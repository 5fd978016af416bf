package inpage

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/passkey"
	"github.com/fillgate/fillgate/internal/passkeyring"
	"github.com/fillgate/fillgate/tests/kit/rp"
)

// TestFirefoxPasskeyDoor runs the passkey door in Firefox ESR (door.js in
// the page's world, relay.js as a content script, passkeys.js in the
// background script) with the test as the host: a call in a tab nobody
// armed goes to Firefox's own WebAuthn at once, and the armed tab's one
// call reaches the host with the origin Firefox names and gets the
// host's assertion as a PublicKeyCredential.
func TestFirefoxPasskeyDoor(t *testing.T) {
	x := startFirefox(t)
	h, tab := x.h, x.tab
	site := rp.Start(t, rp.Options{})
	tab.navigate(site.URL)

	if tab.callBool(`function () { return String(CredentialsContainer.prototype.get).includes("[native code]"); }`) {
		t.Fatal("the door does not wrap navigator.credentials.get in Firefox")
	}
	// Not armed: Firefox's own WebAuthn answers, at once (not after the
	// door's wait): here it refuses, as it does every call of a document
	// without focus (document.hasFocus() is false under WebDriver), with
	// its own words, not the door's.
	if !tab.callBool(`async function () {
		const t0 = Date.now();
		try { await navigator.credentials.get({ publicKey: { challenge: new Uint8Array(32), rpId: "example.com" } }); return false; }
		catch (e) {
			return e instanceof DOMException && ["SecurityError", "NotAllowedError"].includes(e.name) &&
				e.message !== "The operation either timed out or was not allowed." && Date.now() - t0 < 5000;
		}
	}`) {
		t.Fatal("an unarmed call did not reach Firefox's own WebAuthn at once")
	}

	// Armed: the call reaches the host; the host's answer is the page's.
	store := keyStore{}
	o, _ := passkey.ParseOrigin(site.URL)
	rpID, _ := passkey.CheckRPID(o, "")
	if _, err := passkeyring.Enrol(context.Background(), store, "localhost", "", o, rpID, []byte{1}, []byte("enrol challenge"), passkey.Presence{UserPresent: true}); err != nil {
		t.Fatal(err)
	}
	h.send(map[string]any{"id": 1, "type": "passkey_arm", "request": "r-ff", "ceremony": "get", "origin": site.URL,
		"deadline": time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)})
	h.expect(map[string]any{"id": 1, "type": "armed", "frame": 0})
	calls := make(chan bool, 1)
	go func() {
		calls <- tab.callBool(`async function () {
			const cred = await navigator.credentials.get({ publicKey: { challenge: new TextEncoder().encode("the site's challenge"), rpId: "localhost" } });
			return cred instanceof PublicKeyCredential && cred.type === "public-key" && cred.response.signature.byteLength > 8 &&
				cred.rawId.byteLength === 16 && cred.response instanceof AuthenticatorAssertionResponse;
		}`)
	}()
	var c map[string]any
	for c == nil || c["type"] != "passkey_called" {
		c = h.read()
	}
	if c["request"] != "r-ff" || c["origin"] != site.URL || c["frame"] != 0.0 || c["ceremony"] != "get" || c["rp_id"] != "localhost" {
		t.Fatalf("passkey_called = %v", c)
	}
	ch, _ := base64.RawURLEncoding.DecodeString(c["challenge"].(string))
	if string(ch) != "the site's challenge" {
		t.Fatal("the challenge did not come through")
	}
	sg, err := passkeyring.Sign(context.Background(), store, "localhost", "", o, rpID, ch, passkey.Presence{UserPresent: true})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	h.send(map[string]any{"id": 2, "type": "passkey_answer", "request": "r-ff", "response": map[string]any{
		"id": enc(sg.ID), "client_data_json": enc(sg.ClientDataJSON), "authenticator_data": enc(sg.AuthData),
		"signature": enc(sg.Signature), "user_handle": enc(sg.UserHandle)}})
	h.expect(map[string]any{"id": 2, "type": "ok"})
	select {
	case ok := <-calls:
		if !ok {
			t.Fatal("the page did not get the host's assertion as a PublicKeyCredential")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the page's call never ended")
	}
}
