package fill

import (
	"context"
	"errors"
	"time"
)

// The ports: every interface the Engine talks through, each with the
// values only it exchanges. The browser (the extension over native
// messaging, or CDP), the person's policy, the Engine's memory between
// requests, where a saved value comes from (Planner, Source), leases, the
// notice of a fill with no prompt, the prompt (the loopback page, or a
// native dialog) and the audit log.

// Browser is the port to the user's browser: the extension over native
// messaging, or CDP. Errors are transport failures; a check that fails in
// the page is reported in the Inspection or the Verdict, not as an error.
type Browser interface {
	// Via names the path: ViaExtension or ViaCDP.
	Via() string
	// Inspect finds the focused field (in req.Tab / req.Frame when set) and
	// remembers it for Insert.
	Inspect(ctx context.Context, req Request) (Inspection, error)
	// OpenPrompt shows the loopback prompt at url to the human.
	OpenPrompt(ctx context.Context, url string) (PromptWindow, error)
	// Drivable reports whether anything but the person can drive the
	// browser the loopback prompt would open in: remote debugging, an
	// attached debugger, automation. The CDP path always can. An error
	// means it cannot tell, which the Engine takes as "it can".
	Drivable(ctx context.Context) (Drive, error)
	// Insert re-checks origin, element, kind and the form's destinations
	// in the page and, only if all still hold, inserts value; then, with
	// opt.Then submit, submits the form and makes sure the value is no
	// longer in the page when it returns. The caller zeroes value
	// afterwards; implementations must not keep it.
	Insert(ctx context.Context, in Inspection, value []byte, opt InsertOptions) (Verdict, error)
}

// PromptWindow is a prompt page the browser opened for the human.
type PromptWindow interface {
	// Closed is closed when the human closes the window without answering.
	// It may be nil when the opener cannot tell.
	Closed() <-chan struct{}
	// Close closes the window; it is safe to call more than once.
	Close(ctx context.Context) error
}

// InsertOptions says what follows the insert.
type InsertOptions struct {
	// Then is ThenSubmit or ThenNone ("" means ThenSubmit).
	Then string
}

// Policy decides whether a request may go ahead. The policy package
// implements it; the Engine never decides on its own.
type Policy interface {
	// Decide evaluates the inspected page against req: origin and frame
	// chain, field kind and state, where the field's form sends the
	// value, agent. detail explains a refusal.
	Decide(req Checked, agent Agent, in Inspection, via string) (allow bool, detail string)
	// ThenFor says what follows the insert on the inspected page when the
	// agent asked for req's then: the effective value, or allow false and
	// a detail when the policy forbids it.
	ThenFor(req Checked, in Inspection) (then string, allow bool, detail string)
	// DrivenMode says how a browser a program can drive is logged in to for
	// req on the inspected page: DrivenCleanRoom or DrivenInPage.
	DrivenMode(req Checked, in Inspection) string
}

// State is the Engine's memory between requests: which services have an
// open prompt, which agent/service pairs are cooling down after a prompt
// nobody answered, and the per-agent request rate. It never holds a value.
// The host keeps it in memory; separate `fillgate fill` processes on the CDP
// path keep it in the state dir.
type State interface {
	// Claim marks a prompt for service as open, or returns ErrBusy.
	Claim(service string) (release func(), err error)
	// CoolingDown reports whether agent must not be prompted for service
	// before the returned time.
	CoolingDown(agentKey, service string, now time.Time) (until time.Time, ok bool)
	// NoteNoResponse starts a cool-down for agent and service.
	NoteNoResponse(agentKey, service string, until time.Time) error
	// Allow counts one request by agent and reports whether it is within
	// limit requests per window.
	Allow(agentKey string, now time.Time, limit int, window time.Duration) bool
}

// Bars keeps, for every agent and both paths, the services whose login in
// a clean room left the value where the driven browser would have got it
// (ErrValueKept): fillgate does not log in to such a service in a clean
// room again until the bar ends. Each such refusal can tell a program
// whether guesses it planted in what the page copies held the value; a
// bar holds it to one answer per BarFor.
type Bars interface {
	// Barred reports whether service is barred at now, and until when.
	Barred(service string, now time.Time) (until time.Time, ok bool)
	// Bar bars service until until.
	Bar(service string, until time.Time) error
}

