package passkey

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/fillgate/fillgate/internal/dnsname"
	"golang.org/x/net/publicsuffix"
)

// maxHostLen is the longest DNS name, in its dotted ASCII form.
const maxHostLen = 253

// Origin is a page's origin that WebAuthn may run in: https on a DNS name,
// or http on localhost (or a name under it), which browsers treat as a
// secure context. An IP address is never one: WebAuthn needs a domain.
// The zero Origin is none; make one with ParseOrigin.
type Origin struct {
	scheme string // "https" or "http"
	host   string // lower-case ASCII DNS name, no trailing dot
	port   string // "" for the scheme's default port
}

// ParseOrigin parses s, which must be exactly the browser's serialisation
// of the origin (`location.origin`, the extension's sender.origin): lower
// case, punycode for an internationalised name, no trailing slash, path,
// user info or trailing dot, the default port left out. Anything else is
// refused, since a browser never reports it.
func ParseOrigin(s string) (Origin, error) {
	if len(s) > len("https://")+maxHostLen+len(":65535") {
		return Origin{}, errors.New("passkey: too long to be an origin")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Origin{}, fmt.Errorf("passkey: %s is not an origin (scheme://host)", quote(s))
	}
	if scheme != "https" && scheme != "http" {
		return Origin{}, fmt.Errorf("passkey: origin %s is not a web page", quote(s))
	}
	if strings.ContainsAny(rest, "/?#@\\[]") {
		return Origin{}, fmt.Errorf("passkey: %s is not an origin on a domain (a path, query, user info or IPv6 address)", quote(s))
	}
	host, port, hasPort := strings.Cut(rest, ":")
	if hasPort {
		if err := checkPort(scheme, port); err != nil {
			return Origin{}, fmt.Errorf("passkey: origin %s: %w", quote(s), err)
		}
	}
	if err := checkDomain(host); err != nil {
		return Origin{}, fmt.Errorf("passkey: origin %s: %w", quote(s), err)
	}
	if scheme == "http" && !isLocalhost(host) {
		return Origin{}, fmt.Errorf("passkey: origin %s is plain http, which WebAuthn allows only on localhost", quote(s))
	}
	return Origin{scheme: scheme, host: host, port: port}, nil
}

// String returns the serialised origin, as the client data carries it.
func (o Origin) String() string {
	if o.host == "" {
		return ""
	}
	s := o.scheme + "://" + o.host
	if o.port != "" {
		s += ":" + o.port
	}
	return s
}

// Host is the origin's host, its effective domain.
func (o Origin) Host() string { return o.host }

// RPID is a relying party id that CheckRPID allowed for an origin. The
// authenticator data hashes it, and a credential is bound to it. The zero
// RPID is none.
type RPID struct{ id string }

// String returns the id.
func (r RPID) String() string { return r.id }

// CheckRPID returns the relying party id that a page of origin o asked for
// in requested ("" means o's host, as WebAuthn's default), if o may claim
// it: the id must be o's host itself, or a parent of it that is a
// registrable domain and not a public suffix (HTML's "is a registrable
// domain suffix of or is equal to", with the Public Suffix List's ICANN
// and private sections, as browsers use it). A page of
// login.example.co.uk may claim example.co.uk, never co.uk; a page of
// alice.github.io may not claim github.io.
//
// requested must be written as a browser writes a host: lower-case ASCII,
// punycode for an internationalised name, no trailing dot, port or
// scheme. fillgate refuses anything else rather than guess which site was
// meant: the browser's own WebAuthn answers such a call.
func CheckRPID(o Origin, requested string) (RPID, error) {
	if o.host == "" {
		return RPID{}, errors.New("passkey: no origin to check the relying party id against")
	}
	if requested == "" || requested == o.host {
		return RPID{id: o.host}, nil
	}
	if err := checkDomain(requested); err != nil {
		return RPID{}, fmt.Errorf("passkey: relying party id %s: %w", quote(requested), err)
	}
	if !strings.HasSuffix(o.host, "."+requested) {
		return RPID{}, fmt.Errorf("passkey: relying party id %s is neither %s nor a parent domain of it", quote(requested), o.host)
	}
	// The host's public suffix is the part no single owner registers;
	// the id must be longer than it (HTML's step 4.3: it is not its own
	// public suffix, and it is not a name inside the host's).
	ps, _ := publicsuffix.PublicSuffix(o.host)
	if requested == ps || strings.HasSuffix(ps, "."+requested) {
		return RPID{}, fmt.Errorf("passkey: relying party id %s is a public suffix, shared by sites of many owners", quote(requested))
	}
	if own, _ := publicsuffix.PublicSuffix(requested); own == requested {
		return RPID{}, fmt.Errorf("passkey: relying party id %s is a public suffix, shared by sites of many owners", quote(requested))
	}
	return RPID{id: requested}, nil
}

// checkPort accepts a canonical port number that is not the scheme's
// default (browsers leave the default out).
func checkPort(scheme, port string) error {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || port[0] == '0' || strconv.Itoa(n) != port {
		return fmt.Errorf("bad port %s", quote(port))
	}
	if scheme == "https" && n == 443 || scheme == "http" && n == 80 {
		return errors.New("the default port is spelled out, which a browser never does")
	}
	return nil
}

// checkDomain accepts a DNS name written as a browser writes a host:
// lower-case ASCII letters, digits and hyphens in labels of 1 to 63
// characters, no trailing dot, and not read as an IP address.
func checkDomain(s string) error {
	switch {
	case s == "":
		return errors.New("no host")
	case len(s) > maxHostLen:
		return fmt.Errorf("longer than %d characters", maxHostLen)
	case strings.HasSuffix(s, "."):
		return errors.New("ends in a dot, which makes it another host to the browser")
	}
	if _, err := netip.ParseAddr(s); err == nil {
		return errors.New("an IP address, and WebAuthn needs a domain")
	}
	return dnsname.Check(s)
}

// isLocalhost reports whether the DNS name n is localhost or a name under
// it, which browsers resolve to loopback and treat as secure on http.
func isLocalhost(n string) bool {
	return n == "localhost" || strings.HasSuffix(n, ".localhost")
}

// quote renders an untrusted string for a message, cut short when long.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
