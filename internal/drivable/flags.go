package drivable

import (
	"cmp"
	"strings"

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

// Profile names the profile a browser's command line (argv[0] first)
// starts, as the browser reads it: a Chromium-family browser's
// --user-data-dir, Firefox's -profile path or else its -P name; "" when
// it names none. The host names its browser's profile with it, from the
// same reading that judges whether a program drives that browser.
func Profile(family manifest.Family, args []string) string {
	if family == manifest.Firefox {
		f := firefoxFlags(args)
		return cmp.Or(f.profile, f.named)
	}
	return chromiumFlags(args).userDataDir
}

// chromiumFlags reads a Chromium-family command line, argv[0] first.
//
// Chromium on Linux rewrites its process title: /proc/<pid>/cmdline is then
// one string of the arguments joined by spaces. Its switches are then
// looked for word by word, and --user-data-dir's value runs to the next
// " --" (a path may hold spaces).
func chromiumFlags(args []string) chromiumView {
	var v chromiumView
	if len(args) == 0 {
		return v
	}
	words := args[1:]
	if len(args) == 1 && strings.Contains(args[0], " -") {
		title := args[0]
		words = strings.Fields(title)[1:]
		if _, val, ok := strings.Cut(title, " --user-data-dir="); ok {
			v.userDataDir, _, _ = strings.Cut(val, " --")
		}
	}
	for _, w := range words {
		if w == "--" {
			break // the rest are URLs
		}
		name, val, ok := chromiumSwitch(w)
		if !ok {
			continue
		}
		if r, ok := chromiumSwitches[name]; ok {
			v.reasons = appendOnce(v.reasons, r)
		} else if strings.HasPrefix(name, "remote-debugging-") {
			v.reasons = appendOnce(v.reasons, "the browser was started with a --remote-debugging switch")
		}
		if name == "user-data-dir" && len(args) > 1 {
			v.userDataDir = val
		}
	}
	return v
}

// chromiumSwitch splits a Chromium switch ("--name=value", "-name", and
// on Windows "/name=value") into its lower-case name and its value.
func chromiumSwitch(w string) (name, val string, ok bool) {
	s, ok := strings.CutPrefix(w, "--")
	if !ok {
		s, ok = strings.CutPrefix(w, "-")
	}
	slash := false
	if !ok {
		s, ok = strings.CutPrefix(w, "/")
		slash = true
	}
	if !ok || s == "" {
		return "", "", false
	}
	name, val, _ = strings.Cut(s, "=")
	if slash && strings.ContainsAny(name, `/\`) {
		return "", "", false // a path, not a switch
	}
	return lower(name), val, true
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

// firefoxFlags reads a Firefox command line, argv[0] first. Firefox takes
// its flags with one dash or two (and a slash on Windows), in any case,
// with a value after a space or an "=".
func firefoxFlags(args []string) firefoxView {
	var v firefoxView
	if len(args) == 0 {
		return v
	}
	args = args[1:]
	for i, a := range args {
		name, val, ok := firefoxFlag(a)
		if !ok {
			continue
		}
		if r, ok := firefoxSwitches[name]; ok {
			v.reasons = appendOnce(v.reasons, r)
			continue
		}
		if name != "profile" && name != "p" {
			continue
		}
		if val == "" && i+1 < len(args) {
			val = args[i+1]
		}
		if name == "profile" {
			v.profile = val
		} else {
			v.named = val
		}
	}
	return v
}

// firefoxFlag splits a Firefox flag into its lower-case name and the value
// given with "=", if any.
func firefoxFlag(a string) (name, val string, ok bool) {
	s, ok := strings.CutPrefix(a, "--")
	if !ok {
		s, ok = strings.CutPrefix(a, "-")
	}
	if !ok {
		s, ok = strings.CutPrefix(a, "/")
	}
	name, val, _ = strings.Cut(s, "=")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", "", false // a path, not a flag
	}
	return lower(name), val, true
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

// lower is strings.ToLower for the ASCII of switch names.
func lower(s string) string { return strings.ToLower(s) }
