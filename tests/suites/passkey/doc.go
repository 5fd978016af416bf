// Package passkey runs passkeys for agents end to end: the real host
// binary started by real Chromium and Firefox ESR for the real extension
// (the manifest and the unpacked extension from `fillgate install`), a
// real Secret Service holding the key, the person answering the native
// dialog on a private X display, and a real WebAuthn relying party
// (tests/kit/rp, go-webauthn) verifying every registration and
// assertion. What both browsers must do is one flow (flow_test.go) that
// takes the browser's tab as a parameter. The test drives both over their
// own protocols, so fillgate finds them drivable: the agents' passkey is
// used there only under driven = "in-page", approved in the dialog each
// time. Lease and approval none run in a Chromium nothing drives
// (undriven_test.go), which the test reaches only through the site's page
// script and the person's X display.
package passkey