// ErrValueKept is what a Room's HandOver error is (errors.Is) when the
// login left the value in its cookies, web storage or address.
var ErrValueKept = errors.New("the site keeps the value in what its login left")

// ErrBusy is returned by State.Claim when a prompt for the service is open.
var ErrBusy = errors.New("a prompt for this service is already open")

// Planner is the port to the person's policy, OS keyring and password
// stores: the host implements it; the Engine never switches on stores.
type Planner interface {
	// Plan says how the fill q gets its value.
	Plan(ctx context.Context, q PlanQuery) (Plan, error)
	// Remember stores a value the person typed and asked to remember, for
	// service, field and account, in the OS keyring, and returns its new
	// stamp (Plan.Stamps). Its errors hold no account.
	Remember(ctx context.Context, service, field, account string, value []byte) (stamp string, err error)
}

// PlanQuery is what a Planner plans for: a request the policy allowed on
// the inspected page.
type PlanQuery struct {
	Service string // canonical
	Field   string
	Agent   Agent
	In      Inspection
	Via     string
}

// Warmer is a Planner that can start reading what is saved for a service
// (names only, never a value) while the page is inspected, so that Plan,
// after the inspect, does not wait for it. Warm returns at once.
type Warmer interface {
	Warm(ctx context.Context, service, field string)
}

// Source is where a saved value comes from: the OS keyring or the
// person's own password store. The host builds it from the person's
// policy; the Engine only asks it, after the fill was approved.
type Source interface {
	// Describe names the source for the prompt and the notice ("from
	// pass: work/github"). It holds no secret. The agent never sees it.
	Describe() string
	// Fetch returns the value for req now (a one-time code is computed
	// now). The caller zeroes it. Its errors are *SourceError.
	Fetch(ctx context.Context, req FetchRequest) ([]byte, error)
}

// FetchRequest is what a Source is told about one fill. It never holds a
// value.
type FetchRequest struct {
	Service string // canonical
	Field   string // FieldPassword or FieldOTP
	// Account is the account of the saved value ("" for the service's
	// only one).
	Account string
	// Ask hands over what the person typed in the prompt for Plan.Ask
	// (the KeePassXC database password), once; the source zeroes it. nil
	// when nobody was asked (a fill with no prompt).
	Ask func(ctx context.Context, what string) ([]byte, error)
}

// SourceError is a Source's failure in words the agent may read: what
// went wrong and the step that mends it. It never holds a value, an entry
// name or the account.
type SourceError struct {
	Detail string // what went wrong, a sentence fragment
	Fix    string // the step that mends it, or ""
}

// Leases keeps leases between fills. The extension path keeps them in the
// host's memory (MemState); separate `fillgate fill` processes on the CDP
// path in the state dir.
type Leases interface {
	// Leased returns the live lease that covers the fill, if any.
	Leased(agentKey, service, field, account, origin string, now time.Time) (Lease, bool)
	// Grant records l, replacing a lease for the same agent, service,
	// field, account and origin.
	Grant(l Lease) error
	// End ends the lease id, if it is there: one that no longer covers
	// anything (its saved value was forgotten or replaced).
	End(id string) error
}

// Notifier shows the person a notice they can see: a browser
// notification from the extension, or the desktop's own. A fill with no
// prompt happens only after Notify succeeded; its error makes the Engine
// ask in the prompt instead.
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
}

// Notice is what the person is shown when a fill runs with no prompt.
type Notice struct {
	Title   string
	Message string
}

// Prompter starts a prompt.
type Prompter func(ctx context.Context, info PromptInfo) (Prompt, error)

// Prompt is one open loopback prompt.
type Prompt interface {
	// URL is the one-shot page; it goes to the browser, never to the agent.
	URL() string
	// Wait blocks until the human answers or ctx ends (then it returns
	// ctx.Err()).
	Wait(ctx context.Context) (Answer, error)
	// Loaded reports whether a browser ever loaded the prompt page. A
	// prompt nobody loaded was never seen: only that counts against the
	// agent (the no-response cool-down).
	Loaded() bool
	// Close ends the prompt: later requests to the URL get nothing
	// usable, and its page disables itself.
	Close() error
}

