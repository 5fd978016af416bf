// Package undriven holds end-to-end tests of fillgate in a browser that
// a person started as people start theirs: headful Chromium on a private
// X server (Xvfb), with no remote debugging at all, the real extension,
// a host manifest written by the real installer, the real fillgate binary
// and a login page on 127.0.0.1. The agent runs `fillgate fill --json`;
// the person, at the X server's keyboard (xdotool), answers the prompt
// that opens in the browser, or the native dialog (pinentry-gtk-2) that
// fillgate shows instead once something can drive the browser (and then,
// under the person's default, logs in in its clean room: a headless
// browser of its own, which loads the login site's pages too; the site
// tells its pages there from the person's by the process that connects).
//
// The attacker is a second extension loaded next to fillgate's
// (tests/fakes/attackext): it stands for an agent's browser-driving extension
// and attaches to fillgate's prompt with chrome.debugger only after it
// opened, to read it, log its keys, type its own answer or click Approve.
//
// The tests need Xvfb, xdotool, x11-utils, ImageMagick, pinentry-gtk2,
// Chromium, gnome-keyring and D-Bus: tests/setup installs them. They
// fail, never skip, when one is missing.
package undriven
