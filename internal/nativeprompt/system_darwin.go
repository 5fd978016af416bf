package nativeprompt

import (
	"errors"
	"os"
)

// osascriptPath is macOS's own osascript (on the sealed system volume).
const osascriptPath = "/usr/bin/osascript"

// macDirs are where a root-owned pinentry-mac is looked for (MacGPG2's
// installer owns its directory by root; Homebrew's directories belong to
// the person, so a pinentry-mac there is used only when the policy names
// it). Never $PATH.
func macDirs() []string {
	return []string{"/usr/local/MacGPG2/bin", "/opt/homebrew/bin", "/usr/local/bin"}
}

// platform is, on macOS: the policy's pinentry; else a root-owned
// pinentry-mac; else an osascript dialog with a hidden answer.
//
// Unproven: written from Apple's documentation, compiled but never run
// by fillgate's tests.
func platform(cfg Config) (backend, error) {
	env := dialogEnv(cfg.Env)
	if cfg.Program != "" {
		p, err := namedProgram(cfg.Program)
		if err != nil {
			return nil, err
		}
		if trustErr := trusted(cfg.Program, p); trustErr != nil {
			cfg.Logger.Warn("the policy's pinentry is not root's alone: a program of yours could replace it", "pinentry", p, "why", trustErr.Error())
		}
		return newPinentry(p, env), nil
	}
	usable := func(base string) bool { return base == "pinentry-mac" }
	if p := findTrusted(macDirs(), []string{"pinentry-mac"}, usable, trusted); p != "" {
		return newPinentry(p, env), nil
	}
	if fi, err := os.Stat(osascriptPath); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("no dialog program: " + osascriptPath + " is missing, and no root-owned " +
			"pinentry-mac was found; install pinentry-mac (MacGPG2 or Homebrew), and " + policyFix)
	}
	return &osaBackend{path: osascriptPath, env: env}, nil
}
