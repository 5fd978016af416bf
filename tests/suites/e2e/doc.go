// Package e2e runs fillgate end to end in real browsers: the fillgate
// binary built from this module, installed by its own `fillgate install`,
// the real MV3 extension loaded into headless Chromium and into Firefox
// ESR (as a temporary add-on, driven over WebDriver BiDi: the scenarios
// run in both), the host the browser starts from the host manifest, login
// pages on loopback, and `fillgate fill` run as the agent. The test plays
// the human at the prompt popup through the browser itself, then checks
// the page, the agent's result and exit code, and scans every output,
// log, file and the host's argv and environment for the secret.
//
// The tests run on Linux (they read the host's /proc entries) with Debian's
// chromium and firefox-esr; without a browser they fail with the install
// hint, never skip. Run them with `go test ./tests/suites/e2e/`. Set
// FILLGATE_UPDATE_SCREENSHOT=1 to rewrite testdata/prompt.png and
// testdata/prompt-dark.png; run `go test -run '^$' -bench .
// -benchtime 20x ./tests/suites/e2e/` for the round-trip benchmarks (Chromium's
// and Firefox's).
package e2e
