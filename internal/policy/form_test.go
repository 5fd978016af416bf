package policy

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// TestEvaluateForm: where the focused field's form sends the value.
func TestEvaluateForm(t *testing.T) {
	form := func(ds ...Destination) *Form { return &Form{Destinations: ds} }
	dest := func(action, target string) Destination { return Destination{Action: action, Target: target} }
	button := func(action, target string) Destination {
		return Destination{Action: action, Target: target, Button: true}
	}
	cases := []struct {
		name    string
		origins []string
		form    *Form
		detail  string // "" means allowed
	}{
		{"no form", nil, nil, ""},
		{"posts to the page's origin", nil, form(dest("https://github.com", "")), ""},
		{"posts to a subdomain", nil, form(dest("https://api.github.com", "")), ""},
		{"button posts to the service", nil, form(dest("https://github.com", ""), button("https://github.com", "_self")), ""},
		{"_top in the top frame", nil, form(dest("https://github.com", "_TOP")), ""},
		{"_parent in the top frame", nil, form(dest("https://github.com", "_parent")), ""},
		{"_self in upper case", nil, form(dest("https://github.com", "_SELF")), ""},
		{"another origin", nil, form(dest("https://evil.test", "")), "sends it to https://evil.test, which is not github.com"},
		{"a look-alike", nil, form(dest("https://github.com.evil.test", "")), "not github.com or a subdomain"},
		{"plain http", nil, form(dest("http://github.com", "")), "is not https"},
		{"non-default port", nil, form(dest("https://github.com:8443", "")), "on port 8443, and a service without a port covers only the default port"},
		{"not http(s)", nil, form(dest("null", "")), "not http or https"},
		{"not an origin", nil, form(dest("https://github.com/login", "")), "not a web page on github.com"},
		{"formaction elsewhere", nil, form(dest("https://github.com", ""), button("https://evil.test", "")), "submit button of the form"},
		{"target another frame", nil, form(dest("https://github.com", "evilframe")), `another frame or window (target "evilframe")`},
		{"target a new window", nil, form(dest("https://github.com", "_blank")), `target "_blank"`},
		{"formtarget a frame", nil, form(dest("https://github.com", ""), button("https://github.com", "side")), `submit button`},
		{"_top in a frame", []string{"https://github.com", "https://github.com"}, form(dest("https://github.com", "_top")), `target "_top"`},
		{"_parent in a frame", []string{"https://github.com", "https://github.com"}, form(dest("https://github.com", "_parent")), `target "_parent"`},
		{"_self in a frame", []string{"https://github.com", "https://github.com"}, form(dest("https://github.com", "_self")), ""},
		{"form= elsewhere", nil, &Form{Destinations: []Destination{dest("https://github.com", "")}, Elsewhere: true}, "belongs to a form elsewhere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base()
			if c.origins != nil {
				in.Origins = c.origins
			}
			in.Form = c.form
			d := Default().Evaluate(in)
			if c.detail == "" {
				if !d.Allow {
					t.Fatalf("refused: %s", d.Detail)
				}
				return
			}
			if d.Allow || d.Check != CheckForm || !strings.Contains(d.Detail, c.detail) {
				t.Fatalf("got %+v; want a %s refusal saying %q", d, CheckForm, c.detail)
			}
		})
	}
}

// TestEvaluateFormOnLoopback: http is allowed on loopback, as for pages.
func TestEvaluateFormOnLoopback(t *testing.T) {
	in := base()
	in.Service, in.Origins = "127.0.0.1", []string{"http://127.0.0.1:8080"}
	in.Form = &Form{Destinations: []Destination{{Action: "http://127.0.0.1:8080"}}}
	if d := Default().Evaluate(in); !d.Allow {
		t.Fatalf("refused: %s", d.Detail)
	}
	in.Form.Destinations[0].Action = "http://127.0.0.2:8080"
	if d := Default().Evaluate(in); d.Allow || d.Check != CheckForm {
		t.Fatalf("another loopback address allowed: %+v", d)
	}
}

// TestDecidePassesTheForm: the fill port hands the inspected form to
// Evaluate, the default submit button's destination included.
func TestDecidePassesTheForm(t *testing.T) {
	in := fill.Inspection{Origins: []string{"https://github.com"}, Field: fill.FieldInfo{Kind: fill.FieldPassword},
		Form: &fill.FormInfo{Destination: fill.Destination{Action: "https://github.com"}}}
	p := Default()
	if ok, detail := p.Decide(checked(t, "github.com", fill.FieldPassword, ""), fill.Agent{}, in, fill.ViaExtension); !ok {
		t.Fatalf("refused: %s", detail)
	}
	for name, f := range map[string]*fill.FormInfo{
		"action":    {Destination: fill.Destination{Action: "https://evil.test"}},
		"target":    {Destination: fill.Destination{Action: "https://github.com", Target: "x"}},
		"submitter": {Destination: fill.Destination{Action: "https://github.com"}, Submitter: &fill.Destination{Action: "https://evil.test"}},
		"elsewhere": {Destination: fill.Destination{Action: "https://github.com"}, Elsewhere: true},
		"method":    {Destination: fill.Destination{Action: "https://github.com", Method: fill.MethodGet}},
	} {
		i := in
		i.Form = f
		if ok, _ := p.Decide(checked(t, "github.com", fill.FieldPassword, ""), fill.Agent{}, i, fill.ViaExtension); ok {
			t.Errorf("%s: allowed", name)
		}
	}
}
