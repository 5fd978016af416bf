package policy

import (
	"testing"
	"time"
)

const settingsText = `
[service."example.com"]
approval = "lease"
remember = false
[service."example.com".password]
source = "pass"
entry = "example/parent"

[service."login.example.com"]
approval = "none"
[service."login.example.com".otp]
source = "keyring"

[service."wide.example"]
approval = "none"

[service."nas.lan:8443"]
approval = "none"
lease = "5m"
`

func TestSettings(t *testing.T) {
	// lease without approval = "lease" is an error; the case below needs a
	// lease on an approval = "none" rule, so it is built from two files.
	if _, err := Parse("t", []byte(settingsText)); err == nil {
		t.Fatal("a lease without approval = \"lease\" was accepted")
	}
	p := mustParse(t, settingsText[:len(settingsText)-len("lease = \"5m\"\n")]+
		"\n[service.\"localhost\"]\napproval = \"none\"\n[service.\"localhost:3000\"]\napproval = \"lease\"\nlease = \"1h\"\n")
	cases := []struct {
		name, service, origin, field string
		want                         Settings
	}{
		{"no rule", "github.com", "https://github.com", fieldPassword, Settings{Approval: ApprovalEach, Remember: true}},
		{"parent rule", "example.com", "https://example.com", fieldPassword,
			Settings{Approval: ApprovalLease, Lease: DefaultLease, Remember: false, ApprovalFrom: "example.com", Source: &Source{Store: StorePass, Entry: "example/parent"}}},
		{"parent rule on a subdomain", "example.com", "https://www.example.com", fieldPassword,
			Settings{Approval: ApprovalLease, Lease: DefaultLease, Remember: false, ApprovalFrom: "example.com", Source: &Source{Store: StorePass, Entry: "example/parent"}}},
		{"parent rule, otp has no source", "example.com", "https://example.com", fieldOTP,
			Settings{Approval: ApprovalLease, Lease: DefaultLease, Remember: false, ApprovalFrom: "example.com"}},
		{"exact none; the rest inherited", "login.example.com", "https://login.example.com", fieldPassword,
			Settings{Approval: ApprovalNone, Remember: false, ApprovalFrom: "login.example.com", Source: &Source{Store: StorePass, Entry: "example/parent"}}},
		{"exact none, the agent named the parent", "example.com", "https://login.example.com", fieldOTP,
			Settings{Approval: ApprovalNone, Remember: false, ApprovalFrom: "login.example.com", Source: &Source{Store: StoreKeyring}}},
		{"none is never for a subdomain", "login.example.com", "https://a.login.example.com", fieldPassword,
			Settings{Approval: ApprovalEach, Remember: false, ApprovalFrom: "login.example.com", Source: &Source{Store: StorePass, Entry: "example/parent"}}},
		{"none is never for a subdomain, without other rules", "wide.example", "https://www.wide.example", fieldPassword,
			Settings{Approval: ApprovalEach, Remember: true, ApprovalFrom: "wide.example"}},
		{"none with its port", "nas.lan:8443", "https://nas.lan:8443", fieldPassword,
			Settings{Approval: ApprovalNone, Remember: true, ApprovalFrom: "nas.lan:8443"}},
		{"none on loopback needs the port named", "localhost", "http://localhost:8080", fieldPassword,
			Settings{Approval: ApprovalEach, Remember: true, ApprovalFrom: "localhost"}},
		{"none on loopback default port", "localhost", "http://localhost", fieldPassword,
			Settings{Approval: ApprovalNone, Remember: true, ApprovalFrom: "localhost"}},
		{"the rule naming the port wins", "localhost:3000", "http://localhost:3000", fieldPassword,
			Settings{Approval: ApprovalLease, Lease: time.Hour, Remember: true, ApprovalFrom: "localhost:3000"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := base()
			in.Service, in.Origins, in.Field, in.FieldKind = c.service, []string{c.origin}, c.field, c.field
			d := p.Evaluate(in)
			if !d.Allow {
				t.Fatalf("Evaluate refused: %s", d.Detail)
			}
			got := d.Settings
			if got.Approval != c.want.Approval || got.Lease != c.want.Lease || got.Remember != c.want.Remember ||
				got.ApprovalFrom != c.want.ApprovalFrom || (got.Source == nil) != (c.want.Source == nil) ||
				got.Source != nil && *got.Source != *c.want.Source {
				t.Fatalf("Settings = %+v (source %+v); want %+v (source %+v)", got, got.Source, c.want, c.want.Source)
			}
		})
	}
	// A refusal carries no settings.
	in := base()
	in.Service, in.Origins = "login.example.com", []string{"https://evil.test"}
	if d := p.Evaluate(in); d.Allow || d.Settings != (Settings{}) {
		t.Fatalf("a refusal carries settings: %+v", d)
	}
	// The source is a copy: changing it does not change the policy.
	in = base()
	in.Service, in.Origins = "example.com", []string{"https://example.com"}
	p.Evaluate(in).Settings.Source.Entry = "changed"
	if p.Evaluate(in).Settings.Source.Entry != "example/parent" {
		t.Fatal("Settings.Source shares memory with the policy")
	}
}
