package policy

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

func TestThen(t *testing.T) {
	p := &Policy{Rules: []Rule{
		{Service: "bank.example", Then: ThenSubmit},
		{Service: "admin.example", Then: ThenNone},
		{Service: "login.admin.example", Then: ThenSubmit},
		{Service: "plain.example"},
	}}
	pol := Default()
	pol.Rules = p.Rules
	if err := pol.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	cases := []struct {
		origin, asked string
		want          string // "" means refused
	}{
		{"https://github.com", "", ThenSubmit},
		{"https://github.com", ThenNone, ThenNone},
		{"https://github.com", ThenSubmit, ThenSubmit},
		{"https://bank.example", ThenSubmit, ThenSubmit},
		{"https://www.bank.example", "", ThenSubmit},
		{"https://bank.example", ThenNone, ""},
		{"https://admin.example", ThenSubmit, ThenNone},
		{"https://admin.example", ThenNone, ThenNone},
		// Both rules apply under login.admin.example: submit wins.
		{"https://login.admin.example", ThenNone, ""},
		{"https://login.admin.example", "", ThenSubmit},
		{"https://plain.example", ThenNone, ThenNone},
	}
	for _, c := range cases {
		got, d := pol.Then(c.origin, c.asked)
		if c.want == "" {
			if d.Allow || d.Check != CheckThen || !strings.Contains(d.Detail, `then = "submit"`) {
				t.Errorf("Then(%s, %q) = %q, %+v; want refused", c.origin, c.asked, got, d)
			}
			continue
		}
		if !d.Allow || got != c.want {
			t.Errorf("Then(%s, %q) = %q, %+v; want %q", c.origin, c.asked, got, d, c.want)
		}
	}
	if _, d := pol.Then("https://github.com", "later"); d.Allow || d.Check != CheckThen {
		t.Errorf("an unknown then was allowed: %+v", d)
	}
	if _, d := pol.Then("github.com", ""); d.Allow {
		t.Errorf("a malformed origin was allowed: %+v", d)
	}
	// The fill port.
	in := fill.Inspection{Origins: []string{"https://bank.example"}}
	if then, ok, detail := pol.ThenFor(checked(t, "bank.example", "", fill.ThenNone), in); ok || then != "" || detail == "" {
		t.Errorf("ThenFor = %q %v %q; want refused", then, ok, detail)
	}
	if then, ok, _ := pol.ThenFor(checked(t, "bank.example", "", ""), in); !ok || then != fill.ThenSubmit {
		t.Errorf("ThenFor = %q %v; want submit", then, ok)
	}
	if then, _ := (*Policy)(nil).Then("https://github.com", ""); then != ThenSubmit {
		t.Errorf("nil policy: %q", then)
	}
}

func TestRuleThenValidates(t *testing.T) {
	p := Default()
	p.Rules = []Rule{{Service: "github.com", Then: "later"}}
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "then") {
		t.Fatalf("Validate = %v; want an error about then", err)
	}
}
