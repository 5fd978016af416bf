package policy

import (
	"fmt"

	"github.com/fillgate/fillgate/internal/fill"
)

// The Policy is the fill flow's policy port.
var _ fill.Policy = (*Policy)(nil)

// Decide implements fill.Policy: it evaluates what the browser reported
// about the focused field against the request.
func (p *Policy) Decide(req fill.Checked, agent fill.Agent, in fill.Inspection, via string) (bool, string) {
	r := req.Request()
	d := p.Evaluate(fillInput(r.Service, r.Field, agent, in, via))
	return d.Allow, d.Detail
}

// Settings returns the person's settings (approval, lease, where the
// value comes from, remembering) for a fill the policy allows on the
// inspected page, as Evaluate puts them in its Decision; false when the
// policy does not allow the fill.
func (p *Policy) Settings(service, field string, agent fill.Agent, in fill.Inspection, via string) (Settings, bool) {
	d := p.Evaluate(fillInput(service, field, agent, in, via))
	return d.Settings, d.Allow
}

// fillInput is what Evaluate decides on for a fill.
func fillInput(service, field string, agent fill.Agent, in fill.Inspection, via string) Input {
	return Input{
		Service:      service,
		Field:        field,
		Origins:      in.Origins,
		FieldKind:    in.Field.Kind,
		FieldSplit:   in.Field.Split,
		FieldProblem: in.Field.Problem,
		Form:         formInput(in.Form),
		AgentExe:     agent.Exe,
		Via:          via,
	}
}

// formInput is what Evaluate needs of the inspected form.
func formInput(f *fill.FormInfo) *Form {
	if f == nil {
		return nil
	}
	out := &Form{Elsewhere: f.Elsewhere}
	for i, d := range f.Destinations() {
		out.Destinations = append(out.Destinations, Destination{Action: d.Action, Target: d.Target, Method: d.Method, Button: i > 0})
	}
	return out
}

// ThenFor implements fill.Policy: what follows the insert on the inspected
// page, by (*Policy).Then of the focused frame's origin.
func (p *Policy) ThenFor(req fill.Checked, in fill.Inspection) (string, bool, string) {
	then, d := p.Then(in.Origin(), req.Request().Then)
	return then, d.Allow, d.Detail
}

// DrivenMode implements fill.Policy: how a browser a program can drive is
// logged in to for the inspected page: the most specific covering rule's
// driven setting, else the policy's own (DrivenCleanRoom by default).
func (p *Policy) DrivenMode(req fill.Checked, in fill.Inspection) string {
	mode := p.Driven
	if o, err := parseOrigin(in.Origin()); err == nil {
		if d := settingsFor(o, req.Request().Field, p.rulesFor(o)).Driven; d != "" {
			mode = d
		}
	}
	if mode == "" {
		return DrivenCleanRoom
	}
	return mode
}

// Limits are the fill flow's budgets under this policy.
func (p *Policy) Limits() fill.Limits {
	l := fill.DefaultLimits()
	l.PromptBudget = p.PromptBudget
	l.Cooldown = p.NoResponseCooldown
	l.RateLimit = p.RateLimit
	l.RateWindow = p.RateWindow
	return l
}

// Refusal is the result of a request made while the policy file at path
// does not load: every request is refused, never run under the defaults.
func Refusal(path, service, via string) fill.Result {
	return fill.Result{Status: fill.StatusRefused, Service: service, Via: via,
		Detail: fmt.Sprintf("the policy file %s is not valid; run `fillgate policy check` to see why", path)}
}
