package main

import (
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/policy"
)

// What `fillgate status` and `fillgate doctor` both say of the running
// hosts: the prompt mode that applies to each, and the connections they
// refused.

// promptMode is the prompt mode that applies to h's browser: the one its
// host reports, else local (the local policy's, "" when unknown), else
// auto, the default.
func promptMode(h agentsock.HostStatus, local string) string {
	switch {
	case h.Prompt != "":
		return h.Prompt
	case local != "":
		return local
	}
	return policy.PromptAuto
}

// localPrompt is the local policy's prompt mode, "" when the policy cannot
// be read (the policy check of `fillgate doctor` says why).
func localPrompt(env dirs.Env) string {
	path, err := dirs.PolicyFile(env)
	if err != nil {
		return ""
	}
	pol, err := policy.Load(path)
	if err != nil {
		return ""
	}
	return pol.Prompt
}

// refusedConnections lists, from the audit log in stateDir, the
// native-messaging connections hosts refused in the last day because
// another was live for the same browser and profile (a page of the
// extension opened in a tab, or a program driving the browser, playing
// the extension).
func refusedConnections(stateDir string, now time.Time) []string {
	es, err := audit.Open(stateDir).Recent(500)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range es {
		if e.Event == fill.EventSecondConnection && now.Sub(e.Time) < 24*time.Hour {
			out = append(out, e.Time.Local().Format("15:04:05")+": "+printable(e.Detail))
		}
	}
	return out
}
