package nativeprompt

import (
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// A passkey's dialog is Approve or Cancel, nothing to type, and says what
// is approved: one sign-in, or adding a passkey on the site.
func TestPasskeyDialog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		enrol  bool
		reply  step
		want   fill.Answer
		saying string
	}{
		{"sign-in approved", false, step{"CONFIRM", "Approve", okReply}, fill.Answer{Approved: true}, "Sign in with a passkey for your agents"},
		{"sign-in cancelled", false, step{"CONFIRM", "Approve", cancelReply}, fill.Answer{Cancelled: true}, "answers the page's passkey request once"},
		{"add approved", true, step{"CONFIRM", "Approve", okReply}, fill.Answer{Approved: true}, "Add a passkey for your agents"},
		{"add cancelled", true, step{"CONFIRM", "Approve", cancelReply}, fill.Answer{Cancelled: true}, "click the site's own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pi := info()
			pi.Field, pi.Enrol, pi.Origin, pi.Account = fill.FieldPasskey, tc.enrol, "https://login.example.com", "ada"
			h := newHarness(t, tc.reply)
			a, err := h.Ask(t.Context(), pi)
			if err != nil {
				t.Fatal(err)
			}
			if a.Approved != tc.want.Approved || a.Cancelled != tc.want.Cancelled || a.Value != nil {
				t.Fatalf("answer %+v; want %+v", a, tc.want)
			}
			d := h.person.dialogs()[0].Dialog
			for _, s := range []string{tc.saying, "Site: https://login.example.com", "Account: “ada”", "claude (pid 4121)", "the agent never sees it"} {
				if !strings.Contains(d.Description, s) {
					t.Errorf("the dialog does not say %q:\n%s", s, d.Description)
				}
			}
			if d.NotOK != "" {
				t.Errorf("the dialog offers %q besides Approve and Cancel", d.NotOK)
			}
		})
	}
}

// The passkey dialogs fit one pinentry line whatever the names.
func TestPasskeyDialogFits(t *testing.T) {
	long := strings.Repeat("ü%\n", 5000)
	pi := info()
	pi.Agent.Name, pi.Service, pi.Origin, pi.Account, pi.Field, pi.Watched = long, long, long, long, fill.FieldPasskey, true
	for _, enrol := range []bool{false, true} {
		pi.Enrol = enrol
		d := newTexts(pi, time.Now().Add(time.Minute)).passkey()
		if !fits(d) || !strings.HasPrefix(d.text, d.title+"\n\n") || !strings.Contains(d.text, "NOTE: a program is attached") {
			t.Errorf("enrol %v: the dialog does not fit, or lost its title or note", enrol)
		}
	}
}
