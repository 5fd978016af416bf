// Package cleanroom holds the end-to-end tests of fillgate's clean room:
// in a browser a program drives (the agent's Chromium with a debugging
// port, the extension's path and the CDP path), the login happens in a
// headless browser only fillgate holds, and the driven browser is handed
// the session. The login site has real server-side sessions
// (tests/kit/sessionsite); the person answers in the real native dialog
// (pinentry on a private X display); the agents' own tools are attached to
// the driven browser, as observers and as attackers.
package cleanroom
