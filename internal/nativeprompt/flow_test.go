package nativeprompt

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/pinentry/pinentrytest"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// The OK buttons that tell the dialogs apart.
const (
	okTyped    = "Fill"
	okSaved    = "Fill saved password"
	okAccount  = "Use this account"
	okAsk      = "Unlock"
	okRemember = "Remember"
)

// TestFlows: every path through the dialogs, and the answer each gives.
func TestFlows(t *testing.T) {
	secret := leakscan.NewSecret(t)
	dbPass := leakscan.NewSecret(t)
	accounts := []string{"alice", "bob", "carol"}
	saved := func(pi *fill.PromptInfo) { pi.From, pi.Entry, pi.Account = "from pass", "from pass: work/github", "" }
	for _, tc := range []struct {
		name  string
		edit  func(*fill.PromptInfo)
		steps []step
		want  fill.Answer
	}{
		{"typed", nil,
			[]step{{"GETPIN", okTyped, typeReply(secret)}},
			fill.Answer{Value: secret}},
		{"typed, empty then typed", nil,
			[]step{{"GETPIN", okTyped, typeReply(nil)}, {"GETPIN", okTyped, typeReply(secret)}},
			fill.Answer{Value: secret}},
		{"typed, cancelled", nil,
			[]step{{"GETPIN", okTyped, cancelReply}},
			fill.Answer{Cancelled: true}},
		{"typed, empty then cancelled", nil,
			[]step{{"GETPIN", okTyped, typeReply(nil)}, {"GETPIN", okTyped, cancelReply}},
			fill.Answer{Cancelled: true}},
		{"typed, remembered", func(pi *fill.PromptInfo) { pi.Remember = true },
			[]step{{"GETPIN", okTyped, typeReply(secret)}, {"CONFIRM", okRemember, okReply}},
			fill.Answer{Value: secret, Remember: true}},
		{"typed, not remembered", func(pi *fill.PromptInfo) { pi.Remember = true },
			[]step{{"GETPIN", okTyped, typeReply(secret)}, {"CONFIRM", okRemember, cancelReply}},
			fill.Answer{Value: secret}},
		{"typed, cancelled before remember", func(pi *fill.PromptInfo) { pi.Remember = true },
			[]step{{"GETPIN", okTyped, cancelReply}},
			fill.Answer{Cancelled: true}},
		{"approved", saved,
			[]step{{"CONFIRM", okSaved, okReply}},
			fill.Answer{Approved: true}},
		{"approved, cancelled", saved,
			[]step{{"CONFIRM", okSaved, cancelReply}},
			fill.Answer{Cancelled: true}},
		{"approved, one account", func(pi *fill.PromptInfo) { saved(pi); pi.Accounts = []string{"alice"} },
			[]step{{"CONFIRM", okSaved, okReply}},
			fill.Answer{Approved: true, Account: "alice"}},
		{"approved, account picked", func(pi *fill.PromptInfo) { saved(pi); pi.Accounts = accounts },
			[]step{{"CONFIRM", okSaved, okReply}, {"CONFIRM", okAccount, notOKReply}, {"CONFIRM", okAccount, okReply}},
			fill.Answer{Approved: true, Account: "bob"}},
		{"approved, accounts go round", func(pi *fill.PromptInfo) { saved(pi); pi.Accounts = accounts },
			[]step{{"CONFIRM", okSaved, okReply}, {"CONFIRM", okAccount, notOKReply}, {"CONFIRM", okAccount, notOKReply},
				{"CONFIRM", okAccount, notOKReply}, {"CONFIRM", okAccount, okReply}},
			fill.Answer{Approved: true, Account: "alice"}},
		{"approved, account pick cancelled", func(pi *fill.PromptInfo) { saved(pi); pi.Accounts = accounts },
			[]step{{"CONFIRM", okSaved, okReply}, {"CONFIRM", okAccount, notOKReply}, {"CONFIRM", okAccount, cancelReply}},
			fill.Answer{Cancelled: true}},
		{"approved, database password", func(pi *fill.PromptInfo) { saved(pi); pi.Ask = "the KeePassXC database password" },
			[]step{{"CONFIRM", okSaved, okReply}, {"GETPIN", okAsk, typeReply(dbPass)}},
			fill.Answer{Approved: true, Asked: dbPass}},
		{"approved, database password empty then typed", func(pi *fill.PromptInfo) { saved(pi); pi.Ask = "the KeePassXC database password" },
			[]step{{"CONFIRM", okSaved, okReply}, {"GETPIN", okAsk, typeReply(nil)}, {"GETPIN", okAsk, typeReply(dbPass)}},
			fill.Answer{Approved: true, Asked: dbPass}},
		{"approved, database password cancelled", func(pi *fill.PromptInfo) { saved(pi); pi.Ask = "the KeePassXC database password" },
			[]step{{"CONFIRM", okSaved, okReply}, {"GETPIN", okAsk, cancelReply}},
			fill.Answer{Cancelled: true}},
		{"approved, account and database password", func(pi *fill.PromptInfo) {
			saved(pi)
			pi.Accounts, pi.Ask = accounts, "the KeePassXC database password"
		},
			[]step{{"CONFIRM", okSaved, okReply}, {"CONFIRM", okAccount, notOKReply}, {"CONFIRM", okAccount, notOKReply},
				{"CONFIRM", okAccount, okReply}, {"GETPIN", okAsk, typeReply(dbPass)}},
			fill.Answer{Approved: true, Account: "carol", Asked: dbPass}},
		{"type instead", saved,
			[]step{{"CONFIRM", okSaved, notOKReply}, {"GETPIN", okTyped, typeReply(secret)}},
			fill.Answer{Value: secret}},
		{"type instead, remembered", func(pi *fill.PromptInfo) { saved(pi); pi.Remember = true },
			[]step{{"CONFIRM", okSaved, notOKReply}, {"GETPIN", okTyped, typeReply(secret)}, {"CONFIRM", okRemember, okReply}},
			fill.Answer{Value: secret, Remember: true}},
		{"type instead, cancelled", saved,
			[]step{{"CONFIRM", okSaved, notOKReply}, {"GETPIN", okTyped, cancelReply}},
			fill.Answer{Cancelled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pi := info()
			if tc.edit != nil {
				tc.edit(&pi)
			}
			h := newHarness(t, tc.steps...)
			a, err := h.Ask(t.Context(), pi)
			if err != nil {
				t.Fatalf("Ask: %v", err)
			}
			if !bytes.Equal(a.Value, tc.want.Value) || (a.Value == nil) != (tc.want.Value == nil) {
				t.Error("Answer.Value is not what the person typed")
			}
			if !bytes.Equal(a.Asked, tc.want.Asked) || (a.Asked == nil) != (tc.want.Asked == nil) {
				t.Error("Answer.Asked is not what the person typed for the store")
			}
			if a.Approved != tc.want.Approved || a.Account != tc.want.Account || a.Remember != tc.want.Remember || a.Cancelled != tc.want.Cancelled {
				t.Errorf("Answer{Approved:%v Account:%q Remember:%v Cancelled:%v}, want {%v %q %v %v}",
					a.Approved, a.Account, a.Remember, a.Cancelled,
					tc.want.Approved, tc.want.Account, tc.want.Remember, tc.want.Cancelled)
			}
			noLeak(t, h, nil, secret, dbPass)
			a.Zero()
		})
	}
}

