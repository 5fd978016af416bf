package policy

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// legacyTopKeys and legacyRuleKeys list the keys the old format knew at
// the top of the file and in a [service HOST] section.
func legacyTopKeys() []string {
	return []string{keyPromptBudget, keyCooldown, keyRateLimit, keyCDPURL, keyCDPAllowHosts, keyPromptOpener, keyVia}
}

func legacyRuleKeys() []string {
	return []string{keyFrameAncestors, keyAgents, keyFields, keyAllowVia}
}

// parser holds the state of one ParseLegacy call.
type parser struct {
	name     string
	p        *Policy
	problems []Problem
	seen     map[string]int // top-level key -> line
	sections map[string]int // service -> line of its header
	rule     *Rule          // the current section, nil at top level
	ruleSeen map[string]int // key -> line within the current section
}

// ParseLegacy reads a policy file in the old line format, which fillgate
// no longer reads as a policy: `fillgate policy migrate` uses it to
// convert such a file to TOML. name is used in messages (usually the
// path). Keys not set keep their defaults. On any problem it returns a
// *ParseError listing every problem as "name:LINE: message".
//
// The format: one setting per line as `key = value`; `#` starts a comment
// at the start of a line or after a space; `[service HOST]` starts a
// section of per-service rules that runs to the next section. Lists are
// comma-separated. Durations are written like 90s, 10m or 1h. Unknown keys,
// repeated keys and repeated sections are errors. It knows only the keys
// the format had (legacyTopKeys, legacyRuleKeys), and services without
// ports.
func ParseLegacy(name string, data []byte) (*Policy, error) {
	ps := &parser{name: name, p: Default(), seen: map[string]int{}, sections: map[string]int{}}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	for i, raw := range bytes.Split(data, []byte("\n")) {
		ps.line(i+1, raw)
	}
	ps.finish()
	if len(ps.problems) > 0 {
		return nil, &ParseError{Problems: ps.problems}
	}
	return ps.p, nil
}

// problem records a problem on line n.
func (ps *parser) problem(n int, format string, args ...any) {
	ps.problems = append(ps.problems, Problem{File: ps.name, Line: n, Message: fmt.Sprintf(format, args...)})
}

// line handles line n.
func (ps *parser) line(n int, raw []byte) {
	raw = bytes.TrimSuffix(raw, []byte("\r"))
	if !utf8.Valid(raw) {
		ps.problem(n, "not valid UTF-8 text")
		return
	}
	s := stripComment(string(raw))
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		ps.problem(n, "contains a control character")
		return
	}
	s = strings.Trim(s, " \t")
	switch {
	case s == "":
	case strings.HasPrefix(s, "["):
		ps.section(n, s)
	default:
		ps.setting(n, s)
	}
}

// stripComment cuts a # comment that starts the line or follows a space or
// tab.
func stripComment(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
			return s[:i]
		}
	}
	return s
}

// section handles a "[service HOST]" header. The keys under a header that
// is refused are still checked, against a rule that is then dropped.
func (ps *parser) section(n int, s string) {
	ps.rule, ps.ruleSeen = &Rule{}, map[string]int{}
	inner, ok := strings.CutSuffix(s[1:], "]")
	if !ok {
		ps.problem(n, "a section header must end with ]; write [service HOST]")
		return
	}
	f := strings.Fields(inner)
	if len(f) != 2 || f[0] != "service" {
		ps.problem(n, "unknown section [%s]; the only section is [service HOST], e.g. [service github.com]", inner)
		return
	}
	parsed, err := parseService(f[1])
	if err == nil && parsed.port != "" {
		err = fmt.Errorf("service %s: the old format has no ports", quote(f[1]))
	}
	if err != nil {
		ps.problem(n, "%v", err)
		return
	}
	svc := parsed.String()
	if first, dup := ps.sections[svc]; dup {
		ps.problem(n, "a second [service %s] section; the first is on line %d, put its keys there", svc, first)
		return
	}
	ps.sections[svc] = n
	ps.p.Rules = append(ps.p.Rules, Rule{Service: svc})
	ps.rule = &ps.p.Rules[len(ps.p.Rules)-1]
}

// setting handles a "key = value" line.
func (ps *parser) setting(n int, s string) {
	key, value, ok := strings.Cut(s, "=")
	key, value = strings.Trim(key, " \t"), strings.Trim(value, " \t")
	if !ok {
		ps.problem(n, "expected `key = value`, a [service HOST] header or a # comment")
		return
	}
	if key == "" {
		ps.problem(n, "no key before =; expected `key = value`")
		return
	}
	inRule := ps.rule != nil
	seen := ps.seen
	if inRule {
		seen = ps.ruleSeen
	}
	if !ps.knownKey(n, key, inRule) {
		return
	}
	if first, dup := seen[key]; dup {
		ps.problem(n, "%s is already set on line %d; set it once", key, first)
		return
	}
	seen[key] = n
	if value == "" {
		ps.problem(n, "%s has no value; %s", key, legacyHelp(key))
		return
	}
	var err error
	if inRule {
		err = setRule(ps.rule, key, value)
	} else {
		err = setTop(ps.p, key, value)
	}
	if err != nil {
		ps.problem(n, "%s: %v", key, err)
	}
}

