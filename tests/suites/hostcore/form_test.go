package hostcore

import (
	"context"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
)

// withForm is page with its field in a form sending to dest (and, with a
// default submit button, to button).
func withForm(page fakeext.Page, dest fill.Destination, button *fill.Destination, elsewhere bool) fakeext.Page {
	page.Form = &fill.FormInfo{Destination: dest, Submitter: button, Elsewhere: elsewhere}
	return page
}

// TestFormDestinationsRefused: a form that may send the value anywhere but
// the service is refused before anything is asked or inserted, through
// the real host and CLI.
func TestFormDestinationsRefused(t *testing.T) {
	gh := loginPage("https://github.com")
	home := fill.Destination{Action: "https://github.com"}
	cases := []struct {
		name   string
		page   fakeext.Page
		detail string
	}{
		{"posts to another origin", withForm(gh, fill.Destination{Action: "https://evil.test"}, nil, false),
			"The form around the focused field on https://github.com sends it to https://evil.test"},
		{"formaction elsewhere", withForm(gh, home, &fill.Destination{Action: "https://evil.test"}, false),
			"The submit button of the form around the focused field"},
		{"form= attribute", withForm(gh, home, nil, true), "belongs to a form elsewhere in the page"},
		{"target into a frame", withForm(gh, fill.Destination{Action: "https://github.com", Target: "side"}, nil, false),
			`into another frame or window (target "side")`},
		{"javascript: action", withForm(gh, fill.Destination{Action: "null"}, nil, false), "not http or https"},
		{"plain http action", withForm(gh, fill.Destination{Action: "http://github.com"}, nil, false), "is not https"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, setup{page: c.page})
			r.behave(answers(r.secret))
			got := r.fill("github.com")
			r.expect(got, fill.StatusRefused, c.detail)
			if got.res.Submitted != nil || got.res.Navigated != nil {
				t.Errorf("a refused result says submitted/navigated: %s", r.safe(string(got.stdout)))
			}
			r.expectExtSaw(1, "inspect", "outcome")
			if n := r.promptCount(); n != 0 {
				t.Errorf("%d prompts opened for a refused request", n)
			}
			r.expectNothingInserted()
			r.expectAudit(got)
		})
	}

	t.Run("posts to the service", func(t *testing.T) {
		r := newRig(t, setup{page: withForm(gh, fill.Destination{Action: "https://login.github.com"}, &fill.Destination{Action: "https://github.com", Target: "_self"}, false)})
		r.behave(answers(r.secret))
		got := r.fill("github.com")
		r.expect(got, fill.StatusOK, "the form was submitted")
		r.expectInserted(r.secret)
	})

	t.Run("form changed while the prompt was open", func(t *testing.T) {
		r := newRig(t, setup{page: withForm(gh, home, nil, false)})
		answer := answers(r.secret)
		r.behave(func(ctx context.Context, r *rig, at prompted) error {
			r.ext.Update(func(p *fakeext.Page) {
				p.Form = &fill.FormInfo{Destination: fill.Destination{Action: "https://evil.test"}}
			})
			return answer(ctx, r, at)
		})
		got := r.fill("github.com")
		r.expect(got, fill.StatusRefused, "nothing was inserted: the page changed where the field's form sends the value")
		r.expectNothingInserted()
	})
}
