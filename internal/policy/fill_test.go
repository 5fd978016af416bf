package policy

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

func TestFillPort(t *testing.T) {
	p := Default()
	// The door (fill.Check) takes NormalizeService for the service.
	if c, err := fill.Check(fill.Request{Service: "GitHub.com"}, NormalizeService); err != nil || c.Request().Service != "github.com" {
		t.Fatalf("Check: %+v %v", c, err)
	}
	if _, err := fill.Check(fill.Request{Service: "co.uk"}, NormalizeService); err == nil || !strings.Contains(err.Error(), "public suffix") {
		t.Fatalf("co.uk: %v", err)
	}
	in := fill.Inspection{Origins: []string{"https://github.com"}, Field: fill.FieldInfo{Kind: fill.FieldPassword}}
	if ok, detail := p.Decide(checked(t, "github.com", fill.FieldPassword, ""), fill.Agent{}, in, fill.ViaExtension); !ok {
		t.Fatalf("refused: %s", detail)
	}
	in.Origins = []string{"https://github.com.evil.test"}
	if ok, detail := p.Decide(checked(t, "github.com", fill.FieldPassword, ""), fill.Agent{}, in, fill.ViaExtension); ok || !strings.Contains(detail, "github.com.evil.test") {
		t.Fatalf("look-alike: %v %q", ok, detail)
	}
	if l := p.Limits(); l.PromptBudget != p.PromptBudget || l.Cooldown != p.NoResponseCooldown || l.InspectBudget == 0 {
		t.Fatalf("limits %+v", l)
	}
}

// checked is a request for service, field and then through the door,
// which it must pass.
func checked(t testing.TB, service, field, then string) fill.Checked {
	t.Helper()
	c, err := fill.Check(fill.Request{Service: service, Field: field, Then: then}, NormalizeService)
	if err != nil {
		t.Fatalf("fill.Check(%s): %v", service, err)
	}
	return c
}
