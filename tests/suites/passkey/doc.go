// Package passkey runs passkeys for agents end to end: the real host
// binary started by real Chromium for the real extension (the manifest
// from `fillgate install`), a real Secret Service holding the key, the
// person answering the native dialog on a private X display, and a real
// WebAuthn relying party (tests/kit/rp, go-webauthn) verifying every
// registration and assertion.
package passkey
