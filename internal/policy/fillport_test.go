package policy

import (
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

// TestDecideMapsEveryInput proves that each part of the request and of the
// browser's inspection reaches Evaluate through the fill port.
func TestDecideMapsEveryInput(t *testing.T) {
	p := mustParse(t, rulesText)
	in := fill.Inspection{
		Origins: []string{"https://guarded.example"},
		Field:   fill.FieldInfo{Kind: fill.FieldPassword},
	}
	agent := fill.Agent{Name: "agent", PID: 1, Exe: osPath("/usr/bin/agent")}
	if ok, detail := p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), agent, in, fill.ViaExtension); !ok {
		t.Fatalf("Decide refused: %s", detail)
	}
	refusals := map[string]func() (bool, string){
		"agent": func() (bool, string) {
			a := agent
			a.Exe = osPath("/usr/bin/other")
			return p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), a, in, fill.ViaExtension)
		},
		"via": func() (bool, string) {
			return p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), agent, in, fill.ViaCDP)
		},
		"origin": func() (bool, string) {
			return p.Decide(checked(t, "github.com", fill.FieldPassword, ""), agent, in, fill.ViaExtension)
		},
		"frames": func() (bool, string) {
			i := in
			i.Origins = []string{"https://guarded.example", "https://evil.test"}
			return p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), agent, i, fill.ViaExtension)
		},
		"kind": func() (bool, string) {
			i := in
			i.Field.Kind = fill.FieldOther
			return p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), agent, i, fill.ViaExtension)
		},
		"split": func() (bool, string) {
			i := in
			i.Field.Split = 6
			return p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), agent, i, fill.ViaExtension)
		},
		"problem": func() (bool, string) {
			i := in
			i.Field.Problem = "covered"
			return p.Decide(checked(t, "guarded.example", fill.FieldPassword, ""), agent, i, fill.ViaExtension)
		},
	}
	for name, f := range refusals {
		if ok, detail := f(); ok || detail == "" {
			t.Errorf("%s: Decide = %v, %q; want a refusal with a detail", name, ok, detail)
		}
	}
}
