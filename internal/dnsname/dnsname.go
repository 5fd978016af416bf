// Package dnsname checks a DNS name as a browser writes the host of a URL:
// the one rule the policy's services and the passkeys' relying party ids
// share, so that the two cannot drift apart.
package dnsname

import (
	"errors"
	"fmt"
	"strings"
)

// Check accepts n if it is a DNS name as a browser writes it in a URL:
// labels of lower-case ASCII letters, digits and hyphens, 1 to 63
// characters long, neither starting nor ending with a hyphen; no empty
// label and no trailing dot; and a last label that is not a number, which
// the WHATWG URL parser would read, with the whole name, as an IPv4
// address. Its errors name the rule broken, for a person to fix.
func Check(n string) error {
	if strings.HasSuffix(n, ".") {
		return errors.New("no trailing dot; write the name as the browser shows it")
	}
	labels := strings.Split(n, ".")
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return err
		}
	}
	if endsInNumber(labels[len(labels)-1]) {
		return errors.New("browsers read a name ending in a number as an IPv4 address; write the address as four decimal numbers")
	}
	return nil
}

// checkLabel checks one DNS label.
func checkLabel(l string) error {
	switch {
	case l == "":
		return errors.New("empty label (two dots in a row, or a leading dot)")
	case len(l) > 63:
		return errors.New("a label is longer than 63 characters")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-':
		case 'A' <= c && c <= 'Z':
			return fmt.Errorf("label %q is in upper case, which a browser never writes in a host", l)
		case c >= 0x80:
			return fmt.Errorf("label %q is not ASCII: a browser writes an internationalised name in its punycode (xn--) form", l)
		default:
			return fmt.Errorf("label %q holds %q; use letters, digits and hyphens", l, c)
		}
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("label %q starts or ends with a hyphen", l)
	}
	return nil
}

// endsInNumber reports whether last, the last label of a host, makes the
// WHATWG URL parser read the whole host as IPv4: all decimal digits, or 0x
// followed by hex digits.
func endsInNumber(last string) bool {
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(rest, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}
