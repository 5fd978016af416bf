// Package doctor is `fillgate doctor`: it checks, one line each, what
// fillgate needs to work and says for each problem how to mend it. What
// install wrote (the binary, the unpacked extension, each browser's host
// manifests, the agent socket's directory) install checks itself
// (install.Check); the running hosts and their extensions, where prompts
// open, the keyring, the policy file, a configured CDP endpoint and the
// refused connections come through probes the CLI wires in, so that this
// package needs none of the host's internals.
package doctor

import (
	"context"
	"errors"
	"runtime"

	"github.com/fillgate/fillgate/internal/browsertable"
	"github.com/fillgate/fillgate/internal/manifest"
)

// Probes are what Run asks the rest of fillgate. A nil probe is not
// checked.
type Probes struct {
	// Version is the running binary's version.
	Version string
	// Setup checks what install wrote; an error (the options do not
	// resolve) is the report's only check.
	Setup func(ctx context.Context) (Setup, error)
	// Hosts asks every running host for its status over the agent socket
	// (agent.sock, then hosts/*.sock). No host running is (nil, nil); an
	// error means a host could not be asked.
	Hosts func(ctx context.Context) ([]HostStatus, error)
	// Keyring reports whether the OS keyring can be reached.
	Keyring func(ctx context.Context) error
	// Policy validates the policy file; it returns the file's path, or ""
	// when there is none and the defaults apply.
	Policy func(ctx context.Context) (path string, err error)
	// CDP returns the configured CDP endpoint ("" when none) and whether
	// it could be reached.
	CDP func(ctx context.Context) (endpoint string, err error)
	// Refused lists the native-messaging connections the hosts refused in
	// the last day because another was live for the same browser and
	// profile (each the audit log's words, with its time).
	Refused func() []string
	// Origins are the origins of fillgate's extension, which tell a
	// store's copy from the unpacked one. Default (empty): manifest.Listed().
	Origins manifest.Origins
}

// Setup is what install's own checks found, and what the other checks
// need to know of it.
type Setup struct {
	// Checks are install's checks, in order.
	Checks []Check
	// OS is the table's column the checks were for ("linux", "darwin",
	// "windows").
	OS string
	// Carried is the version of the extension this binary carries, ""
	// when it carries none.
	Carried string
	// Start says how to start a browser whose host manifest is right
	// with the extension loaded ("start Chromium with the extension
	// loaded (…)"); "" when no browser's is.
	Start string
	// Upgrade is how this binary is brought to a newer release, as it was
	// installed.
	Upgrade string
	// Short shortens a path for people (the home directory as "~").
	Short func(path string) string
}

// HostStatus is what one running host says about itself.
type HostStatus struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// Browser is the browser that started the host ("chromium", "firefox",
	// ...), Profile its profile when known, Caller the origin or add-on id
	// it was started for.
	Browser string `json:"browser"`
	Profile string `json:"profile,omitempty"`
	Caller  string `json:"caller,omitempty"`
	Socket  string `json:"socket,omitempty"`
	// Connected says whether the extension is connected now; its version
	// and whether the human paused it in the popup.
	Connected        bool   `json:"connected"`
	ExtensionVersion string `json:"extension_version,omitempty"`
	Paused           bool   `json:"paused"`
	// Drive says whether a program can drive the browser, and why; nil
	// when the host does not say.
	Drive *HostDrive `json:"drive,omitempty"`
	// Prompt is the policy's prompt mode for it: auto (also for ""),
	// native or browser.
	Prompt string `json:"prompt,omitempty"`
}

// HostDrive is what a host says about programs that can drive its
// browser: remote debugging, an attached debugger, automation.
type HostDrive struct {
	Driven  bool     `json:"driven"`
	Reasons []string `json:"reasons,omitempty"`
}

// Run runs every check p has a probe for: install's first (the binary,
// the unpacked extension, each browser's host manifests, Flatpak and Snap
// installs, the agent socket's directory), then the running hosts and
// their extensions and where their prompts open, the keyring, the policy
// file, a configured CDP endpoint and the refused connections.
func Run(ctx context.Context, p Probes) *Report {
	d := &Report{}
	su := Setup{OS: browsertable.Column(runtime.GOOS)}
	if p.Setup != nil {
		got, err := p.Setup(ctx)
		if err != nil {
			d.add(Check{Name: "setup", Level: Fail, Detail: err.Error()})
			return d
		}
		su = got
		d.Checks = append(d.Checks, su.Checks...)
	}
	if su.Short == nil {
		su.Short = func(s string) string { return s }
	}

	cdpOK := false
	var cdpCheck *Check
	if p.CDP != nil {
		c := checkCDP(ctx, p.CDP)
		cdpOK = c.Level == OK && c.Detail != noCDP
		cdpCheck = &c
	}
	if p.Hosts != nil {
		checkHosts(ctx, d, p, su, cdpOK)
	}
	if p.Keyring != nil {
		c := Check{Name: "keyring", Level: OK, Detail: "reachable"}
		if err := p.Keyring(ctx); err != nil {
			c = Check{Name: "keyring", Level: Warn, Detail: "not usable, so secrets cannot be remembered or filled from it (typing them each time still works): " + err.Error(), Fix: keyringFix[su.OS]}
			// The keyring's own reason (locked, not running, …) knows
			// the exact step.
			var f interface{ FixHint() string }
			if errors.As(err, &f) && f.FixHint() != "" {
				c.Fix = f.FixHint()
			}
		}
		d.add(c)
	}
	if p.Policy != nil {
		path, err := p.Policy(ctx)
		switch {
		case err != nil:
			c := Check{Name: "policy", Level: Fail, Detail: err.Error(), Fix: "fillgate policy check"}
			if path != "" {
				c.Fix = "fillgate policy check " + path + " (and edit " + path + " where it says)"
			}
			d.add(c)
		case path == "":
			d.add(Check{Name: "policy", Level: OK, Detail: "no policy file; the defaults apply"})
		default:
			d.add(Check{Name: "policy", Level: OK, Detail: "valid: " + su.Short(path)})
		}
	}
	if cdpCheck != nil {
		d.add(*cdpCheck)
	}
	if p.Refused != nil {
		d.add(checkRefused(p.Refused()))
	}
	return d
}

// origins are p.Origins, or fillgate's listed ones.
func (p Probes) origins() manifest.Origins {
	if len(p.Origins) == 0 {
		return manifest.Listed()
	}
	return p.Origins
}
