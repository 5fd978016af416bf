// Package fakepage models, for the fake extension (tests/fakes/fakeext) and the
// fake CDP endpoint (tests/fakes/fakecdp), what a page does after fillgate's
// in-page function inserted a value: how it answers the submit, and
// whether the value is still in its field when the call returns. It
// follows extension/inpage.js's insert op (PROTOCOL.md §3).
package fakepage

import "github.com/fillgate/fillgate/internal/fill"

// Submission is how the page answers fillgate's submit.
type Submission int

// The ways a page answers the submit.
const (
	// Navigates: a native form submission; the page navigates away.
	Navigates Submission = iota
	// Script: a script handles the submit (a fetch login) and the page
	// stays with the field filled; fillgate clears it.
	Script
	// Removes: a script handles the submit and removes the field (a
	// single-page app moving on).
	Removes
	// Invalid: the form's validation stops the submit at a field.
	Invalid
	// Disabled: the form's submit button is disabled, and Enter does
	// nothing either.
	Disabled
	// SelfSubmits: the page submits by itself once the value is in (a
	// one-time-code widget), then navigates.
	SelfSubmits
	// KeepsValue: a script handles the submit and puts the value back into
	// the field after fillgate clears it.
	KeepsValue
	// GoesAway: the document goes away while the in-page call runs, so no
	// answer comes back from it.
	GoesAway
)

// Page is what the fake page does after an insert.
type Page struct {
	Submit Submission
	// InvalidField names the field whose validation stops the submit
	// (Invalid).
	InvalidField string
	// FormChanges makes the page's input handlers change where the form
	// sends the value, once the value is in.
	FormChanges bool
	// Short makes the field keep only part of the value (a maxlength).
	Short bool
}

// After returns the in-page function's answer to an insert that happened
// with then (fill.ThenSubmit or fill.ThenNone), and whether the field
// still holds (part of) the value afterwards. gone reports a document that
// went away mid-call: no answer reaches the caller.
func (p Page) After(then string) (v fill.Verdict, holds, gone bool) {
	v = fill.Verdict{Inserted: true, Matched: !p.Short}
	if then == fill.ThenNone {
		v.Remains = true
		return v, true, false
	}
	stop := func(reason string) (fill.Verdict, bool, bool) {
		v.Stopped, v.Cleared = reason, true
		return v, false, false
	}
	switch {
	case p.Short:
		return stop("not_matched")
	case p.Submit == GoesAway:
		return fill.Verdict{}, false, true
	case p.Submit == SelfSubmits:
		v.Submitted, v.Navigated = true, true
		return v, false, false
	case p.FormChanges:
		return stop("form_changed")
	case p.Submit == Invalid:
		v, holds, gone = stop("invalid")
		v.StoppedBy = p.InvalidField
		return v, holds, gone
	case p.Submit == Disabled:
		return stop("button_disabled")
	}
	v.Submitted = true
	switch p.Submit {
	case Navigates:
		v.Navigated, v.Cleared = true, true
	case Script:
		v.Cleared = true
	case KeepsValue:
		v.Cleared, v.Remains = true, true
		return v, true, false
	}
	return v, false, false
}
