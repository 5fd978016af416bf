package policy

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// TestMethodsMatchFill keeps the form methods the policy reads the same as
// the ones internal/fill carries.
func TestMethodsMatchFill(t *testing.T) {
	for _, c := range [][2]string{
		{methodPost, fill.MethodPost},
		{methodGet, fill.MethodGet},
		{methodDialog, fill.MethodDialog},
	} {
		if c[0] != c[1] {
			t.Errorf("policy has %q where fill has %q", c[0], c[1])
		}
	}
}

// TestEvaluateFormMethod: a form whose submission would put the value in
// its URL is refused before anything is asked, whichever of its
// destinations would; post, dialog and a method the page does not name
// (on a page with script) are allowed.
func TestEvaluateFormMethod(t *testing.T) {
	const here = "https://github.com"
	dest := func(method string) Destination { return Destination{Action: here, Method: method} }
	button := func(method string) Destination { return Destination{Action: here, Method: method, Button: true} }
	const inURL = "would put the value in its URL (method=get"
	cases := []struct {
		name   string
		dests  []Destination
		check  string // "" means allowed
		detail string
	}{
		{"post", []Destination{dest("post")}, "", ""},
		{"post, button post", []Destination{dest("post"), button("post")}, "", ""},
		{"no method named", []Destination{dest("")}, "", ""},
		{"no method named, button too", []Destination{dest(""), button("")}, "", ""},
		{"dialog", []Destination{dest("dialog"), button("dialog")}, "", ""},
		{"POST in upper case", []Destination{dest("POST")}, "", ""},
		{"get", []Destination{dest("get")}, CheckMethod, "The form around the focused field on " + here + " " + inURL},
		{"GET in upper case", []Destination{dest("GET")}, CheckMethod, inURL},
		{"get, button post", []Destination{dest("get"), button("post")}, CheckMethod, "The form around"},
		{"post, button formmethod=get", []Destination{dest("post"), button("get")}, CheckMethod, "The submit button of the form around the focused field on " + here + " " + inURL},
		{"dialog, button formmethod=get", []Destination{dest("dialog"), button("get")}, CheckMethod, "The submit button"},
		{"no method, button get", []Destination{dest(""), button("get")}, CheckMethod, "The submit button"},
		{"an unknown method", []Destination{dest("put")}, CheckMethod, `a method the browser reported as "put", not post, get or dialog`},
		{"an unknown method on the button", []Destination{dest("post"), button("get ")}, CheckMethod, `reported as "get "`},
		// Where the value goes is checked before how: the graver reason wins.
		{"get to another origin", []Destination{{Action: "https://evil.test", Method: "get"}}, CheckForm, "sends it to https://evil.test"},
		{"get into another frame", []Destination{{Action: here, Target: "side", Method: "get"}}, CheckForm, `target "side"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base()
			in.Form = &Form{Destinations: c.dests}
			d := Default().Evaluate(in)
			if c.check == "" {
				if !d.Allow {
					t.Fatalf("refused: %s", d.Detail)
				}
				return
			}
			if d.Allow || d.Check != c.check || !strings.Contains(d.Detail, c.detail) || !strings.HasSuffix(d.Detail, ".") {
				t.Fatalf("got %+v; want a %s refusal saying %q", d, c.check, c.detail)
			}
			if c.check == CheckMethod && !strings.Contains(d.Detail, "nothing was asked") {
				t.Errorf("the refusal does not say nothing was asked: %s", d.Detail)
			}
		})
	}
}

// TestEvaluateFormMethodOnLoopback: a GET form is refused on loopback
// and over http as well; the method is not a matter of transport.
func TestEvaluateFormMethodOnLoopback(t *testing.T) {
	in := base()
	in.Service, in.Origins = "127.0.0.1", []string{"http://127.0.0.1:8080"}
	in.Form = &Form{Destinations: []Destination{{Action: "http://127.0.0.1:8080", Method: methodGet}}}
	if d := Default().Evaluate(in); d.Allow || d.Check != CheckMethod {
		t.Fatalf("a GET form on loopback: %+v", d)
	}
}

// TestDecidePassesTheMethod: the fill port hands each destination's method
// to Evaluate, the default submit button's included, and a refusal is the
// detail the agent reads.
func TestDecidePassesTheMethod(t *testing.T) {
	in := fill.Inspection{Origins: []string{"https://github.com"}, Field: fill.FieldInfo{Kind: fill.FieldPassword}}
	p := Default()
	for _, c := range []struct {
		name  string
		form  *fill.FormInfo
		allow bool
	}{
		{"post", &fill.FormInfo{Destination: fill.Destination{Action: "https://github.com", Method: fill.MethodPost}}, true},
		{"unnamed", &fill.FormInfo{Destination: fill.Destination{Action: "https://github.com"}}, true},
		{"dialog", &fill.FormInfo{Destination: fill.Destination{Action: "https://github.com", Method: fill.MethodDialog}}, true},
		{"get", &fill.FormInfo{Destination: fill.Destination{Action: "https://github.com", Method: fill.MethodGet}}, false},
		{"submitter get", &fill.FormInfo{Destination: fill.Destination{Action: "https://github.com", Method: fill.MethodPost},
			Submitter: &fill.Destination{Action: "https://github.com", Method: fill.MethodGet}}, false},
	} {
		i := in
		i.Form = c.form
		ok, detail := p.Decide(checked(t, "github.com", fill.FieldPassword, ""), fill.Agent{}, i, fill.ViaExtension)
		if ok != c.allow {
			t.Errorf("%s: allowed %v (%s); want %v", c.name, ok, detail, c.allow)
		}
		if !c.allow && !strings.Contains(detail, "would put the value in its URL") {
			t.Errorf("%s: detail %q does not say why", c.name, detail)
		}
		if _, allowed := p.Settings("github.com", fill.FieldPassword, fill.Agent{}, i, fill.ViaCDP); allowed != c.allow {
			t.Errorf("%s: Settings allowed %v; want %v", c.name, allowed, c.allow)
		}
	}
}
