// Package engine builds the fill flow (fill.Engine) for a host, under the
// person's policy, from the parts that host has. Both hosts build it here
// (nmhost for a browser with the extension, cdphost for the CDP fallback),
// so the two wirings cannot drift apart: what a host lacks is a part it
// leaves nil, said where it builds its Parts.
package engine

import (
	"log/slog"
	"os"

	"github.com/fillgate/fillgate/internal/cleanroom"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/keychain"
	"github.com/fillgate/fillgate/internal/nativeprompt"
	"github.com/fillgate/fillgate/internal/pageprompt"
	"github.com/fillgate/fillgate/internal/planner"
	"github.com/fillgate/fillgate/internal/policy"
)

// Store keeps what outlives one request: the cool-downs, the rate, the
// one-prompt-per-service claim and the leases.
type Store interface {
	fill.State
	fill.Leases
}

// Parts are what a host brings to the fill flow; the rest (the prompt
// mode, the limits, where values come from, the clean room's browser)
// comes from the policy.
type Parts struct {
	// Browser is the browser the host reaches: the extension, or CDP.
	Browser fill.Browser
	// Store is in memory for a browser's host (it lives as long as the
	// browser), on disk for the CDP path (one process per request).
	Store Store
	// Notifier shows the notice of a fill with no prompt; nil: every
	// fill is asked in the prompt.
	Notifier fill.Notifier
	// Passkeys keeps and uses the agents' passkeys; nil: passkey requests
	// are refused (the CDP path, whose WebAuthn domain would hand the
	// private key to anyone on the debugging port).
	Passkeys fill.Passkeys
	// Room is the clean room's configuration but for its browser and
	// log, which New sets from the policy and Log.
	Room cleanroom.Config
	// Bars keeps the services barred from the clean room.
	Bars fill.Bars
	// Audit records every outcome.
	Audit fill.Auditor
	// OnOutcome hears every result; nil: only the log and the audit do
	// (the CDP path has no popup to show a history in).
	OnOutcome func(fill.Result)
	// Env is the environment the native dialog is shown in (its display).
	Env dirs.Env
	// Environ is the environment the password stores' programs take their
	// variables from; nil means os.Environ().
	Environ []string
	// Keyring is the system keyring where saved values live.
	Keyring *keychain.Keyring
	Log     *slog.Logger
}

// New is the fill flow under pol with the parts p.
func New(pol *policy.Policy, p Parts) *fill.Engine {
	environ := p.Environ
	if environ == nil {
		environ = os.Environ()
	}
	room := p.Room
	room.Browser, room.Log = pol.RoomBrowser, p.Log
	return &fill.Engine{
		Browser:  p.Browser,
		Prompter: pageprompt.Config{Logger: p.Log}.Start,
		// The native dialog, where the person answers unless the policy
		// says prompt = "browser" (fill.Engine.PromptMode).
		Native:     nativeprompt.New(nativeprompt.Config{Program: pol.Pinentry, Env: p.Env, Logger: p.Log}),
		PromptMode: pol.Prompt,
		Policy:     pol,
		State:      p.Store,
		Limits:     pol.Limits(),
		Planner:    &planner.Planner{Policy: pol, Keyring: p.Keyring, Environ: environ},
		Leases:     p.Store,
		Notifier:   p.Notifier,
		Passkeys:   p.Passkeys,
		// A program may drive the browser: the login then happens in a
		// clean room, unless the person's policy says otherwise.
		CleanRoom: cleanroom.New(room),
		Bars:      p.Bars,
		Audit:     p.Audit,
		Log:       p.Log,
		OnOutcome: p.OnOutcome,
	}
}
