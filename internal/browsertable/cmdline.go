package browsertable

import (
	"slices"
	"strings"

	"github.com/fillgate/fillgate/internal/manifest"
)

// CommandLine is what a browser's command line says, read as the browser
// reads it.
type CommandLine struct {
	// Switches are the names of its switches or flags, in lower case,
	// each once, in order ("remote-debugging-port", "marionette").
	Switches []string
	// UserDataDir is a Chromium-family browser's --user-data-dir.
	UserDataDir string
	// Profile is Firefox's -profile PATH; ProfileName its -P NAME.
	Profile, ProfileName string
}

// ProfileID names the profile the command line starts: --user-data-dir,
// -profile or else -P; "" when it names none.
func (c CommandLine) ProfileID() string {
	switch {
	case c.UserDataDir != "":
		return c.UserDataDir
	case c.Profile != "":
		return c.Profile
	}
	return c.ProfileName
}

// ReadCommandLine reads the command line (argv[0] first) of a browser of
// family f.
func ReadCommandLine(f manifest.Family, args []string) CommandLine {
	if f == manifest.Firefox {
		return firefoxCommandLine(args)
	}
	return chromiumCommandLine(args)
}

// chromiumCommandLine reads a Chromium-family command line.
//
// Chromium on Linux rewrites its process title: /proc/<pid>/cmdline is then
// one string of the arguments joined by spaces. Its switches are then
// looked for word by word, past a "--" too (it may be a word of a value
// with spaces), and --user-data-dir's value runs to the next " --" (a path
// may hold spaces).
func chromiumCommandLine(args []string) CommandLine {
	var c CommandLine
	if len(args) == 0 {
		return c
	}
	words, title := args[1:], false
	if len(args) == 1 && strings.Contains(args[0], " -") {
		title = true
		words = strings.Fields(args[0])[1:]
		if _, val, ok := strings.Cut(args[0], " --user-data-dir="); ok {
			c.UserDataDir, _, _ = strings.Cut(val, " --")
		}
	}
	for _, w := range words {
		if w == "--" && !title {
			break // the rest are URLs; in a title, a "--" may be part of a value
		}
		name, val, ok := chromiumSwitch(w)
		if !ok {
			continue
		}
		c.Switches = appendOnce(c.Switches, name)
		if name == "user-data-dir" && len(args) > 1 {
			c.UserDataDir = val
		}
	}
	return c
}

// cutSwitch splits a command-line word that begins with "--", "-" or "/"
// into its lower-case name and the value after "=", and says whether it
// began with "/" (a Windows switch, or a path).
func cutSwitch(w string) (name, val string, slash, ok bool) {
	s, ok := strings.CutPrefix(w, "--")
	if !ok {
		s, ok = strings.CutPrefix(w, "-")
	}
	if !ok {
		s, ok = strings.CutPrefix(w, "/")
		slash = ok
	}
	if !ok || s == "" {
		return "", "", false, false
	}
	name, val, _ = strings.Cut(s, "=")
	return strings.ToLower(name), val, slash, true
}

// chromiumSwitch splits a Chromium switch ("--name=value", "-name", and
// on Windows "/name=value") into its lower-case name and its value; a
// word that begins with "/" and has a separator in its name is a path.
func chromiumSwitch(w string) (name, val string, ok bool) {
	name, val, slash, ok := cutSwitch(w)
	if !ok || slash && strings.ContainsAny(name, `/\`) {
		return "", "", false
	}
	return name, val, true
}

// firefoxCommandLine reads a Firefox command line. Firefox takes its flags
// with one dash or two (and a slash on Windows), in any case, with a value
// after a space or an "=".
func firefoxCommandLine(args []string) CommandLine {
	var c CommandLine
	if len(args) == 0 {
		return c
	}
	args = args[1:]
	for i, a := range args {
		name, val, ok := firefoxFlag(a)
		if !ok {
			continue
		}
		c.Switches = appendOnce(c.Switches, name)
		if name != "profile" && name != "p" {
			continue
		}
		if val == "" && i+1 < len(args) {
			val = args[i+1]
		}
		if name == "profile" {
			c.Profile = val
		} else {
			c.ProfileName = val
		}
	}
	return c
}

// firefoxFlag splits a Firefox flag into its lower-case name and the value
// given with "=", if any; a name with a "/" in it is a path.
func firefoxFlag(a string) (name, val string, ok bool) {
	name, val, _, ok = cutSwitch(a)
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return name, val, true
}

// appendOnce appends s unless list holds it.
func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
