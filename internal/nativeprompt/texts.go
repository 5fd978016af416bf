package nativeprompt

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/pinentry"
	"github.com/fillgate/fillgate/internal/wording"
)

// How many bytes of each name an agent, a page or a store chose a dialog
// shows (fewer when the whole text would not fit pinentry's line).
const (
	maxAgent   = 120
	maxService = 100
	maxOrigin  = 160
	maxAccount = 100
	maxEntry   = 160
	maxAsk     = 80
)

// texts words the dialogs of one PromptInfo, as the loopback page words
// its prompt (internal/pageprompt/page.go).
type texts struct {
	info     fill.PromptInfo
	deadline time.Time
	// noun is "password" or "one-time code", label "Password" or
	// "One-time code", short "password" or "code" (for buttons).
	noun, label, short string
}

// newTexts prepares the words for info; deadline is when the dialogs
// give up (zero: never).
func newTexts(info fill.PromptInfo, deadline time.Time) texts {
	t := texts{info: info, deadline: deadline, noun: wording.FieldNoun(info.Field)}
	t.label, t.short = wording.Capitalize(t.noun), t.noun
	if info.Field == fill.FieldOTP {
		t.short = "code"
	}
	return t
}

// typed is the dialog to type the value in.
func (t texts) typed() dialog {
	return fit(func(s int) dialog {
		var b strings.Builder
		t.head(&b, t.info.Stays)
		t.details(&b, s, false)
		b.WriteString("\n")
		switch {
		case t.info.Stays:
			b.WriteString("fillgate types it into that field and does not submit the form: it stays there until the page or you clear it.")
		case t.info.CleanRoom:
			b.WriteString(cleanRoomNote)
		case t.info.Watched:
			b.WriteString("fillgate types it into that field, submits the form and tells the agent only whether it worked.")
		default:
			b.WriteString("The agent never sees what you type: fillgate types it into that field, submits the form and tells the agent only whether it worked.")
		}
		return dialog{
			title: t.title(s, t.noun+" for "), text: b.String(), prompt: t.label + ":",
			ok: "Fill", cancel: "Cancel", user: t.user(s),
		}
	})
}

// cleanRoomNote ends the typing dialog of a login in the clean room.
const cleanRoomNote = "A program drives the agent's browser, so fillgate logs in for it in a browser of its own: what you type never " +
	"enters the agent's browser, which gets only the session the login leaves. The agent learns only whether it worked."

// typedEmpty is the problem shown when nothing was typed.
func (t texts) typedEmpty() string {
	return "Nothing was typed. Type the " + t.noun + ", or choose Cancel."
}

// saved is the confirmation to fill the saved value, or type instead.
func (t texts) saved() dialog {
	return fit(func(s int) dialog {
		var b strings.Builder
		t.head(&b, false)
		t.details(&b, s, true)
		switch {
		case t.info.CleanRoom:
			b.WriteString("\nFill saved " + t.short + ": fillgate reads it from its store and logs in with it in a browser of its own; the agent and its browser never see it.")
		case t.info.Watched:
			b.WriteString("\nFill saved " + t.short + ": fillgate reads it from its store, types it into that field and submits the form.")
		default:
			b.WriteString("\nFill saved " + t.short + ": fillgate reads it from its store, types it into that field and submits the form; the agent never sees it.")
		}
		switch {
		case len(t.info.Accounts) > 1 && t.info.Ask != "":
			b.WriteString(" You pick the account, and type what the store needs, next.")
		case len(t.info.Accounts) > 1:
			b.WriteString(" You pick the account next.")
		case t.info.Ask != "":
			b.WriteString(" You type what the store needs next.")
		}
		b.WriteString("\nType instead: type a " + t.noun + " yourself.")
		if t.info.Stays {
			b.WriteString(" WARNING: a " + t.noun + " you type stays in the field, unsubmitted, where the agent's browser tools can read it.")
		}
		return dialog{
			title: t.title(s, "use the saved "+t.noun+" for ") + "?", text: b.String(),
			ok: "Fill saved " + t.short, notOK: "Type instead", cancel: "Cancel",
		}
	})
}