// PromptInfo is what the prompt page tells the human.
type PromptInfo struct {
	Agent   Agent
	Service string
	Origin  string // the exact origin the value will be typed into
	Field   string // FieldPassword or FieldOTP
	Via     string // ViaExtension or ViaCDP
	Budget  time.Duration
	// Account is the account the page shows ("as alice@example.com"), ""
	// for none. The page chose it: display only.
	Account string
	// From is the kind of store the saved value the person may approve
	// comes from ("from pass", "from the OS keyring"), never an entry,
	// item, database or path: the loopback page shows it. "" when there
	// is none: the person can only type a value.
	From string
	// Entry names the saved value's entry in its store ("from pass:
	// work/github"), for the native dialog only, which no program driving
	// the browser can read; "" when there is none.
	Entry string
	// Accounts, with From, are the accounts the person picks among (never
	// values): several are saved and the page shows none.
	Accounts []string
	// Ask, with From, is what the source needs typed before it can be
	// read (the KeePassXC database password); "" for nothing.
	Ask string
	// Remember offers to remember a typed value in the OS keyring.
	Remember bool
	// Watched reports that a program is attached to the login page's tab
	// over the DevTools Protocol (Inspection.Watched): both prompts warn
	// that it can read what goes into the field.
	Watched bool
	// Enrol, with Field FieldPasskey: the person approves adding a passkey
	// for the agents on the site (create()), not a sign-in with it.
	Enrol bool
	// CleanRoom reports that a program drives the agent's browser and the
	// login happens in fillgate's clean room: the value goes into the
	// clean room's page, and the agent's browser gets only the session.
	CleanRoom bool
	// InPage reports that a program drives the agent's browser and the
	// person's policy lets fillgate type into it (driven = "in-page"):
	// both prompts say that the program can read what goes into the
	// page.
	InPage bool
	// Stays reports that a typed value will stay in the field,
	// unsubmitted (then none), where the page and any tool reading it can
	// see it; both prompts say so before the person answers. An approved
	// saved value is always submitted.
	Stays bool
}

// Answer is the human's reply: a typed Value, an approval of the saved
// value, or a cancel. The receiver owns Value and Asked and must zero them
// (Zero).
type Answer struct {
	// Value is what the person typed; nil when they approved or
	// cancelled.
	Value []byte
	// Approved: the person approved the saved value (PromptInfo.From).
	Approved bool
	// Account is the account the person picked among PromptInfo.Accounts.
	Account string
	// Asked is what the person typed for PromptInfo.Ask.
	Asked []byte
	// Remember: the person asked to remember the typed Value.
	Remember  bool
	Cancelled bool
}

// Zero clears the answer's secrets.
func (a *Answer) Zero() {
	clear(a.Value)
	clear(a.Asked)
}

// Prompt modes: where the person answers (the policy's prompt key; the
// agent never chooses it).
const (
	// PromptAuto asks in a native dialog whenever anything but the person
	// can drive the browser (Browser.Drivable), else in the loopback page.
	PromptAuto = "auto"
	// PromptNative always asks in a native dialog.
	PromptNative = "native"
	// PromptBrowser always asks in the loopback page: the person accepts
	// that a program driving the browser could read or answer it.
	PromptBrowser = "browser"
)

// Native asks the person in a dialog the desktop draws, outside every
// browser (pinentry, the macOS or the Windows credential dialog), where no
// program driving a browser can read, type or click. It offers what the
// loopback page offers: typing a value, approving the saved one, picking
// its account, what its store needs, remembering a typed value.
type Native interface {
	// Available reports whether a dialog can be shown here; its error
	// says why not and how to mend it.
	Available() error
	// Ask shows the dialog for info and blocks until the person answers
	// (a cancel, or a closed dialog, is Answer.Cancelled), info.Budget
	// runs out or ctx ends (then it returns ctx.Err() or an error that
	// wraps context.DeadlineExceeded). The dialog dies with ctx. The
	// caller owns the answer's secrets and zeroes them.
	Ask(ctx context.Context, info PromptInfo) (Answer, error)
}

