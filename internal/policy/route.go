package policy

// Serves reports whether a focused field of kind fieldKind in a frame of
// origin is a field the agent may ask to fill for service: the origin is
// the service (or under it) over an allowed transport, and the kind is the
// one asked for. Routing uses it to pick one of several browsers before
// the chosen browser's host runs the full Evaluate.
func (p *Policy) Serves(service, field, origin, fieldKind string) bool {
	if p == nil {
		p = Default()
	}
	svc, err := parseService(service)
	if err != nil || (field != fieldPassword && field != fieldOTP) || fieldKind != field {
		return false
	}
	svc.exactHost = p.exactHost(svc.String())
	o, err := parseOrigin(origin)
	if err != nil {
		return false
	}
	_, ok := matchService(o, svc, CheckOrigin, "")
	return ok
}