// passkey asks to approve a passkey for the agents: one sign-in with it,
// or (info.Enrol) adding one on the site.
func (t texts) passkey() dialog {
	return fit(func(s int) dialog {
		var b strings.Builder
		t.head(&b, false)
		b.WriteString("Asked by: " + t.agent(s) + "\n")
		b.WriteString("Site: " + clean(t.info.Origin, maxOrigin/s) + "\n")
		if t.info.Account != "" {
			b.WriteString("Account: “" + clean(t.info.Account, maxAccount/s) + "”\n")
		}
		if !t.deadline.IsZero() {
			b.WriteString("Open until: " + t.deadline.Format("15:04:05") + " (" + wording.Duration(time.Until(t.deadline)) + ")\n")
		}
		if t.info.Enrol {
			b.WriteString("\nAdd a passkey for your agents: once you approve, click the site's own \"add a passkey\" button in that tab. " +
				"fillgate makes the key and keeps it in the OS keyring; the agent never sees it. The site lists it, and you can remove it there.")
			return dialog{title: t.title(s, "add a passkey for your agents on ") + "?", text: b.String(), ok: "Approve", cancel: "Cancel"}
		}
		b.WriteString("\nSign in with a passkey for your agents: fillgate answers the page's passkey request once, " +
			"with the key kept in the OS keyring; the agent never sees it.")
		return dialog{title: t.title(s, "sign in with the agents' passkey on ") + "?", text: b.String(), ok: "Approve", cancel: "Cancel"}
	})
}

// pickOne asks whether to use account i of n.
func (t texts) pickOne(i int, account string, n int) dialog {
	return fit(func(s int) dialog {
		var b strings.Builder
		fmt.Fprintf(&b, "Saved %ss for %s: account %d of %d\n\n", t.noun, clean(t.info.Service, maxService/s), i+1, n)
		b.WriteString("    “" + clean(account, maxAccount/s) + "”\n\n")
		b.WriteString("Typed into: the focused " + t.noun + " field of " + clean(t.info.Origin, maxOrigin/s) + "\n")
		b.WriteString("Asked by: " + t.agent(s) + "\n\n")
		b.WriteString("Use this account, or go on to the next one.")
		return dialog{
			title: t.title(s, "which account for ") + "?", text: b.String(),
			ok: "Use this account", notOK: "Next account", cancel: "Cancel",
		}
	})
}

// pickList asks which account to use, for a backend with a list.
func (t texts) pickList() dialog {
	return fit(func(s int) dialog {
		text := fmt.Sprintf("Which saved account should fillgate fill the %s of, for %s?",
			t.noun, clean(t.info.Service, maxService/s))
		return dialog{title: t.title(s, "which account for "), text: text, ok: "Use this account", cancel: "Cancel"}
	})
}

// ask is the dialog to type what the saved value's store needs (the
// KeePassXC database password).
func (t texts) ask() dialog {
	return fit(func(s int) dialog {
		var b strings.Builder
		what := clean(t.info.Ask, maxAsk/s)
		fmt.Fprintf(&b, "To read the saved %s for %s", t.noun, clean(t.info.Service, maxService/s))
		if src := t.source(s); src != "" {
			b.WriteString(" (" + src + ")")
		}
		b.WriteString(", fillgate needs " + what + ".\n\n")
		b.WriteString("What you type here goes to the store only: the agent and the page never see it.")
		return dialog{
			title: t.title(s, "unlock the saved "+t.noun+" for "), text: b.String(),
			prompt: wording.Capitalize(what) + ":", ok: "Unlock", cancel: "Cancel", user: t.user(s),
		}
	})
}

// askEmpty is the problem shown when nothing was typed for ask.
func (t texts) askEmpty() string {
	return "Nothing was typed. Type it, or choose Cancel."
}

// remember asks whether to remember the typed value.
func (t texts) remember() dialog {
	return fit(func(s int) dialog {
		var b strings.Builder
		b.WriteString("Remember it in the OS keyring?\n\n")
		fmt.Fprintf(&b, "fillgate can keep the %s you typed for %s", t.noun, clean(t.info.Service, maxService/s))
		if t.info.Account != "" {
			b.WriteString(" (as “" + clean(t.info.Account, maxAccount/s) + "”, the account the page shows)")
		}
		b.WriteString(" in the OS keyring, so that next time you only approve it.")
		return dialog{title: t.title(s, "remember the "+t.noun+" for ") + "?", text: b.String(), ok: "Remember", cancel: "Don't remember"}
	})
}

// user is the account the page shows, else the service.
func (t texts) user(s int) string {
	if t.info.Account != "" {
		return clean(t.info.Account, maxAccount/s)
	}
	return clean(t.info.Service, maxService/s)
}

