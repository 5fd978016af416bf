package policy

import (
	"cmp"
	"slices"
	"time"
)

// Settings are the person's settings for one fill, from the rules that
// cover the page. Evaluate puts them in an allowing Decision; the agent
// never sees or chooses them.
type Settings struct {
	// Approval is ApprovalEach, ApprovalLease or ApprovalNone.
	// ApprovalNone only ever comes from a rule whose service is exactly
	// the page's host and port; a rule that covers the page as a
	// subdomain, or that names no port while the page's port is not the
	// default, gives ApprovalEach instead.
	Approval string
	// Lease is how long one approval lasts, with ApprovalLease.
	Lease time.Duration
	// Remember reports whether the prompt may offer to remember a typed
	// value in the OS keyring.
	Remember bool
	// Source is where the value for the field asked for comes from; nil
	// means the prompt: the person types it, or approves one remembered
	// in the OS keyring.
	Source *Source
	// ApprovalFrom is the service of the rule that set Approval, "" when
	// none did.
	ApprovalFrom string
	// Driven is the rules' driven setting, "" when none sets one (the
	// policy's own applies).
	Driven string
}

// settingsFor works out the settings for a fill of field into a page of
// origin o, from the rules that cover it (rulesFor). Each setting comes
// from the most specific rule that sets it: the longest host, and a rule
// naming the port before one that does not.
func settingsFor(o origin, field string, covering []*Rule) Settings {
	s := Settings{Approval: ApprovalEach, Remember: true}
	type ranked struct {
		r    *Rule
		rank int
	}
	rs := make([]ranked, len(covering))
	for i, r := range covering {
		rs[i] = ranked{r, specificity(r)}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int { return -cmp.Compare(a.rank, b.rank) })
	rules := make([]*Rule, len(rs))
	for i := range rs {
		rules[i] = rs[i].r
	}
	approvalSet, rememberSet := false, false
	exact := o.serviceOf().String()
	for _, r := range rules {
		if !approvalSet && r.Approval != "" {
			approvalSet = true
			s.Approval, s.ApprovalFrom = r.Approval, r.Service
			switch {
			case r.Approval == ApprovalNone && r.Service != exact:
				s.Approval = ApprovalEach
			case r.Approval == ApprovalLease:
				s.Lease = cmp.Or(r.Lease, DefaultLease)
			}
		}
		if s.Driven == "" {
			s.Driven = r.Driven
		}
		if !rememberSet && r.Remember != nil {
			rememberSet = true
			s.Remember = *r.Remember
		}
		src := r.Password
		switch field {
		case fieldOTP:
			src = r.OTP
		case fieldPasskey:
			src = nil // kept in the OS keyring, always
		}
		if s.Source == nil && src != nil {
			c := *src
			s.Source = &c
		}
	}
	return s
}

// specificity ranks rules covering the same page: a longer host is more
// specific, and with the same host, naming the port is.
func specificity(r *Rule) int {
	svc, err := splitService(r.Service)
	if err != nil {
		return -1
	}
	n := 2 * len(svc.host.String())
	if svc.port != "" {
		n++
	}
	return n
}

// scope returns the service a rule covers, with its subdomains setting
// (the rule's service was checked when the policy was read or validated).
func (r *Rule) scope() (service, error) {
	svc, err := splitService(r.Service)
	svc.exactHost = r.Subdomains != nil && !*r.Subdomains
	return svc, err
}

// covers reports whether the rule applies to a page of origin o: o's host
// is the rule's service or (unless subdomains = false) a name under it, on
// the rule's port.
func (r *Rule) covers(o origin) bool {
	svc, err := r.scope()
	if err != nil {
		return false
	}
	if svc.exactHost && o.host != svc.host || !svc.host.covers(o.host) {
		return false
	}
	return o.onPort(svc) == nil
}

// exactHost reports whether the rule for exactly the service svc (in
// canonical form) says subdomains = false.
func (p *Policy) exactHost(svc string) bool {
	for i := range p.Rules {
		if r := &p.Rules[i]; r.Service == svc {
			return r.Subdomains != nil && !*r.Subdomains
		}
	}
	return false
}