// ErrNoDialog is wrapped by Native.Ask's error when no dialog could be
// shown after all (the display went away, the program is missing).
var ErrNoDialog = errors.New("no native dialog could be shown")

// Auditor records outcomes.
type Auditor interface {
	Record(e AuditEntry) error
}

// AuditEntry is one line of the audit log. It never holds a value.
type AuditEntry struct {
	Time    time.Time `json:"time"`
	Agent   Agent     `json:"agent"`
	Service string    `json:"service"`
	Origin  string    `json:"origin,omitempty"`
	Field   string    `json:"field,omitempty"`
	Via     string    `json:"via,omitempty"`
	Status  Status    `json:"status"`
	Detail  string    `json:"detail,omitempty"`
	// How says how the value was approved: HowTyped, HowApproved,
	// HowLease or HowNone; "" when nothing was inserted.
	How string `json:"how,omitempty"`
	// Event names an entry that is not a request's outcome:
	// EventSecondConnection. "" for a request.
	Event string `json:"event,omitempty"`
}

// EventSecondConnection is the audit entry of a native-messaging
// connection the host refused because another from the same browser
// process and profile was live: a page of the extension opened in a tab,
// or a program driving the browser, playing the extension.
const EventSecondConnection = "second_connection"

// How a fill's value was approved (AuditEntry.How).
const (
	HowTyped    = "typed"    // the person typed it in the prompt
	HowApproved = "approved" // the person approved a saved value in the prompt
	HowLease    = "lease"    // a lease filled a saved value, with a notice
	HowNone     = "none"     // approval = none filled a saved value, with a notice
)

// CleanRoom logs in, for a browser a program can drive, in a browser only
// fillgate holds (internal/cleanroom): the value never enters the driven
// browser, which is handed the session the login leaves.
type CleanRoom interface {
	// Open starts a room for the driven tab in names: its page opened
	// again in a new headless browser that has the driven context's
	// cookies, the field of req's kind found and focused there, and
	// inspected as Browser.Inspect does. An error that carries a status
	// (refused) says why the login cannot happen there and what to do.
	Open(ctx context.Context, req Request, in Inspection) (Room, Inspection, error)
}

// RoomWarmer is a CleanRoom that can start its browser before it knows
// it will need one (while the page is inspected), so that Open does not
// wait for the start. Discard ends a browser Open did not take; the Engine
// calls it when the request ends.
type RoomWarmer interface {
	Warm(ctx context.Context)
	Discard()
}

// Room is one clean room. Close ends it, on every path: its browser dies
// and its profile is removed.
type Room interface {
	// Insert is Browser.Insert, into the room's page.
	Insert(ctx context.Context, in Inspection, value []byte, opt InsertOptions) (Verdict, error)
	// HandOver follows the login to its end and hands its session to the
	// driven tab, which it navigates to where the login ended. holds
	// reports whether data holds the value the login used (in any form a
	// site would keep it in): a session that does is never handed over.
	// An error that carries a status says why nothing was handed over.
	HandOver(ctx context.Context, holds func(data string) bool) (Handover, error)
	Close()
}

// Handover is what a clean room's login left in the driven tab.
type Handover struct {
	// TabOrigin is the origin the driven tab shows now.
	TabOrigin string
	// Cookies is how many cookies were set or changed in the driven
	// browser; Storage, whether the final origin's web storage was
	// written there too.
	Cookies int
	Storage bool
	// LoginShown: the driven tab shows, on the origin the login was on, a
	// field of the kind the login filled: the session did not hold there.
	LoginShown bool
	// Next names the field kind the room's page asks for next (a
	// one-time code after a password), "" for none.
	Next string
}

// How a browser a program can drive is logged in to (the policy's
// driven key; the agent never chooses it).
const (
	// DrivenCleanRoom: the login happens in a clean room and the driven
	// browser gets the session; the value never enters it.
	DrivenCleanRoom = "clean-room"
	// DrivenInPage: the value goes into the driven browser's page, only
	// when the person types it and confirms in the prompt that the
	// program driving the browser can read it.
	DrivenInPage = "in-page"
)