// title is "fillgate — WHAT SERVICE".
func (t texts) title(s int, what string) string {
	return "fillgate — " + what + clean(t.info.Service, maxService/s)
}

// head writes, with warn, the warning that a typed value will stay in
// the page, and the warning that a program attached to the login page's
// tab can read what goes into it.
func (t texts) head(b *strings.Builder, warn bool) {
	if warn {
		b.WriteString("WARNING: the agent asked fillgate not to submit the form, so the " + t.noun +
			" you type stays in the field, where the agent's browser tools can read it.\n\n")
	}
	if t.info.InPage {
		b.WriteString("NOTE: a program drives the agent's browser (its browser tools, a debugging port), and your policy lets fillgate " +
			"type into it (driven = \"in-page\"): that program can read this " + t.noun + " in the page as it goes in. " +
			"Type it only if you trust what drives that browser.\n\n")
	} else if t.info.Watched {
		b.WriteString("NOTE: a program is attached to that tab over the DevTools Protocol (an agent's browser tools, say): " +
			"it can run script in the login page and read what goes into it, this " + t.noun + " too. " +
			"Answer only if you trust what drives this browser.\n\n")
	}
}

// details writes what the page's prompt lists: who asks, where the value
// goes, the account, where a saved value comes from, how it is typed and
// until when the dialog is open.
func (t texts) details(b *strings.Builder, s int, saved bool) {
	b.WriteString("Asked by: " + t.agent(s) + "\n")
	b.WriteString("Typed into: the focused " + t.noun + " field of " + clean(t.info.Origin, maxOrigin/s) + "\n")
	if t.info.Account != "" {
		b.WriteString("As: “" + clean(t.info.Account, maxAccount/s) + "” (the account the page shows)\n")
	}
	if src := t.source(s); saved && src != "" {
		b.WriteString("Saved " + t.noun + ": " + src + "\n")
	}
	switch {
	case t.info.CleanRoom:
		b.WriteString("Typed by: fillgate, in a browser of its own (a clean room); the agent's browser gets only the session\n")
	case t.info.Via == fill.ViaExtension:
		b.WriteString("Typed by: the fillgate extension in your browser\n")
	case t.info.Via == fill.ViaCDP:
		b.WriteString("Typed by: fillgate, over the browser's debugging port (CDP)\n")
	}
	if !t.deadline.IsZero() {
		b.WriteString("Open until: " + t.deadline.Format("15:04:05") + " (" + wording.Duration(time.Until(t.deadline)) + ")\n")
	}
}

// agent names the agent as the page does.
func (t texts) agent(s int) string {
	a := t.info.Agent.String()
	if t.info.Agent.Name == "" && t.info.Agent.PID == 0 {
		a = "an unknown process"
		if t.info.Agent.Via != "" {
			a += " via " + t.info.Agent.Via
		}
	}
	return clean(a, maxAgent/s)
}

// source is where the saved value comes from: its entry, which only this
// dialog names, else the kind of store; "" for none.
func (t texts) source(s int) string {
	src := t.info.Entry
	if src == "" {
		src = t.info.From
	}
	return clean(strings.TrimPrefix(src, "from "), maxEntry/s)
}

// fit builds a dialog whose every text fits one pinentry line, showing
// less of each chosen name (build's scale divides their lengths) until
// it does. The text starts with the title, for desktops that show no
// window titles.
func fit(build func(scale int) dialog) dialog {
	for s := 1; ; s *= 2 {
		d := build(s)
		d.text = d.title + "\n\n" + d.text
		if s >= 64 || fits(d) {
			return d
		}
	}
}

// fits reports whether every text of d fits one pinentry command line.
func fits(d dialog) bool {
	const room = pinentry.MaxLine - len("SETDESC ")
	for _, s := range []string{d.title, d.text, d.prompt, d.ok, d.notOK, d.cancel, d.problem} {
		if len(pinentry.AppendEscaped(nil, s)) > room {
			return false
		}
	}
	return true
}

// clean makes a name that an agent, a page or a store chose safe to show:
// invalid UTF-8, control and format characters (newlines, bidi
// overrides, zero-width joiners) become U+FFFD so that they cannot start
// a line, reorder or hide text, and it is cut to at most limit bytes, with
// "…" when cut.
func clean(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return utf8.RuneError
		}
		return r
	}, s)
	if len(s) <= limit {
		return s
	}
	cut := max(limit-len("…"), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
