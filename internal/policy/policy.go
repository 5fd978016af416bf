// Package policy holds fillgate's policy: the settings a user may change in
// the policy file, their defaults, and Evaluate, the pure function that
// decides whether one fill request may go ahead (before any human is
// asked).
//
// The policy file is TOML (example.toml documents every key; the files in
// examples/ show whole set-ups): top-level settings, then one
// `[service."HOST[:PORT]"]` table per service. It is decoded strictly:
// unknown keys, wrong types and invalid values are errors that name the
// line and column. A missing file means the defaults. A file in the old
// line format of fillgate 0.1.0 is refused with the advice to rewrite it
// in TOML. The agent never chooses the policy: the host and the CLI read
// it from the user's config dir.
package policy

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// Ways a value reaches the page: internal/fill's names, plus ViaAuto for
// "whichever is available".
const (
	ViaAuto      = "auto"            // the extension when a host with one answers, else CDP
	ViaExtension = fill.ViaExtension // the extension over native messaging
	ViaCDP       = fill.ViaCDP       // the Chrome DevTools Protocol fallback
)

// Where the person answers (Policy.Prompt): internal/fill's names, the
// one definition.
const (
	PromptAuto    = fill.PromptAuto    // a native dialog while a program can drive the browser, else the loopback page
	PromptNative  = fill.PromptNative  // always a native dialog outside the browser
	PromptBrowser = fill.PromptBrowser // always the loopback page in the browser
)

// How a browser a program can drive is logged in to (Policy.Driven):
// internal/fill's names, the one definition.
const (
	DrivenCleanRoom = fill.DrivenCleanRoom // a login in a clean room; the driven browser gets the session
	DrivenInPage    = fill.DrivenInPage    // the value goes into the driven page, typed and confirmed by the person
)

// Prompt openers for the CDP path.
const (
	OpenerSystem = "system"  // the OS opener: xdg-open, open, start
	OpenerCDPTab = "cdp-tab" // a new tab of the browser behind the CDP endpoint
)

// Field kinds, as in internal/fill (fill.FieldPassword and the rest).
const (
	fieldPassword = "password"
	fieldOTP      = "one-time-code"
	fieldPasskey  = "passkey" // the agents' passkey: no field, the tab's top page
	fieldOther    = "other"
	fieldNone     = "none"
)

// Bounds of the settings.
const (
	MinPromptBudget = 5 * time.Second
	MaxPromptBudget = 15 * time.Minute
	MaxCooldown     = 24 * time.Hour
	MaxRateLimit    = 1000
	MinRateWindow   = time.Second
	MaxRateWindow   = 24 * time.Hour
)

// Policy is the effective policy. Build one with Default, Parse or Load;
// a Policy built by hand should pass Validate before use.
type Policy struct {
	// PromptBudget is how long a prompt waits for the human before the
	// request ends as no_response. An agent may ask for less, never more.
	PromptBudget time.Duration
	// NoResponseCooldown is how long an agent may not prompt again for a
	// service after a prompt for it went unanswered. Zero turns it off.
	NoResponseCooldown time.Duration
	// RateLimit is how many requests one agent may make per RateWindow.
	RateLimit int
	// RateWindow is the window RateLimit counts in.
	RateWindow time.Duration
	// CDPURL is the DevTools endpoint of the CDP fallback (http://, https://,
	// ws:// or wss://). Empty means not configured here; the environment
	// or the default endpoint apply.
	CDPURL string
	// CDPAllowHosts lists the hosts, besides loopback, a CDP endpoint may be
	// on (exact, lower-case host names or IP addresses).
	CDPAllowHosts []string
	// PromptOpener says how the CDP path shows the prompt: OpenerSystem or
	// OpenerCDPTab.
	PromptOpener string
	// Via is the path `fillgate fill` takes when the agent does not name
	// one: ViaAuto, ViaExtension or ViaCDP.
	Via string
	// Prompt is where the person answers: PromptAuto (a native dialog
	// whenever a program can drive the browser, else the loopback page),
	// PromptNative or PromptBrowser (the person accepts that a program
	// driving the browser could read or answer the page).
	Prompt string
	// Pinentry is the pinentry program of the native dialog (an absolute
	// path); "" means the first GUI pinentry found in the system's own
	// directories.
	Pinentry string
	// Driven is how a browser a program can drive is logged in to:
	// DrivenCleanRoom (the login happens in a clean room, and the driven
	// browser gets the session; the value never enters it) or
	// DrivenInPage (the value goes into its page, only when the person
	// types it and confirms that the program driving the browser can read
	// it). A rule's Driven overrides it for its service.
	Driven string
	// RoomBrowser is the Chromium-family browser the clean room runs (an
	// absolute path); "" means the driven browser's own when it is one,
	// else the first found in the usual places.
	RoomBrowser string
	// Rules are the per-service rules, in file order.
	Rules []Rule
}