// TestDialogTexts: what each dialog says, as the page says it.
func TestDialogTexts(t *testing.T) {
	secret := leakscan.NewSecret(t)
	pi := info()
	pi.Remember = true
	h := newHarness(t, step{"GETPIN", okTyped, typeReply(nil)}, step{"GETPIN", okTyped, typeReply(secret)},
		step{"CONFIRM", okRemember, okReply})
	a, err := h.Ask(t.Context(), pi)
	if err != nil {
		t.Fatal(err)
	}
	a.Zero()
	seen := h.person.dialogs()
	typed := seen[0].Dialog
	if typed.Title != "fillgate — password for github.com" || typed.Prompt != "Password:" ||
		typed.OK != "Fill" || typed.Cancel != "Cancel" || typed.NotOK != "" {
		t.Errorf("typed dialog: %+v", typed)
	}
	contains(t, "the typed dialog", typed.Description,
		"fillgate — password for github.com\n", "Asked by: claude (pid 4121) via fillgate fill",
		"Typed into: the focused password field of https://github.com",
		"As: “alice@example.com” (the account the page shows)",
		"Typed by: the fillgate extension in your browser", "Open until: ",
		"The agent never sees what you type")
	if strings.Contains(typed.Description, "WARNING") {
		t.Error("the typed dialog warns, with nothing to warn of")
	}
	if typed.Timeout < 59*time.Second || typed.Timeout > time.Minute {
		t.Errorf("SETTIMEOUT %v, want the budget", typed.Timeout)
	}
	if seen[0].Dialog.Error != "" || seen[1].Dialog.Error != "Nothing was typed. Type the password, or choose Cancel." {
		t.Errorf("empty answer: errors %q then %q", seen[0].Dialog.Error, seen[1].Dialog.Error)
	}
	remember := seen[2].Dialog
	if remember.OK != "Remember" || remember.Cancel != "Don't remember" || remember.NotOK != "" {
		t.Errorf("remember dialog: %+v", remember)
	}
	contains(t, "the remember dialog", remember.Description, "Remember it in the OS keyring?")
	for i, r := range seen {
		if len(r.Options) != 0 {
			t.Errorf("dialog %d set options %q", i+1, r.Options)
		}
		for _, l := range r.Lines {
			if strings.HasPrefix(l, "SETKEYINFO") || strings.HasPrefix(l, "OPTION") {
				t.Errorf("dialog %d sent %q", i+1, l)
			}
		}
	}
}

