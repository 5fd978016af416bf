package fill

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCheck: the door normalizes what it passes and refuses, without
// echoing the request, what it does not know.
func TestCheck(t *testing.T) {
	tab, frame := int64(12), int64(0)
	in := Request{Service: "GitHub.com", Timeout: 1500 * time.Millisecond, Tab: &tab, Frame: &frame, Browser: "brave", Profile: "work"}
	got := checked(t, in).Request()
	want := in
	want.Service, want.Field, want.Then = "github.com", FieldPassword, ThenSubmit
	if got != want {
		t.Errorf("Check(%+v) = %+v, want %+v", in, got, want)
	}
	for field, kind := range map[string]string{"": FieldPassword, "password": FieldPassword, "otp": FieldOTP, "one-time-code": FieldOTP, "code": FieldOTP} {
		if got := checked(t, Request{Service: "a.test", Field: field}).Request().Field; got != kind {
			t.Errorf("field %q is checked as %q, want %q", field, got, kind)
		}
	}
	if got := checked(t, Request{Service: "a.test", Then: ThenNone}).Request().Then; got != ThenNone {
		t.Errorf("then none is checked as %q", got)
	}

	for _, c := range []struct {
		name      string
		req       Request
		detail    string
		malformed bool
	}{
		{"bare suffix", Request{Service: "com"}, "com is a public suffix", false},
		{"bad field", Request{Service: "github.com", Field: "username"}, "unknown field: use password, one-time-code or passkey", true},
		{"bad then", Request{Service: "github.com", Then: "later"}, "unknown then: use submit or none", true},
		{"bad field before a bad service", Request{Service: "com", Field: "username"}, "unknown field: use password, one-time-code or passkey", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Check(c.req, canonical)
			if err == nil || err.Error() != c.detail || errors.Is(err, ErrMalformed) != c.malformed {
				t.Fatalf("Check = %+v, %v; want %q (malformed %v)", got, err, c.detail, c.malformed)
			}
			if got != (Checked{}) {
				t.Errorf("a refused request came through as %+v", got)
			}
		})
	}
}

// FuzzCheck: the door never panics; what it passes is normalized, and a
// malformed request's refusal is one of its own sentences, never an echo.
func FuzzCheck(f *testing.F) {
	f.Add("github.com", "password", "submit")
	f.Add("a.test", "otp", "none")
	f.Add("com", "", "")
	f.Add("x", "credit-card", "later")
	f.Fuzz(func(t *testing.T, service, field, then string) {
		c, err := Check(Request{Service: service, Field: field, Then: then}, canonical)
		switch {
		case err == nil:
			r := c.Request()
			if r.Field != FieldPassword && r.Field != FieldOTP || r.Then != ThenSubmit && r.Then != ThenNone || r.Service != strings.ToLower(service) {
				t.Fatalf("passed as %+v", r)
			}
		case errors.Is(err, ErrMalformed):
			if !slices.Contains([]string{"unknown field: use password, one-time-code or passkey", "unknown then: use submit or none"}, err.Error()) {
				t.Fatalf("a refusal the door does not write itself: %q", err)
			}
		case service != "com":
			t.Fatalf("refused %q, which canonical takes: %v", service, err)
		}
	})
}

// TestRefusedIsRecorded: a request the door refused is an outcome like
// any other: in the log, the audit log and OnOutcome, with no browser
// asked.
func TestRefusedIsRecorded(t *testing.T) {
	r := newRig(t)
	var heard []Result
	r.e.OnOutcome = func(res Result) { heard = append(heard, res) }
	res := Result{Status: StatusRefused, Service: "com", Field: FieldPassword, Via: ViaExtension, Detail: "com is a public suffix"}
	r.e.Refused(agent, res)
	want := AuditEntry{Agent: agent, Service: "com", Field: FieldPassword, Via: ViaExtension, Status: StatusRefused, Detail: "com is a public suffix"}
	if len(r.audit.entries) != 1 {
		t.Fatalf("audit %+v", r.audit.entries)
	}
	got := r.audit.entries[0]
	if got.Time.IsZero() {
		t.Error("the audit entry has no time")
	}
	got.Time = time.Time{}
	if got != want {
		t.Errorf("audit entry %+v, want %+v", got, want)
	}
	if len(heard) != 1 || heard[0] != res {
		t.Errorf("OnOutcome heard %+v", heard)
	}
	if r.b.inserts != 0 || r.b.drives != 0 {
		t.Error("a refusal at the door reached the browser")
	}
}