// Rule is a `[service."HOST[:PORT]"]` table. It applies to a request when
// the focused frame's host is Service or (unless Subdomains is false) a
// name under it, on Service's port (see NormalizeService). When several
// rules apply, each of their limits holds and their FrameAncestors add
// up; each of the single settings (Approval, Remember, the sources) comes
// from the most specific rule that sets it.
type Rule struct {
	// Service is the canonical service the rule is for (see
	// NormalizeService).
	Service string
	// FrameAncestors lists origins (`https://portal.example.net`) that may
	// contain the focused frame, besides origins of the service itself.
	FrameAncestors []string
	// Agents, when not empty, lists the only agent executables (absolute
	// paths) that may ask for this service.
	Agents []string
	// Fields, when not empty, lists the only field kinds that may be asked
	// for: "password", "one-time-code".
	Fields []string
	// AllowVia, when not empty, lists the only paths a value may take to
	// this service: ViaExtension, ViaCDP.
	AllowVia []string
	// Then, when not empty, is what follows an insert for this service:
	// ThenSubmit or ThenNone (see internal/fill.Request.Then).
	Then string
	// Driven, when not empty, overrides Policy.Driven for this service:
	// DrivenCleanRoom or DrivenInPage.
	Driven string
	// Subdomains, when set to false, limits the rule and the service to
	// the exact host: pages on names under it are refused for this
	// service, and the rule does not apply to them. nil means true.
	Subdomains *bool
	// Approval is how a fill for this service is approved: ApprovalEach
	// (also for ""), ApprovalLease or ApprovalNone. ApprovalNone holds only
	// for a page whose host and port are exactly Service; anywhere else
	// the rule covers, it counts as ApprovalEach.
	Approval string
	// Lease is how long one approval lasts with ApprovalLease, from
	// MinLease to MaxLease; 0 means DefaultLease.
	Lease time.Duration
	// Remember, when set to false, keeps the prompt from offering to
	// remember a typed value in the OS keyring. nil means true.
	Remember *bool
	// Password and OTP say where the value for each field kind comes from;
	// nil means the prompt (the person types it, or approves one
	// remembered in the OS keyring).
	Password *Source
	OTP      *Source
}

// Approval modes (Rule.Approval, Settings.Approval).
const (
	ApprovalEach  = "each"  // the person approves every fill in the prompt
	ApprovalLease = "lease" // one approval covers the same agent, service and account for Lease
	ApprovalNone  = "none"  // a saved secret fills with no prompt (exact service only)
)

// Bounds of a lease.
const (
	MinLease     = time.Minute
	MaxLease     = time.Hour
	DefaultLease = 15 * time.Minute
)

// What follows an insert, as in internal/fill (fill.ThenSubmit, fill.ThenNone).
const (
	ThenSubmit = "submit"
	ThenNone   = "none"
)

// Default returns the built-in policy: a 90 s prompt budget, a 10 minute
// cool-down after an unanswered prompt, 6 requests per agent per minute,
// no CDP endpoint or remote CDP host configured, the system prompt opener,
// path auto, and no per-service rules.
func Default() *Policy {
	return &Policy{
		PromptBudget:       90 * time.Second,
		NoResponseCooldown: 10 * time.Minute,
		RateLimit:          6,
		RateWindow:         time.Minute,
		PromptOpener:       OpenerSystem,
		Via:                ViaAuto,
		Prompt:             PromptAuto,
		Driven:             DrivenCleanRoom,
	}
}