func TestDialogTextsOTP(t *testing.T) {
	pi := info()
	pi.Field, pi.Via = fill.FieldOTP, fill.ViaCDP
	h := newHarness(t, step{"GETPIN", okTyped, cancelReply})
	if _, err := h.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	d := h.person.dialogs()[0].Dialog
	if d.Prompt != "One-time code:" || d.Title != "fillgate — one-time code for github.com" {
		t.Errorf("OTP dialog: %+v", d)
	}
	contains(t, "the OTP dialog", d.Description, "the focused one-time code field",
		"Typed by: fillgate, over the browser's debugging port (CDP)")
}

// TestStaysWarning: when a typed value will stay in the page, the dialog
// says so before the person types, and at the choice to type instead.
func TestStaysWarning(t *testing.T) {
	pi := info()
	pi.Stays = true
	h := newHarness(t, step{"GETPIN", okTyped, cancelReply})
	if _, err := h.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	d := h.person.dialogs()[0].Dialog.Description
	contains(t, "the typed dialog", d, "WARNING: the agent asked fillgate not to submit the form",
		"stays in the field, where the agent's browser tools can read it")
	if strings.Contains(d, "The agent never sees") {
		t.Error("the dialog promises the agent never sees a value that stays in the page")
	}
	if strings.Index(d, "WARNING") > strings.Index(d, "Asked by") {
		t.Error("the warning comes after the details")
	}

	pi.From, pi.Entry = "from pass", "from pass: work/github"
	h = newHarness(t, step{"CONFIRM", okSaved, notOKReply}, step{"GETPIN", okTyped, cancelReply})
	if _, err := h.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	seen := h.person.dialogs()
	contains(t, "the saved dialog", seen[0].Dialog.Description, "Type instead: type a password yourself. WARNING")
	contains(t, "the typed dialog after Type instead", seen[1].Dialog.Description, "WARNING")
}

