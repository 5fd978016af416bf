package policy

import (
	"strings"
	"testing"
)

// A passkey request is judged on the tab's top page alone: the service's
// origin rules and the rules that hold, no field and no form; and its
// settings name no source (the passkey is kept in the OS keyring).
func TestEvaluatePasskey(t *testing.T) {
	rules := mustParse(t, rulesText+`
[service."keys.example"]
fields = ["passkey"]
approval = "none"

[service."pw.example"]
fields = ["password"]
[service."pw.example".password]
source = "pass"
entry = "x"
`)
	pk := func(service string, origins ...string) Input {
		return Input{Service: service, Field: fieldPasskey, Origins: origins, FieldKind: fieldNone, AgentExe: osPath("/usr/bin/agent"), Via: ViaExtension}
	}
	for _, tc := range []struct {
		name   string
		in     Input
		check  string
		detail string
	}{
		{"top page of the service", pk("github.com", "https://github.com"), "", "belongs to github.com"},
		{"subdomain", pk("github.com", "https://login.github.com"), "", ""},
		{"another site", pk("github.com", "https://evil.test"), CheckOrigin, "not github.com"},
		{"plain http", pk("github.com", "http://github.com"), CheckOrigin, ""},
		{"frames reported", pk("github.com", "https://github.com", "https://github.com"), CheckFrame, "top page"},
		{"a rule's fields list it", pk("keys.example", "https://keys.example"), "", ""},
		{"a rule's fields leave it out", pk("pw.example", "https://pw.example"), CheckField, "passkey"},
		{"a rule's agents", func() Input {
			in := pk("example.org", "https://example.org")
			in.AgentExe = "/usr/bin/other"
			return in
		}(), CheckAgent, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := rules.Evaluate(tc.in)
			if d.Allow != (tc.check == "") || d.Check != tc.check || !strings.Contains(d.Detail, tc.detail) {
				t.Fatalf("Evaluate = allow %v, check %q, %q; want check %q with %q", d.Allow, d.Check, d.Detail, tc.check, tc.detail)
			}
			if d.Allow && d.Settings.Source != nil {
				t.Fatalf("a passkey's settings name a source: %+v", d.Settings.Source)
			}
		})
	}
	if d := rules.Evaluate(pk("keys.example", "https://keys.example")); d.Settings.Approval != ApprovalNone {
		t.Fatalf("approval %q; want none", d.Settings.Approval)
	}
}
