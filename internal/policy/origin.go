package policy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/fillgate/fillgate/internal/dnsname"
	"golang.org/x/net/publicsuffix"
)

// origin is a parsed web origin as browsers serialise it
// (`location.origin`): scheme, host and a non-default port.
type origin struct {
	scheme string // "https" or "http"
	host   host
	port   string // "" for the scheme's default port
}

// errOpaque is the error for the opaque origin "null" (sandboxed frames,
// data: and file: documents).
var errOpaque = errors.New("an opaque origin (null), as sandboxed frames and data: or file: pages have")

// parseOrigin parses s, which must be exactly the browser's serialisation
// of a http or https origin: lower case, no trailing slash, path, user info
// or trailing dot, a default port left out, IP addresses in canonical form.
// Anything else is refused, since a browser never reports it.
func parseOrigin(s string) (origin, error) {
	if s == "null" {
		return origin{}, errOpaque
	}
	if len(s) > maxHostLen+len("https://:65535")+2 {
		return origin{}, errors.New("too long to be an origin")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return origin{}, errors.New("not an origin (scheme://host)")
	}
	if scheme != "https" && scheme != "http" {
		return origin{}, fmt.Errorf("not a web page (scheme %s)", quote(scheme))
	}
	if strings.ContainsAny(rest, "/?#@\\") {
		return origin{}, errors.New("not an origin: it has a path, query or user info")
	}
	hostText, port, err := splitHostPort(rest)
	if err != nil {
		return origin{}, err
	}
	if err := checkPort(scheme, port); err != nil {
		return origin{}, err
	}
	h, err := originHost(hostText)
	if err != nil {
		return origin{}, err
	}
	return origin{scheme: scheme, host: h, port: port}, nil
}

// String returns the serialised origin.
func (o origin) String() string {
	h := o.host.String()
	if o.host.ip.Is6() {
		h = "[" + h + "]"
	}
	if o.port != "" {
		h += ":" + o.port
	}
	return o.scheme + "://" + h
}

// splitHostPort splits "host", "host:port", "[v6]" or "[v6]:port".
func splitHostPort(s string) (hostText, port string, err error) {
	if v6, ok := strings.CutPrefix(s, "["); ok {
		addr, after, ok := strings.Cut(v6, "]")
		if !ok {
			return "", "", errors.New("not an origin: unclosed [")
		}
		if !strings.Contains(addr, ":") {
			// Browsers bracket IPv6 addresses only: "[github.com]" is
			// no origin, though the name inside would pass.
			return "", "", errors.New("not an origin: brackets hold only an IPv6 address")
		}
		if after == "" {
			return addr, "", nil
		}
		port, ok := strings.CutPrefix(after, ":")
		if !ok || port == "" {
			return "", "", errors.New("not an origin: text after ]")
		}
		return addr, port, nil
	}
	if strings.Count(s, ":") > 1 {
		return "", "", errors.New("not an origin: an IPv6 address must be in brackets")
	}
	hostText, port, hasPort := strings.Cut(s, ":")
	if hasPort && port == "" {
		return "", "", errors.New("not an origin: an empty port")
	}
	return hostText, port, nil
}

// checkPort accepts "" or a canonical port number that is not the scheme's
// default (browsers leave the default out).
func checkPort(scheme, port string) error {
	if port == "" {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '0' || strconv.Itoa(n) != port {
		return fmt.Errorf("not an origin: bad port %s", quote(port))
	}
	if scheme == "https" && n == 443 || scheme == "http" && n == 80 {
		return errors.New("not as a browser writes it: the default port is spelled out")
	}
	return nil
}

// originHost parses an origin's host, which must already be canonical.
func originHost(s string) (host, error) {
	if s == "" {
		return host{}, errors.New("not an origin: no host")
	}
	if err := hostShape(s); err != nil {
		return host{}, fmt.Errorf("host %s: %w", quote(s), err)
	}
	if s != strings.ToLower(s) {
		return host{}, fmt.Errorf("host %s is not written as a browser writes it (upper case)", quote(s))
	}
	if strings.HasSuffix(s, ".") {
		return host{}, fmt.Errorf("host %s ends in a dot; open the page without the trailing dot", quote(s))
	}
	var h host
	var err error
	if strings.Contains(s, ":") || isDottedNumbers(s) {
		h, err = parseIP(s)
	} else {
		h, err = host{name: s}, dnsname.Check(s)
	}
	if err != nil {
		return host{}, fmt.Errorf("host %s: %w", quote(s), err)
	}
	if h.String() != s {
		return host{}, fmt.Errorf("host %s is not written as a browser writes it", quote(s))
	}
	return h, nil
}

// transport refuses an origin that is not https, or http on a loopback
// host. The error is a sentence fragment about o.
func (o origin) transport() error {
	if o.host.loopback() || o.scheme == "https" {
		return nil
	}
	return errors.New("is not https (plain http is allowed only on localhost and loopback addresses)")
}

// effectivePort is the port o's page is on, the scheme's default included.
func (o origin) effectivePort() string {
	switch {
	case o.port != "":
		return o.port
	case o.scheme == "http":
		return "80"
	}
	return "443"
}

// onPort refuses an origin that is not on the service's port: exactly the
// port the service names, or with no port named, the default port (any
// port on a loopback host). The error is a sentence fragment about o.
func (o origin) onPort(svc service) error {
	switch {
	case svc.port != "" && o.effectivePort() != svc.port:
		return fmt.Errorf("is on port %s, not %s's port %s", o.effectivePort(), svc, svc.port)
	case svc.port == "" && o.port != "" && !svc.host.loopback():
		return fmt.Errorf("is on port %s, and a service without a port covers only the default port (ask for %s:%s to fill there)", o.port, svc, o.port)
	}
	return nil
}

// belongsTo refuses an origin whose host is not the service or a name
// under it (only the service itself when it is exactHost), or is under it
// only across a public suffix: with service amazonaws.com,
// bucket.s3.amazonaws.com is refused because s3.amazonaws.com is a public
// suffix whose names belong to other owners. It does not look at the port
// (see onPort). The error is a sentence fragment about o.
func (o origin) belongsTo(svc service) error {
	if svc.exactHost && o.host != svc.host {
		return fmt.Errorf("is not %s itself (the policy allows %s on that exact host only, not its subdomains)", svc.host, svc)
	}
	if !svc.host.covers(o.host) {
		return fmt.Errorf("is not %s or a subdomain of it", svc.host)
	}
	if o.host.ip.IsValid() || isLocalhost(o.host.name) {
		return nil
	}
	if ps, _ := publicsuffix.PublicSuffix(o.host.name); len(ps) >= len(svc.host.name) {
		return fmt.Errorf("is under the public suffix %s, so it belongs to another owner than %s", ps, svc.host)
	}
	return nil
}

// serviceOf is the service that names o's host and port exactly: the host,
// with the port when it is not the default.
func (o origin) serviceOf() service {
	return service{host: o.host, port: o.port, exactHost: true}
}