// TestWatchedWarning: when a program is attached to the login page's tab,
// every first dialog says, before the person answers, that it can read
// what goes into the page, and none promises the agent never sees it.
func TestWatchedWarning(t *testing.T) {
	pi := info()
	pi.Watched = true
	h := newHarness(t, step{"GETPIN", okTyped, cancelReply})
	if _, err := h.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	pi.From, pi.Entry = "from pass", "from pass: work/github"
	h2 := newHarness(t, step{"CONFIRM", okSaved, cancelReply})
	if _, err := h2.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	for name, d := range map[string]string{"typed": h.person.dialogs()[0].Dialog.Description, "saved": h2.person.dialogs()[0].Dialog.Description} {
		contains(t, "the "+name+" dialog", d, "a program is attached to that tab over the DevTools Protocol", "read what goes into it")
		if strings.Contains(d, "never sees") {
			t.Errorf("the %s dialog promises the agent never sees the value", name)
		}
		if strings.Index(d, "NOTE") > strings.Index(d, "Asked by") {
			t.Errorf("the %s dialog's note comes after the details", name)
		}
	}
}

func TestSavedTexts(t *testing.T) {
	pi := info()
	pi.From, pi.Entry = "from pass", "from pass: work/github"
	pi.Accounts, pi.Account = []string{"alice", "bob"}, ""
	pi.Ask = "the KeePassXC database password"
	h := newHarness(t, step{"CONFIRM", okSaved, okReply}, step{"CONFIRM", okAccount, okReply}, step{"GETPIN", okAsk, cancelReply})
	if _, err := h.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	seen := h.person.dialogs()
	s := seen[0].Dialog
	if s.OK != "Fill saved password" || s.NotOK != "Type instead" || s.Cancel != "Cancel" {
		t.Errorf("saved dialog buttons: %+v", s)
	}
	contains(t, "the saved dialog", s.Description, "Saved password: pass: work/github",
		"You pick the account, and type what the store needs, next.")
	acct := seen[1].Dialog
	if acct.NotOK != "Next account" || acct.Cancel != "Cancel" {
		t.Errorf("account dialog buttons: %+v", acct)
	}
	contains(t, "the account dialog", acct.Description, "account 1 of 2", "“alice”")
	ask := seen[2].Dialog
	if ask.Prompt != "The KeePassXC database password:" {
		t.Errorf("ask prompt %q", ask.Prompt)
	}
	contains(t, "the ask dialog", ask.Description, "fillgate needs the KeePassXC database password", "(pass: work/github)")

	// No entry: the kind of store.
	pi.Entry, pi.Accounts, pi.Ask = "", nil, ""
	h = newHarness(t, step{"CONFIRM", okSaved, cancelReply})
	if _, err := h.Ask(t.Context(), pi); err != nil {
		t.Fatal(err)
	}
	contains(t, "the saved dialog", h.person.dialogs()[0].Dialog.Description, "Saved password: pass\n")
}

