package policy

import (
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

func TestFillPort(t *testing.T) {
	p := Default()
	if s, err := p.NormalizeService("GitHub.com"); err != nil || s != "github.com" {
		t.Fatalf("NormalizeService: %q %v", s, err)
	}
	if _, err := p.NormalizeService("co.uk"); err == nil {
		t.Fatal("co.uk accepted")
	}
	in := fill.Inspection{Origins: []string{"https://github.com"}, Field: fill.FieldInfo{Kind: fill.FieldPassword}}
	if ok, detail := p.Decide("github.com", fill.FieldPassword, fill.Agent{}, in, fill.ViaExtension); !ok {
		t.Fatalf("refused: %s", detail)
	}
	in.Origins = []string{"https://github.com.evil.test"}
	if ok, detail := p.Decide("github.com", fill.FieldPassword, fill.Agent{}, in, fill.ViaExtension); ok || !strings.Contains(detail, "github.com.evil.test") {
		t.Fatalf("look-alike: %v %q", ok, detail)
	}
	if l := p.Limits(); l.PromptBudget != p.PromptBudget || l.Cooldown != p.NoResponseCooldown || l.InspectBudget == 0 {
		t.Fatalf("limits %+v", l)
	}
}
