package rp

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"
)

// AddPersonsAuthenticator stands in, in the Chromium tab of tab (a
// chromedp context on the test's own CDP session), for the person's own
// platform authenticator: a DevTools Protocol virtual authenticator that
// keeps discoverable credentials, verifies the user and answers at once.
// Only a test adds one; fillgate never uses the WebAuthn domain (it would
// hand the private keys to anyone on the debugging port).
func AddPersonsAuthenticator(t testing.TB, tab context.Context) {
	t.Helper()
	if _, err := chromedp.Call(tab, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("rp: enable the WebAuthn domain: %v", err)
	}
	if _, err := chromedp.Call(tab, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}}); err != nil {
		t.Fatalf("rp: add the person's authenticator: %v", err)
	}
}