// TestHostileText: page, agent and store text cannot break the protocol
// or the dialog's lines, however long or strange.
func TestHostileText(t *testing.T) {
	hostile := "alice%0A\nOK\nD injected\r\nBYE\x00\u202Eevil\u200B" + strings.Repeat("é", 3000)
	pi := info()
	pi.Account, pi.Service, pi.Origin = hostile, "github.com\nOK", "https://github.com%0A"
	pi.Agent.Name = "claude\nApproved by the person"
	pi.From, pi.Entry, pi.Accounts, pi.Ask = "from pass", "from pass: "+hostile, []string{hostile, "b\nOK"}, hostile
	h := newHarness(t, step{"CONFIRM", okSaved, okReply}, step{"CONFIRM", okAccount, okReply}, step{"GETPIN", okAsk, cancelReply})
	a, err := h.Ask(t.Context(), pi)
	if err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if !a.Cancelled {
		t.Errorf("answer %+v, want cancelled", a)
	}
	for i, r := range h.person.dialogs() {
		for _, l := range r.Lines {
			cmd, _, _ := strings.Cut(l, " ")
			switch cmd {
			case "SETTITLE", "SETDESC", "SETPROMPT", "SETOK", "SETNOTOK", "SETCANCEL", "SETERROR", "SETTIMEOUT", "GETPIN", "CONFIRM":
			default:
				t.Errorf("dialog %d: pinentry got the line %q", i+1, l)
			}
			if len(l) > 1000 {
				t.Errorf("dialog %d: a line of %d bytes", i+1, len(l))
			}
		}
		d := r.Dialog
		for _, s := range []string{d.Title, d.Prompt, d.OK, d.NotOK, d.Cancel} {
			if strings.ContainsAny(s, "\n\r\x00\u202E\u200B") {
				t.Errorf("dialog %d: a control character in %q", i+1, s)
			}
		}
		for _, line := range strings.Split(d.Description, "\n") {
			if strings.HasPrefix(line, "OK") || strings.HasPrefix(line, "D ") || strings.HasPrefix(line, "Approved") ||
				strings.ContainsAny(line, "\r\x00\u202E\u200B") {
				t.Errorf("dialog %d: page text made the line %q", i+1, line)
			}
		}
	}
	contains(t, "the saved dialog", h.person.dialogs()[0].Dialog.Description, "alice%0A\uFFFDOK\uFFFDD injected", "…")
}

// TestEnds: how Ask ends when nobody answers or the dialog breaks.
func TestEnds(t *testing.T) {
	secret := leakscan.NewSecret(t)
	for _, tc := range []struct {
		name     string
		edit     func(*fill.PromptInfo)
		steps    []step
		cancel   bool
		deadline bool // the error wraps context.DeadlineExceeded
		canceled bool // the error wraps context.Canceled
		noDialog bool // the error wraps fill.ErrNoDialog
	}{
		{name: "pinentry's timeout", steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Err: pinentrytest.Timeout}}}, deadline: true},
		{name: "the budget runs out", edit: func(pi *fill.PromptInfo) { pi.Budget = 300 * time.Millisecond },
			steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Hang: true}}}, deadline: true},
		{name: "the budget runs out at remember", edit: func(pi *fill.PromptInfo) { pi.Budget = 300 * time.Millisecond; pi.Remember = true },
			steps: []step{{"GETPIN", okTyped, typeReply(secret)}, {"CONFIRM", okRemember, pinentrytest.Reply{Hang: true}}}, deadline: true},
		{name: "ctx cancelled", steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Hang: true}}}, cancel: true, canceled: true},
		{name: "pinentry dies", steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Exit: true}}}, noDialog: true},
		{name: "pinentry dies at remember", edit: func(pi *fill.PromptInfo) { pi.Remember = true },
			steps: []step{{"GETPIN", okTyped, typeReply(secret)}, {"CONFIRM", okRemember, pinentrytest.Reply{Exit: true}}}, noDialog: true},
		{name: "pinentry dies at the account", edit: func(pi *fill.PromptInfo) { pi.From, pi.Accounts = "from pass", []string{"a", "b"} },
			steps: []step{{"CONFIRM", okSaved, okReply}, {"CONFIRM", okAccount, pinentrytest.Reply{Exit: true}}}, noDialog: true},
		{name: "pinentry says nonsense", steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Raw: "hello\n"}}}, noDialog: true},
		{name: "pinentry fails otherwise", steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Err: 83886083}}}, noDialog: true},
		{name: "pinentry sends data half-way and dies", steps: []step{{"GETPIN", okTyped, pinentrytest.Reply{Raw: "D " + string(secret[:4]), Exit: true}}}, noDialog: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pi := info()
			if tc.edit != nil {
				tc.edit(&pi)
			}
			h := newHarness(t, tc.steps...)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				time.AfterFunc(100*time.Millisecond, cancel)
			}
			start := time.Now()
			a, err := h.Ask(ctx, pi)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Ask took %v", took)
			}
			if err == nil {
				t.Fatalf("Ask = %+v, want an error", a)
			}
			if a.Value != nil || a.Asked != nil || a.Approved || a.Cancelled {
				t.Error("Ask returned an answer with its error")
			}
			if errors.Is(err, context.DeadlineExceeded) != tc.deadline || errors.Is(err, context.Canceled) != tc.canceled ||
				errors.Is(err, fill.ErrNoDialog) != tc.noDialog {
				t.Errorf("Ask = %v; want deadline %v, canceled %v, no dialog %v", err, tc.deadline, tc.canceled, tc.noDialog)
			}
			noLeak(t, h, err, secret)
		})
	}
}

