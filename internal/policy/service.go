package policy

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

// ValidService returns nil when s names a service fillgate may fill for,
// else an error that says what is wrong. A service is a host — a DNS name
// (`github.com`, `login.example.co.uk`), `localhost` or a name under it, or
// an IP literal (IPv6 without brackets) — with an optional port
// (`nas.lan:8443`, `192.168.1.1:8443`, `[::1]:8443`); see NormalizeService
// for the rules.
func ValidService(s string) error {
	_, err := NormalizeService(s)
	return err
}

// NormalizeService returns the canonical form of the service s, or an error
// that says what is wrong and what would be valid.
//
// Upper case is folded to lower case and an IP literal is written in its
// canonical form (`0:0:0:0:0:0:0:1` becomes `::1`). Everything else is
// refused rather than guessed at: a scheme, path, user info, wildcard,
// trailing dot, empty label, a name browsers would read as an IPv4 address
// (`127.1`, `0x7f.0.0.1`), and a bare public suffix (`com`, `co.uk`,
// `github.io`, or any single label other than `localhost`), since a suffix
// would match sites of many owners.
//
// A port is written after a colon (an IPv6 address then goes in brackets,
// `[2001:db8::1]:8443`) as a decimal number from 1 to 65535 without leading
// zeros. A service with a port covers pages on exactly that port; one
// without covers only the default port (on loopback hosts, any port). Port
// 443 on a host that is not loopback is refused: it is the https default,
// so the service is the host alone.
//
// Non-ASCII names are refused: write an internationalised name in its
// punycode (`xn--`) form, which is how browsers report the page's origin.
// This keeps look-alike letters from other scripts out of the service name
// the human reads in the prompt.
func NormalizeService(s string) (string, error) {
	svc, err := parseService(s)
	if err != nil {
		return "", err
	}
	return svc.String(), nil
}

// service is a parsed service: a host, a port, and whether names under the
// host belong to it (per the policy's subdomains key).
type service struct {
	host host
	port string // "" for the default port (any port on loopback)
	// exactHost is true when only the host itself belongs to the service,
	// not the names under it (subdomains = false in the policy).
	exactHost bool
}

// parseService parses s as a service (see NormalizeService).
func parseService(s string) (service, error) {
	svc, err := splitService(s)
	if err != nil {
		return service{}, err
	}
	h, port := svc.host, svc.port
	if port == "443" && !h.loopback() {
		return service{}, fmt.Errorf("service %s: 443 is the default https port; write the host alone, %s", quote(s), h)
	}
	if !h.ip.IsValid() && !isLocalhost(h.name) {
		if ps, _ := publicsuffix.PublicSuffix(h.name); ps == h.name {
			return service{}, fmt.Errorf("service %s: %s is a public suffix (like com, co.uk or github.io) shared by sites of many owners; name the site itself, e.g. example.%s", quote(s), h.name, h.name)
		}
	}
	return service{host: h, port: port}, nil
}

// splitService parses s into host and port, without the checks a
// service name gets once (port 443, public suffixes): it reads the service
// of a rule that was checked when the policy was read.
func splitService(s string) (service, error) {
	if err := serviceShape(s); err != nil {
		return service{}, fmt.Errorf("service %s: %w", quote(s), err)
	}
	hostText, port, err := splitServicePort(s)
	if err != nil {
		return service{}, fmt.Errorf("service %s: %w", quote(s), err)
	}
	h, err := normalizeHost(hostText)
	if err != nil {
		return service{}, fmt.Errorf("service %s: %w", quote(s), err)
	}
	return service{host: h, port: port}, nil
}

// serviceShape refuses the ways a service is written wrongly that a port
// would hide: a scheme, path, query or user info.
func serviceShape(s string) error {
	switch {
	case strings.Contains(s, "://"):
		return errors.New("write the host alone, without a scheme (github.com, not https://github.com)")
	case strings.ContainsAny(s, "/?#\\"):
		return errors.New("write the host alone, without a path or query")
	case strings.Contains(s, "@"):
		return errors.New("write the host alone, without user info")
	}
	return nil
}

// splitServicePort splits "host", "host:port", "v6" or "[v6]:port".
func splitServicePort(s string) (hostText, port string, err error) {
	if v6, ok := strings.CutPrefix(s, "["); ok {
		addr, after, ok := strings.Cut(v6, "]")
		port, hasPort := strings.CutPrefix(after, ":")
		if !ok || !hasPort || !strings.Contains(addr, ":") {
			return "", "", errors.New("write an IPv6 address without brackets (::1), or in brackets with a port ([::1]:8443)")
		}
		return addr, port, checkServicePort(port)
	}
	if strings.Count(s, ":") != 1 {
		return s, "", nil
	}
	hostText, port, _ = strings.Cut(s, ":")
	return hostText, port, checkServicePort(port)
}

