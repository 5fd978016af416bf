package drivable

import (
	"strings"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// chromiumView is what a Chromium-family command line says.
type chromiumView struct {
	reasons     []string
	userDataDir string // --user-data-dir, "" when not given
}

// chromiumSwitches are the switches that open a Chromium-family browser to
// a program, with the reason each gives.
var chromiumSwitches = map[string]string{
	"remote-debugging-port":     "the browser was started with --remote-debugging-port",
	"remote-debugging-pipe":     "the browser was started with --remote-debugging-pipe",
	"remote-debugging-address":  "the browser was started with --remote-debugging-address",
	"remote-debugging-io-pipes": "the browser was started with --remote-debugging-io-pipes",
	"enable-automation":         "the browser was started with --enable-automation (automation)",
}

// chromiumFlags reads a Chromium-family command line, argv[0] first.
func chromiumFlags(args []string) chromiumView {
	c := browsertable.ReadCommandLine(manifest.Chromium, args)
	v := chromiumView{userDataDir: c.UserDataDir}
	for _, name := range c.Switches {
		if r, ok := chromiumSwitches[name]; ok {
			v.reasons = appendOnce(v.reasons, r)
		} else if strings.HasPrefix(name, "remote-debugging-") {
			v.reasons = appendOnce(v.reasons, "the browser was started with a --remote-debugging switch")
		}
	}
	return v
}

// firefoxView is what a Firefox command line says.
type firefoxView struct {
	reasons []string
	profile string // -profile PATH, "" when not given
	named   string // -P NAME, "" when not given
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

// firefoxFlags reads a Firefox command line, argv[0] first.
func firefoxFlags(args []string) firefoxView {
	c := browsertable.ReadCommandLine(manifest.Firefox, args)
	v := firefoxView{profile: c.Profile, named: c.ProfileName}
	for _, name := range c.Switches {
		if r, ok := firefoxSwitches[name]; ok {
			v.reasons = appendOnce(v.reasons, r)
		}
	}
	return v
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