func TestNoPlatform(t *testing.T) {
	d := New(Config{Env: func(string) string { return "" }})
	d.platform = func(Config) (backend, error) { return nil, errors.New("no display") }
	if err := d.Available(); err == nil {
		t.Error("Available = nil")
	}
	if _, err := d.Ask(t.Context(), info()); !errors.Is(err, fill.ErrNoDialog) {
		t.Errorf("Ask = %v, want ErrNoDialog", err)
	}
}

func TestPinentryDoesNotStart(t *testing.T) {
	h := newHarness(t)
	h.platform = func(cfg Config) (backend, error) {
		b := newPinentry("/nonexistent/pinentry-gtk-2", nil)
		return b, nil
	}
	if _, err := h.Ask(t.Context(), info()); !errors.Is(err, fill.ErrNoDialog) {
		t.Errorf("Ask = %v, want ErrNoDialog", err)
	}
}

func TestClean(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"alice", 10, "alice"},
		{"a\nb\rc\x00d\te", 20, "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe"},
		{"\u202Eevil\u200B\u2028", 30, "\uFFFDevil\uFFFD\uFFFD"},
		{"\xff\xfe", 10, "\uFFFD"},
		{"abcdefghij", 8, "abcde…"},
		{"ééééé", 6, "é…"},
		{"abc", 0, "…"},
	} {
		if got := clean(tc.in, tc.limit); got != tc.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

func TestDialogEnv(t *testing.T) {
	env := map[string]string{"DISPLAY": ":1", "XAUTHORITY": "/x", "PATH": "/agent/bin", "TERM": "xterm",
		"GPG_AGENT_INFO": "x", "FILLGATE_SECRET": "s", "LC_ALL": "C.UTF-8", "HOME": "/home/a", "LD_PRELOAD": "/evil.so"}
	got := strings.Join(dialogEnv(func(k string) string { return env[k] }), " ")
	if want := "DISPLAY=:1 XAUTHORITY=/x HOME=/home/a LC_ALL=C.UTF-8"; got != want {
		t.Errorf("dialog env %q, want %q", got, want)
	}
}

// TestEveryDialogFits: with the longest names an agent, a page or a store
// could choose, every dialog's text still fits one pinentry line, and
// starts with its title.
func TestEveryDialogFits(t *testing.T) {
	long := strings.Repeat("ü%\n", 5000)
	pi := info()
	pi.Agent.Name, pi.Service, pi.Origin, pi.Account = long, long, long, long
	pi.From, pi.Entry, pi.Ask, pi.Accounts = long, long, long, []string{long, long}
	pi.Stays, pi.Remember, pi.Field = true, true, fill.FieldOTP
	tx := newTexts(pi, time.Now().Add(time.Minute))
	for name, d := range map[string]dialog{
		"typed": tx.typed(), "saved": tx.saved(), "pickOne": tx.pickOne(1, long, 2), "pickList": tx.pickList(),
		"ask": tx.ask(), "remember": tx.remember(),
	} {
		if !fits(d) {
			t.Errorf("%s does not fit one pinentry line", name)
		}
		if !strings.HasPrefix(d.text, d.title+"\n\n") {
			t.Errorf("%s does not start with its title", name)
		}
		if name == "typed" && !strings.Contains(d.text, "WARNING") {
			t.Errorf("%s lost its warning", name)
		}
	}
}