// Validate checks a Policy built in code the way Parse checks a file, and
// returns every problem found.
func (p *Policy) Validate() error {
	var errs []error
	add := func(key string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	add(keyPromptBudget, checkBudget(p.PromptBudget))
	add(keyCooldown, checkCooldown(p.NoResponseCooldown))
	add(keyRateLimit, checkRate(p.RateLimit, p.RateWindow))
	add(keyCDPAllowHosts, checkList(p.CDPAllowHosts, canonical(normalizeCDPHost)))
	add(keyCDPURL, checkCDPURL(p.CDPURL, p.CDPAllowHosts))
	add(keyPromptOpener, oneOf(p.PromptOpener, OpenerSystem, OpenerCDPTab))
	add(keyVia, oneOf(p.Via, ViaAuto, ViaExtension, ViaCDP))
	add(keyPrompt, oneOf(p.Prompt, PromptAuto, PromptNative, PromptBrowser))
	add(keyPinentry, checkPinentry(p.Pinentry))
	add(keyDriven, oneOf(p.Driven, DrivenCleanRoom, DrivenInPage))
	add(keyRoomBrowser, checkAbsolute(p.RoomBrowser))
	seen := map[string]bool{}
	for _, r := range p.Rules {
		table := serviceTable(r.Service)
		if seen[r.Service] {
			errs = append(errs, fmt.Errorf("%s: a second table for the same service", table))
		}
		seen[r.Service] = true
		if err := canonical(NormalizeService)(r.Service); err != nil {
			errs = append(errs, fmt.Errorf("%s service: %w", table, err))
		}
		for _, kp := range r.problems(true) {
			errs = append(errs, fmt.Errorf("%s %s: %w", table, kp.name(), kp.err))
		}
	}
	return errors.Join(errs...)
}

// serviceTable is the TOML table header of a service's rule.
func serviceTable(svc string) string {
	return "[service." + tomlString(svc) + "]"
}

// keyProblem is a problem with one key of a rule: path names the key
// within the rule (["fields"], ["password", "entry"]), index the list item
// (-1 for the key itself).
type keyProblem struct {
	path  []string
	index int
	err   error
}

// name renders the key for a message: fields, password.entry.
func (kp keyProblem) name() string {
	return strings.Join(kp.path, ".")
}

// problems returns the problems of one rule. With values, it also checks
// that each value is valid and in normal form (for a Rule built in code;
// Parse normalises values as it reads them, then checks only the rest).
func (r Rule) problems(values bool) []keyProblem {
	var kps []keyProblem
	add := func(err error, index int, path ...string) {
		if err != nil {
			kps = append(kps, keyProblem{path: path, index: index, err: err})
		}
	}
	if values {
		list := func(key string, items []string, norm func(string) (string, error)) {
			i, err := checkListAt(items, canonical(norm))
			add(err, i, key)
		}
		list(keyFrameAncestors, r.FrameAncestors, normalizeAncestor)
		list(keyAgents, r.Agents, normalizeAgent)
		list(keyFields, r.Fields, normalizeField)
		list(keyAllowVia, r.AllowVia, normalizeAllowVia)
		if r.Then != "" {
			add(oneOf(r.Then, ThenSubmit, ThenNone), -1, keyThen)
		}
		if r.Driven != "" {
			add(oneOf(r.Driven, DrivenCleanRoom, DrivenInPage), -1, keyDriven)
		}
		if r.Approval != "" {
			add(oneOf(r.Approval, ApprovalEach, ApprovalLease, ApprovalNone), -1, keyApproval)
		}
		if r.Lease != 0 {
			add(checkLease(r.Lease), -1, keyLease)
		}
	}
	if r.Lease != 0 && r.Approval != ApprovalLease {
		add(fmt.Errorf("a lease is only for approval = %s; set approval = %s too, or leave %s out", tomlString(ApprovalLease), tomlString(ApprovalLease), keyLease), -1, keyLease)
	}
	for _, fs := range []struct {
		key string
		src *Source
	}{{keyPassword, r.Password}, {keyOTP, r.OTP}} {
		if fs.src == nil {
			continue
		}
		for _, kp := range fs.src.problems(fs.key, values) {
			kps = append(kps, keyProblem{path: append([]string{fs.key}, kp.path...), index: -1, err: kp.err})
		}
		if r.Approval == ApprovalNone && fs.src.Store == StoreKeePassXC && fs.src.dbPassword() == DBPasswordPrompt {
			add(fmt.Errorf("approval = %s fills with no prompt, so nobody could type the KeePassXC database password; give the database a key_file and set db_password = %s", tomlString(ApprovalNone), tomlString(DBPasswordNone)), -1, keyApproval)
		}
	}
	return kps
}

// checkLease checks a lease duration.
func checkLease(d time.Duration) error {
	if d < MinLease || d > MaxLease || d%time.Second != 0 {
		return fmt.Errorf("%s is out of range; use whole seconds from %s to %s", formatDuration(d), formatDuration(MinLease), formatDuration(MaxLease))
	}
	return nil
}

// canonical turns a normaliser into a check that the value is already in
// normal form.
func canonical(norm func(string) (string, error)) func(string) error {
	return func(s string) error {
		n, err := norm(s)
		if err != nil {
			return err
		}
		if n != s {
			return fmt.Errorf("%s is not in normal form; write %s", quote(s), quote(n))
		}
		return nil
	}
}

// checkList checks every item of a list and refuses duplicates.
func checkList(items []string, check func(string) error) error {
	_, err := checkListAt(items, check)
	return err
}

// checkListAt is checkList that also says which item is wrong.
func checkListAt(items []string, check func(string) error) (int, error) {
	for i, it := range items {
		if err := check(it); err != nil {
			return i, err
		}
		if slices.Contains(items[:i], it) {
			return i, fmt.Errorf("%s is listed twice", quote(it))
		}
	}
	return -1, nil
}

// oneOf checks that s is one of the valid words.
func oneOf(s string, valid ...string) error {
	if slices.Contains(valid, s) {
		return nil
	}
	return fmt.Errorf("%s is not valid; use %s", quote(s), strings.Join(valid, " or "))
}

// checkPinentry accepts "" (search the system's own directories) or an
// absolute path: a relative one would be looked up where the agent may
// have put a program of its own.
func checkPinentry(path string) error { return checkAbsolute(path) }

// checkAbsolute accepts "" or an absolute path.
func checkAbsolute(path string) error {
	if path == "" || filepath.IsAbs(path) {
		return nil
	}
	return fmt.Errorf("%s is not an absolute path", quote(path))
}

func checkBudget(d time.Duration) error {
	if d < MinPromptBudget || d > MaxPromptBudget || d%time.Second != 0 {
		return fmt.Errorf("%s is out of range; use whole seconds from %s to %s", formatDuration(d), formatDuration(MinPromptBudget), formatDuration(MaxPromptBudget))
	}
	return nil
}

func checkCooldown(d time.Duration) error {
	if d < 0 || d > MaxCooldown || d%time.Second != 0 {
		return fmt.Errorf("%s is out of range; use whole seconds from 0s (off) to %s", formatDuration(d), formatDuration(MaxCooldown))
	}
	return nil
}

func checkRate(n int, w time.Duration) error {
	if n < 1 || n > MaxRateLimit {
		return fmt.Errorf("%d requests is out of range; use 1 to %d", n, MaxRateLimit)
	}
	if w < MinRateWindow || w > MaxRateWindow || w%time.Second != 0 {
		return fmt.Errorf("a window of %s is out of range; use whole seconds from %s to %s", formatDuration(w), formatDuration(MinRateWindow), formatDuration(MaxRateWindow))
	}
	return nil
}

// normalizeCDPHost checks a host a CDP endpoint may be on: a DNS name
// (single labels such as a LAN machine's name included) or an IP address,
// no port.
func normalizeCDPHost(s string) (string, error) {
	h, err := normalizeHost(s)
	if err != nil {
		return "", fmt.Errorf("host %s: %w", quote(s), err)
	}
	return h.String(), nil
}

// checkCDPURL checks the CDP endpoint: empty, or an http, https, ws or wss
// URL without user info, query or fragment, on a loopback host or one of
// allowHosts.
func checkCDPURL(s string, allowHosts []string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s is not a URL; write it like http://127.0.0.1:9222", quote(s))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "ws" && u.Scheme != "wss":
		return fmt.Errorf("%s: use an http://, https://, ws:// or wss:// URL, like http://127.0.0.1:9222", quote(s))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || u.ForceQuery:
		return fmt.Errorf("%s: leave out user info, query and fragment", quote(s))
	case u.Host == "":
		return fmt.Errorf("%s has no host", quote(s))
	}
	if p := u.Port(); p != "" {
		if err := checkPort("", p); err != nil {
			return fmt.Errorf("%s: bad port", quote(s))
		}
	}
	h, err := normalizeHost(u.Hostname())
	if err != nil {
		return fmt.Errorf("%s: host: %w", quote(s), err)
	}
	if !h.loopback() && !slices.Contains(allowHosts, h.String()) {
		return fmt.Errorf("%s is not on a loopback host; list %s in %s to allow it", quote(s), h, keyCDPAllowHosts)
	}
	return nil
}

