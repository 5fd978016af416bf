// Package desktop is a test kit for native dialogs: a private X server
// (Xvfb) owned by one test, and a Person at it who waits for a window,
// reads its name, types, presses keys, closes windows as a window
// manager would, and takes screenshots (xdotool, ImageMagick's import).
//
// Every wait is bounded by a context. What a Person types goes to
// xdotool on its standard input, never in its arguments.
//
// The programs come from Debian packages tests/setup installs: xvfb,
// xdotool, x11-utils, imagemagick (and pinentry-gtk2 for the dialogs).
//
// It runs on Linux (and other Unix systems with Xvfb).
package desktop