// knownKey reports whether key is valid where it stands, recording a
// problem when it is not.
func (ps *parser) knownKey(n int, key string, inRule bool) bool {
	here, there := legacyTopKeys(), legacyRuleKeys()
	if inRule {
		here, there = there, here
	}
	switch {
	case slices.Contains(here, key):
		return true
	case slices.Contains(there, key) && inRule:
		ps.problem(n, "%s is a top-level setting; put it above the first [service ...] section", key)
	case slices.Contains(there, key):
		ps.problem(n, "%s belongs in a [service HOST] section", key)
	default:
		ps.problem(n, "unknown key %s; valid keys here: %s", quote(key), strings.Join(here, ", "))
	}
	return false
}

// finish runs the checks that span lines.
func (ps *parser) finish() {
	if n, ok := ps.seen[keyCDPURL]; ok && ps.p.CDPURL != "" {
		if err := checkCDPURL(ps.p.CDPURL, ps.p.CDPAllowHosts); err != nil {
			ps.problem(n, "%s: %v", keyCDPURL, err)
		}
	}
	// Problems are recorded in line order except the cross-line checks.
	slices.SortStableFunc(ps.problems, func(a, b Problem) int { return cmp.Compare(a.Line, b.Line) })
}

// setTop sets a top-level key.
func setTop(p *Policy, key, v string) error {
	switch key {
	case keyPromptBudget:
		d, err := parseDuration(v)
		if err == nil {
			err = checkBudget(d)
		}
		p.PromptBudget = d
		return err
	case keyCooldown:
		d, err := parseDuration(v)
		if err == nil {
			err = checkCooldown(d)
		}
		p.NoResponseCooldown = d
		return err
	case keyRateLimit:
		return parseRate(p, v)
	case keyCDPURL:
		// Checked in finish, once cdp_allow_hosts is known.
		p.CDPURL = v
		return nil
	case keyCDPAllowHosts:
		hosts, err := parseList(v, normalizeCDPHost)
		p.CDPAllowHosts = hosts
		return err
	case keyPromptOpener:
		p.PromptOpener = v
		return oneOf(v, OpenerSystem, OpenerCDPTab)
	case keyVia:
		p.Via = v
		return oneOf(v, ViaAuto, ViaExtension, ViaCDP)
	}
	return fmt.Errorf("unknown key")
}

// setRule sets a key of a [service HOST] section.
func setRule(r *Rule, key, v string) error {
	var err error
	switch key {
	case keyFrameAncestors:
		r.FrameAncestors, err = parseList(v, normalizeAncestor)
	case keyAgents:
		r.Agents, err = parseList(v, normalizeAgent)
	case keyFields:
		r.Fields, err = parseList(v, normalizeField)
	case keyAllowVia:
		r.AllowVia, err = parseList(v, normalizeAllowVia)
	default:
		err = fmt.Errorf("unknown key")
	}
	return err
}

// parseList splits a comma-separated list and normalises every item.
func parseList(v string, norm func(string) (string, error)) ([]string, error) {
	var out []string
	for _, it := range strings.Split(v, ",") {
		it = strings.Trim(it, " \t")
		if it == "" {
			return nil, fmt.Errorf("an empty item; separate items with single commas")
		}
		n, err := norm(it)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("%s is listed twice", quote(it))
		}
		out = append(out, n)
	}
	return out, nil
}

// legacyHelp says what a valid value of key looks like in the old format.
func legacyHelp(key string) string {
	switch key {
	case keyPromptBudget:
		return "write a duration from 5s to 15m, like 90s"
	case keyCooldown:
		return "write a duration up to 24h, like 10m, or 0s for none"
	case keyRateLimit:
		return "write requests/window, like 6/1m"
	case keyCDPURL:
		return "write a URL like http://127.0.0.1:9222, or leave the key out"
	case keyCDPAllowHosts:
		return "list host names or IP addresses, like devbox.lan, 10.0.0.5, or leave the key out"
	case keyPromptOpener:
		return "write system or cdp-tab"
	case keyVia:
		return "write auto, extension or cdp"
	case keyFrameAncestors:
		return "list origins like https://portal.example.net"
	case keyAgents:
		return "list absolute executable paths like /usr/local/bin/claude"
	case keyFields:
		return "list password, one-time-code or both"
	case keyAllowVia:
		return "list extension, cdp or both"
	}
	return "see fillgate policy example"
}