// normalizeAncestor checks an origin a rule allows to contain the focused
// frame: exactly as a browser writes it, https (http only on loopback), on
// any port (the origin names it exactly).
func normalizeAncestor(s string) (string, error) {
	o, err := parseOrigin(s)
	if err != nil {
		return "", fmt.Errorf("%s: %w; write an origin like https://portal.example.net", quote(s), err)
	}
	if err := o.transport(); err != nil {
		return "", fmt.Errorf("%s %w", quote(s), err)
	}
	return o.String(), nil
}

// normalizeAgent checks an agent executable: an absolute, clean path.
func normalizeAgent(s string) (string, error) {
	if !filepath.IsAbs(s) {
		return "", fmt.Errorf("%s is not an absolute path to an executable", quote(s))
	}
	return filepath.Clean(s), nil
}

// normalizeField accepts a field kind, with otp for one-time-code.
func normalizeField(s string) (string, error) {
	switch s {
	case fieldPassword:
		return fieldPassword, nil
	case fieldOTP, "otp":
		return fieldOTP, nil
	case fieldPasskey:
		return fieldPasskey, nil
	}
	return "", fmt.Errorf("%s is not a field kind; use password, one-time-code or passkey", quote(s))
}

// normalizeAllowVia accepts a path a rule may allow.
func normalizeAllowVia(s string) (string, error) {
	if err := oneOf(s, ViaExtension, ViaCDP); err != nil {
		return "", err
	}
	return s, nil
}
