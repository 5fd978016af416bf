package drivable

import (
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// chromiumSwitches are the switches that open a Chromium-family browser to
// a program, with the reason each gives.
var chromiumSwitches = map[string]string{
	"remote-debugging-port":     "the browser was started with --remote-debugging-port",
	"remote-debugging-pipe":     "the browser was started with --remote-debugging-pipe",
	"remote-debugging-address":  "the browser was started with --remote-debugging-address",
	"remote-debugging-io-pipes": "the browser was started with --remote-debugging-io-pipes",
	"enable-automation":         "the browser was started with --enable-automation (automation)",
}

// firefoxSwitches are the flags that open Firefox to a program, with the
// reason each gives.
var firefoxSwitches = map[string]string{
	"juggler":               "the browser was started with -juggler (Playwright)",
	"juggler-pipe":          "the browser was started with -juggler-pipe (Playwright)",
	"marionette":            "the browser was started with -marionette (WebDriver)",
	"remote-debugging-port": "the browser was started with --remote-debugging-port (WebDriver BiDi)",
	"start-debugger-server": "the browser was started with -start-debugger-server",
}

// switchReasons says why the switches of a command line of family f open
// the browser to a program, one reason each, in their order.
func switchReasons(f manifest.Family, c browsertable.CommandLine) []string {
	known := chromiumSwitches
	if f == manifest.Firefox {
		known = firefoxSwitches
	}
	var reasons []string
	for _, name := range c.Switches {
		r, ok := known[name]
		if !ok && f != manifest.Firefox && strings.HasPrefix(name, "remote-debugging-") {
			r, ok = "the browser was started with a --remote-debugging switch", true
		}
		if ok {
			reasons = appendOnce(reasons, r)
		}
	}
	return reasons
}

// firefoxEnv is what the environment Firefox handed the host says: Firefox
// sets MOZ_MARIONETTE once Marionette listens (and starts Marionette when
// it finds it set).
func firefoxEnv(env func(string) string) []string {
	if env("MOZ_MARIONETTE") != "" {
		return []string{"Marionette is on (MOZ_MARIONETTE is set)"}
	}
	return nil
}

// appendOnce appends s unless list holds it.
func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
