package policy

import "fmt"

// CheckThen is the check that refuses what the agent asked to follow the
// insert (Decision.Check).
const CheckThen = "then"

// Then decides what follows the insert on a page whose focused frame has
// origin focused, when the agent asked for asked (ThenSubmit or ThenNone;
// "" means ThenSubmit). It is a pure function of p and its arguments.
//
// The rule, for the rules that apply to the page (as for Evaluate):
//   - a rule with then = submit makes fillgate submit, so the value never
//     stays in the page: an agent asking for none is refused;
//   - otherwise a rule with then = none makes fillgate never submit for
//     that service, whatever the agent asked (the person decided that
//     this site's forms are submitted by hand);
//   - otherwise the agent's choice holds.
//
// The stricter setting wins: submit in any applying rule beats none in
// another. The Decision's Detail explains a refusal; on success it is
// empty and the effective value is returned.
func (p *Policy) Then(focused, asked string) (string, Decision) {
	if p == nil {
		p = Default()
	}
	switch asked {
	case "":
		asked = ThenSubmit
	case ThenSubmit, ThenNone:
	default:
		return "", refuse(CheckThen, "What follows the insert, %s, is not valid; ask for submit or none.", quote(asked))
	}
	o, err := parseOrigin(focused)
	if err != nil {
		return "", refuse(CheckOrigin, "The focused frame's origin %s is refused: %v.", quote(focused), err)
	}
	var submit, none *Rule
	for _, r := range p.rulesFor(o) {
		switch r.Then {
		case ThenSubmit:
			submit = firstRule(submit, r)
		case ThenNone:
			none = firstRule(none, r)
		}
	}
	switch {
	case submit != nil && asked == ThenNone:
		return "", refuse(CheckThen, "The policy has fillgate submit the form for %s (then = \"submit\"), so the value never stays in the page; nothing was asked. Ask again without then none.", submit.Service)
	case submit != nil:
		return ThenSubmit, Decision{Allow: true}
	case none != nil:
		return ThenNone, Decision{Allow: true, Detail: fmt.Sprintf("The policy has fillgate leave the form unsubmitted for %s (then = \"none\").", none.Service)}
	}
	return asked, Decision{Allow: true}
}

// firstRule keeps the first rule found.
func firstRule(kept, r *Rule) *Rule {
	if kept != nil {
		return kept
	}
	return r
}