// checkServicePort accepts a decimal port from 1 to 65535 without leading
// zeros.
func checkServicePort(p string) error {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || p[0] == '0' || strconv.Itoa(n) != p {
		return fmt.Errorf("bad port %s; write a number from 1 to 65535, like nas.lan:8443", quote(p))
	}
	return nil
}

// String returns the canonical text of the service.
func (s service) String() string {
	if s.port == "" {
		return s.host.String()
	}
	if s.host.ip.Is6() {
		return "[" + s.host.String() + "]:" + s.port
	}
	return s.host.String() + ":" + s.port
}

// host is a parsed host name: either an IP address or a lower-case DNS name.
type host struct {
	ip   netip.Addr // valid for an IP literal
	name string     // the DNS name when ip is not valid
}

// String returns the canonical text of h (IPv6 without brackets).
func (h host) String() string {
	if h.ip.IsValid() {
		return h.ip.String()
	}
	return h.name
}

// loopback reports whether h is a loopback host: localhost, a name under
// localhost, 127.0.0.0/8 or ::1.
func (h host) loopback() bool {
	if h.ip.IsValid() {
		return h.ip.IsLoopback()
	}
	return isLocalhost(h.name)
}

// covers reports whether h, a service, covers the host o: the same IP, or
// the same DNS name or a name under it.
func (h host) covers(o host) bool {
	if h.ip.IsValid() || o.ip.IsValid() {
		return h.ip.IsValid() && h.ip == o.ip
	}
	return o.name == h.name || strings.HasSuffix(o.name, "."+h.name)
}

// isLocalhost reports whether the DNS name n is localhost or a name under
// it; browsers resolve all of them to loopback.
func isLocalhost(n string) bool {
	return n == "localhost" || strings.HasSuffix(n, ".localhost")
}

// normalizeHost parses s as a service host, folding case.
func normalizeHost(s string) (host, error) {
	if err := hostShape(s); err != nil {
		return host{}, err
	}
	if strings.Contains(s, ":") || isDottedNumbers(s) {
		return parseIP(s)
	}
	n := strings.ToLower(s)
	if err := dnsname.Check(n); err != nil {
		return host{}, err
	}
	return host{name: n}, nil
}

// hostShape refuses the common ways a host is written wrongly, each with a
// message that says what to write instead.
func hostShape(s string) error {
	switch {
	case s == "":
		return errors.New("empty; write a host such as github.com")
	case len(s) > maxHostLen:
		return fmt.Errorf("longer than %d characters", maxHostLen)
	case strings.Contains(s, "://"):
		return errors.New("write the host alone, without a scheme (github.com, not https://github.com)")
	case strings.ContainsAny(s, "/?#\\"):
		return errors.New("write the host alone, without a path or query")
	case strings.Contains(s, "@"):
		return errors.New("write the host alone, without user info")
	case strings.Contains(s, "*"):
		return errors.New("wildcards are not allowed; a service already covers its subdomains (unless its policy section says subdomains = false)")
	case strings.HasPrefix(s, "["):
		return errors.New("write an IPv6 address without brackets, e.g. ::1")
	}
	for _, r := range s {
		if r > 0x7e {
			return errors.New("not ASCII; write an internationalised name in its punycode (xn--) form")
		}
		if r <= ' ' {
			return errors.New("contains a space or control character")
		}
	}
	return nil
}

// parseIP parses an IP literal host.
func parseIP(s string) (host, error) {
	ip, err := netip.ParseAddr(s)
	switch {
	case err != nil && strings.Count(s, ":") == 1:
		return host{}, errors.New("write the host alone, without a port")
	case err != nil:
		return host{}, errors.New("not a valid IP address (write IPv4 as four decimal numbers without leading zeros, IPv6 without brackets)")
	case ip.Zone() != "":
		return host{}, errors.New("an IPv6 zone is not allowed")
	case ip.Is4In6():
		return host{}, fmt.Errorf("write the IPv4-mapped address as plain IPv4: %s", ip.Unmap())
	case ip.IsUnspecified(), ip.IsMulticast(), ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return host{}, errors.New("not the address of one host")
	}
	return host{ip: ip}, nil
}

// isDottedNumbers reports whether s consists of digits and dots only, so
// it must be read as an IPv4 address.
func isDottedNumbers(s string) bool {
	return strings.Trim(s, "0123456789.") == ""
}

// quote renders an untrusted string for a message, cut short when long.
func quote(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
