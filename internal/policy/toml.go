package policy

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// fileDoc is the shape of a policy file, as the strict TOML decoder reads
// it. Pointers tell a key left out from one set.
type fileDoc struct {
	PromptBudget  *string            `toml:"prompt_budget"`
	Cooldown      *string            `toml:"no_response_cooldown"`
	RateLimit     *string            `toml:"rate_limit"`
	CDPURL        *string            `toml:"cdp_url"`
	CDPAllowHosts []string           `toml:"cdp_allow_hosts"`
	PromptOpener  *string            `toml:"prompt_opener"`
	Via           *string            `toml:"via"`
	Prompt        *string            `toml:"prompt"`
	Pinentry      *string            `toml:"pinentry"`
	Driven        *string            `toml:"driven"`
	RoomBrowser   *string            `toml:"clean_room_browser"`
	Service       map[string]ruleDoc `toml:"service"`
}

// ruleDoc is one [service."HOST"] table.
type ruleDoc struct {
	FrameAncestors []string `toml:"frame_ancestors"`
	Agents         []string `toml:"agents"`
	Fields         []string `toml:"fields"`
	AllowVia       []string `toml:"allow_via"`
	Then           *string  `toml:"then"`
	Driven         *string  `toml:"driven"`
	Subdomains     *bool    `toml:"subdomains"`
	Approval       *string  `toml:"approval"`
	Lease          *string  `toml:"lease"`
	Remember       *bool    `toml:"remember"`
	// The source tables are read as maps of strings (the decoder refuses
	// other types); their keys are checked against sourceKeys here.
	Password map[string]string `toml:"password"`
	OTP      map[string]string `toml:"otp"`
}

// Parse reads a policy file in TOML. name is used in messages (usually the
// path). Keys not set keep their defaults. On any problem it returns a
// *ParseError listing every problem it found as "name:LINE:COLUMN:
// message", in file order.
//
// Unknown keys, values of the wrong type, a key or table given twice, and
// invalid values are errors. A file in the old line format is refused
// with the advice to rewrite it in TOML (the error wraps ErrOldFormat).
func Parse(name string, data []byte) (*Policy, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var d fileDoc
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&d); err != nil {
		probs := decodeProblems(name, data, err)
		if oldFormat(data, probs[0].Line) {
			first := probs[0]
			first.Message = oldFormatAdvice
			return nil, &ParseError{Problems: []Problem{first}, oldFormat: true}
		}
		return nil, &ParseError{Problems: probs}
	}
	b := &builder{name: name, idx: indexPositions(data)}
	p := b.build(&d)
	if len(b.problems) > 0 {
		slices.SortStableFunc(b.problems, func(x, y Problem) int {
			return cmp.Or(cmp.Compare(x.Line, y.Line), cmp.Compare(x.Column, y.Column))
		})
		return nil, &ParseError{Problems: b.problems}
	}
	return p, nil
}

// decodeProblems turns the TOML decoder's error into problems with line,
// column and a message in the policy file's own terms.
func decodeProblems(name string, data []byte, err error) []Problem {
	var se *toml.StrictMissingError
	if errors.As(err, &se) {
		var ps []Problem
		for _, e := range se.Errors {
			line, col := e.Position()
			ps = append(ps, Problem{File: name, Line: line, Column: col, Message: unknownKeyMessage(e.Key())})
		}
		if len(ps) > 0 {
			return ps
		}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := decodeMessage(de.Key(), strings.TrimPrefix(de.Error(), "toml: "))
		if looksOld(data, line) {
			msg += " (this line looks like fillgate's old line format, which fillgate no longer reads: write it in TOML, as `fillgate policy example` shows)"
		}
		return []Problem{{File: name, Line: line, Column: col, Message: msg}}
	}
	return []Problem{{File: name, Line: 1, Message: strings.TrimPrefix(err.Error(), "toml: ")}}
}

// unknownKeyMessage explains a key the policy file does not have, at
// path.
func unknownKeyMessage(path toml.Key) string {
	last := path[len(path)-1]
	switch {
	case len(path) == 1 && slices.Contains(ruleKeys(), last):
		return fmt.Sprintf("%s belongs in a service's table, like [service.\"github.com\"]", last)
	case len(path) == 1:
		return fmt.Sprintf("unknown key %s; valid keys here: %s, and [service.\"HOST\"] tables", quote(last), strings.Join(topKeys(), ", "))
	case path[0] != keyService:
		return fmt.Sprintf("unknown key %s", quote(strings.Join(path, ".")))
	case len(path) >= 3 && slices.Contains(topKeys(), path[2]):
		return fmt.Sprintf("%s is a top-level setting; put it above the first [service.\"HOST\"] table", path[2])
	case len(path) >= 3 && slices.Contains(sourceKeys(), path[2]):
		return fmt.Sprintf("%s belongs in the service's password or otp table, like [service.%s.password]", path[2], tomlString(path[1]))
	case len(path) >= 3 && !slices.Contains(ruleKeys(), path[2]) && path[2] != keyPassword && path[2] != keyOTP:
		dotted := strings.Join(path[1:], ".")
		if len(path) == 3 {
			return fmt.Sprintf("unknown key %s in [service.%s]; valid keys here: %s, and the password and otp tables (or, if %s is a service name, quote it: [service.%s])",
				quote(path[2]), tomlString(path[1]), strings.Join(ruleKeys(), ", "), quote(dotted), tomlString(dotted))
		}
		return fmt.Sprintf("a service name with dots must be quoted: [service.%s]", tomlString(dotted))
	}
	return fmt.Sprintf("unknown key %s", quote(strings.Join(path, ".")))
}

// decodeMessage rewrites one of the TOML decoder's messages about the key
// at path.
func decodeMessage(path toml.Key, msg string) string {
	if len(path) == 0 {
		return msg
	}
	last := path[len(path)-1]
	if len(path) == 2 && path[0] == keyService {
		last = keyService
	}
	if len(path) == 4 && path[0] == keyService {
		last = "the source key " + last
	}
	if typ, ok := strings.CutPrefix(msg, "cannot decode TOML "); ok {
		typ, _, _ = strings.Cut(typ, " into")
		return fmt.Sprintf("%s must be %s, not %s", last, help(path[len(path)-1]), tomlTypeNoun(typ))
	}
	if strings.Contains(msg, "array table") {
		return fmt.Sprintf("write one table per service, like [service.\"github.com\"], not [[%s]]", strings.Join(path, "."))
	}
	return msg
}

// tomlTypeNoun names a TOML type for a message.
func tomlTypeNoun(typ string) string {
	switch typ {
	case "integer", "float":
		return "a number"
	case "bool", "boolean":
		return "true or false"
	case "array":
		return "a list"
	case "table", "inline table":
		return "a table"
	case "string":
		return "a string"
	}
	return typ
}

// oldFormatAdvice is the one problem of a file in the old line format.
const oldFormatAdvice = "this policy file is in fillgate's old line format (fillgate 0.1.0), which fillgate no longer reads: " +
	"rewrite it in TOML, with quoted values and [service.\"HOST\"] tables; `fillgate policy example` prints a policy file that documents every key"

// oldKeys are the keys the old line format knew, at the top of the file
// and in a [service HOST] section.
func oldKeys() []string {
	return []string{keyPromptBudget, keyCooldown, keyRateLimit, keyCDPURL, keyCDPAllowHosts, keyPromptOpener, keyVia,
		keyFrameAncestors, keyAgents, keyFields, keyAllowVia}
}

// oldLine matches a line only the old format would write: a
// [service HOST] header or a known key with a bare value.
var oldLine = regexp.MustCompile(`^\s*(\[\s*service\s+[^\]"]+\]|(` + strings.Join(oldKeys(), "|") + `)\s*=\s*[^\s"'\[\]{}])`)

// looksOld reports whether line n (1-based) of data looks like the old
// format.
func looksOld(data []byte, n int) bool {
	lines := bytes.Split(data, []byte("\n"))
	return n >= 1 && n <= len(lines) && oldLine.Match(lines[n-1])
}

// oldFormat reports whether data, which the TOML decoder refused at line
// n, is a file in the old line format: line n is not TOML even alone (a
// bare word, not a value of the wrong type), the file has a setting or a
// header, and every one it has looks like the old format (comments and
// blank lines aside). A TOML file with one such line among others is a
// TOML file with a mistake.
func oldFormat(data []byte, n int) bool {
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) || toml.Unmarshal(lines[n-1], &map[string]any{}) == nil {
		return false
	}
	found := false
	for _, l := range lines {
		switch t := bytes.TrimSpace(l); {
		case len(t) == 0 || t[0] == '#':
		case oldLine.Match(l):
			found = true
		default:
			return false
		}
	}
	return found
}

// positions maps key paths (pathKey) to where they are in the file: the
// key itself, its value (path + valueMark) and, for lists, each item
// (path + itemMark + index).
type positions map[string]unstable.Position

const (
	valueMark = "\x00="
	itemMark  = "\x00#"
)

// pathKey joins the parts of a key path.
func pathKey(parts ...string) string {
	return strings.Join(parts, "\x00")
}

// indexPositions finds where every key, value and list item of a TOML
// document (already known to be valid) is.
func indexPositions(data []byte) positions {
	idx := positions{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = idx.keys(&p, nil, e.Key())
		case unstable.KeyValue:
			idx.keyValue(&p, table, e)
		}
	}
	return idx
}

// keys records the position of each prefix of a (dotted) key under
// prefix, and returns the full path.
func (idx positions) keys(p *unstable.Parser, prefix []string, it unstable.Iterator) []string {
	path := slices.Clone(prefix)
	for it.Next() {
		k := it.Node()
		path = append(path, string(k.Data))
		if _, ok := idx[pathKey(path...)]; !ok {
			idx[pathKey(path...)] = p.Shape(k.Raw).Start
		}
	}
	return path
}

// keyValue records a key = value expression under the table prefix.
func (idx positions) keyValue(p *unstable.Parser, prefix []string, kv *unstable.Node) {
	path := idx.keys(p, prefix, kv.Key())
	v := kv.Value()
	full := pathKey(path...)
	idx[full+valueMark] = p.Shape(v.Raw).Start
	switch v.Kind {
	case unstable.Array:
		it := v.Children()
		for i := 0; it.Next(); i++ {
			idx[full+itemMark+strconv.Itoa(i)] = p.Shape(it.Node().Raw).Start
		}
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				idx.keyValue(p, path, n)
			}
		}
	}
}

// builder turns a decoded file into a Policy, recording every problem at
// its place in the file.
type builder struct {
	name     string
	idx      positions
	problems []Problem
}

// problemAt records a problem at the first of the marks (valueMark,
// itemMark+i, "") of path that the file has.
func (b *builder) problemAt(path []string, marks []string, format string, args ...any) {
	key := pathKey(path...)
	for _, m := range marks {
		if pos, ok := b.idx[key+m]; ok {
			b.problems = append(b.problems, Problem{File: b.name, Line: pos.Line, Column: pos.Column, Message: fmt.Sprintf(format, args...)})
			return
		}
	}
	// Not found (it cannot happen for a key the decoder read): the nearest
	// enclosing key.
	if len(path) > 1 {
		b.problemAt(path[:len(path)-1], []string{""}, format, args...)
		return
	}
	b.problems = append(b.problems, Problem{File: b.name, Line: 1, Message: fmt.Sprintf(format, args...)})
}

// keyProblem records a problem about the key at path itself.
func (b *builder) keyProblem(path []string, format string, args ...any) {
	b.problemAt(path, []string{""}, format, args...)
}

// valueProblem records a problem about the value at path (or, with index
// ≥ 0, one list item).
func (b *builder) valueProblem(path []string, index int, format string, args ...any) {
	marks := []string{valueMark, ""}
	if index >= 0 {
		marks = append([]string{itemMark + strconv.Itoa(index)}, marks...)
	}
	b.problemAt(path, marks, format, args...)
}

// str reads a string setting: it refuses an empty one and runs set on
// the rest, recording set's error.
func (b *builder) str(path []string, v *string, set func(string) error) {
	if v == nil {
		return
	}
	key := path[len(path)-1]
	if *v == "" {
		b.valueProblem(path, -1, "%s is empty; leave the key out, or write %s", key, help(key))
		return
	}
	if err := set(*v); err != nil {
		b.valueProblem(path, -1, "%s: %v", key, err)
	}
}

// list reads a list setting, normalising every item.
func (b *builder) list(path []string, items []string, norm func(string) (string, error)) []string {
	if items == nil {
		return nil
	}
	key := path[len(path)-1]
	if len(items) == 0 {
		b.valueProblem(path, -1, "%s is an empty list; leave the key out for no limit, or write %s", key, help(key))
		return nil
	}
	var out []string
	for i, it := range items {
		n, err := norm(it)
		switch {
		case err != nil:
			b.valueProblem(path, i, "%s: %v", key, err)
			continue
		case slices.Contains(out, n):
			b.valueProblem(path, i, "%s: %s is listed twice", key, quote(it))
			continue
		}
		out = append(out, n)
	}
	return out
}

// build reads the top-level settings and the service tables.
func (b *builder) build(d *fileDoc) *Policy {
	p := Default()
	b.str([]string{keyPromptBudget}, d.PromptBudget, func(v string) error {
		dur, err := parseDuration(v)
		p.PromptBudget = dur
		return cmp.Or(err, checkBudget(dur))
	})
	b.str([]string{keyCooldown}, d.Cooldown, func(v string) error {
		dur, err := parseDuration(v)
		p.NoResponseCooldown = dur
		return cmp.Or(err, checkCooldown(dur))
	})
	b.str([]string{keyRateLimit}, d.RateLimit, func(v string) error { return parseRate(p, v) })
	p.CDPAllowHosts = b.list([]string{keyCDPAllowHosts}, d.CDPAllowHosts, normalizeCDPHost)
	b.str([]string{keyCDPURL}, d.CDPURL, func(v string) error {
		p.CDPURL = v
		return checkCDPURL(v, p.CDPAllowHosts)
	})
	b.str([]string{keyPromptOpener}, d.PromptOpener, func(v string) error {
		p.PromptOpener = v
		return oneOf(v, OpenerSystem, OpenerCDPTab)
	})
	b.str([]string{keyVia}, d.Via, func(v string) error {
		p.Via = v
		return oneOf(v, ViaAuto, ViaExtension, ViaCDP)
	})
	b.str([]string{keyPrompt}, d.Prompt, func(v string) error {
		p.Prompt = v
		return oneOf(v, PromptAuto, PromptNative, PromptBrowser)
	})
	b.str([]string{keyPinentry}, d.Pinentry, func(v string) error {
		p.Pinentry = v
		return checkPinentry(v)
	})
	b.str([]string{keyDriven}, d.Driven, func(v string) error {
		p.Driven = v
		return oneOf(v, DrivenCleanRoom, DrivenInPage)
	})
	b.str([]string{keyRoomBrowser}, d.RoomBrowser, func(v string) error {
		p.RoomBrowser = v
		return checkAbsolute(v)
	})

	// Service tables in file order.
	names := make([]string, 0, len(d.Service))
	for raw := range d.Service {
		names = append(names, raw)
	}
	line := func(raw string) int { return b.idx[pathKey(keyService, raw)].Line }
	slices.SortFunc(names, func(x, y string) int { return cmp.Or(cmp.Compare(line(x), line(y)), cmp.Compare(x, y)) })
	first := map[string]string{}
	for _, raw := range names {
		path := []string{keyService, raw}
		svc, err := NormalizeService(raw)
		if err != nil {
			b.keyProblem(path, "%v", err)
			rd := d.Service[raw]
			b.rule(path, raw, &rd) // its keys are checked all the same
			continue
		}
		if prev, dup := first[svc]; dup {
			b.keyProblem(path, "a second table for the service %s; the first, [service.%s], is on line %d: put its keys there", svc, tomlString(prev), line(prev))
			continue
		}
		first[svc] = raw
		rd := d.Service[raw]
		p.Rules = append(p.Rules, b.rule(path, svc, &rd))
	}
	return p
}

// rule reads one [service."HOST"] table.
func (b *builder) rule(path []string, svc string, rd *ruleDoc) Rule {
	at := func(key string) []string { return append(slices.Clone(path), key) }
	r := Rule{Service: svc, Subdomains: rd.Subdomains, Remember: rd.Remember}
	r.FrameAncestors = b.list(at(keyFrameAncestors), rd.FrameAncestors, normalizeAncestor)
	r.Agents = b.list(at(keyAgents), rd.Agents, normalizeAgent)
	r.Fields = b.list(at(keyFields), rd.Fields, normalizeField)
	r.AllowVia = b.list(at(keyAllowVia), rd.AllowVia, normalizeAllowVia)
	b.str(at(keyThen), rd.Then, func(v string) error {
		r.Then = v
		return oneOf(v, ThenSubmit, ThenNone)
	})
	b.str(at(keyDriven), rd.Driven, func(v string) error {
		r.Driven = v
		return oneOf(v, DrivenCleanRoom, DrivenInPage)
	})
	b.str(at(keyApproval), rd.Approval, func(v string) error {
		r.Approval = v
		return oneOf(v, ApprovalEach, ApprovalLease, ApprovalNone)
	})
	b.str(at(keyLease), rd.Lease, func(v string) error {
		dur, err := parseDuration(v)
		r.Lease = dur
		return cmp.Or(err, checkLease(dur))
	})
	r.Password = b.source(at(keyPassword), rd.Password)
	r.OTP = b.source(at(keyOTP), rd.OTP)
	for _, kp := range r.problems(false) {
		full := append(slices.Clone(path), kp.path...)
		if len(kp.path) > 1 && kp.path[1] == keySource {
			b.valueProblem(full, -1, "%s: %v", kp.name(), kp.err)
			continue
		}
		b.keyProblem(full, "%s: %v", kp.name(), kp.err)
	}
	return r
}

// source reads a password or otp table: its keys must be source keys, and
// each parameter the store takes must be valid. Which parameters a store
// needs and takes is checked afterwards, with the rest of the rule.
func (b *builder) source(path []string, m map[string]string) *Source {
	if m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var s Source
	for _, k := range keys {
		if !slices.Contains(sourceKeys(), k) {
			b.keyProblem(append(slices.Clone(path), k), "unknown key %s in a source table; valid keys: %s", quote(k), strings.Join(sourceKeys(), ", "))
			continue
		}
		s.set(k, m[k])
	}
	if _, ok := m[keySource]; !ok {
		b.keyProblem(path, "%s has no source; write source = %s", path[len(path)-1], strings.Join(quoteAll(stores()), ", "))
		return nil
	}
	ps := paramsOf(s.Store, path[len(path)-1])
	for _, k := range keys {
		v := m[k]
		at := append(slices.Clone(path), k)
		switch {
		case !slices.Contains(sourceKeys(), k):
		case v == "" && slices.Contains(ps.need, k):
			// The rule's check says the store needs it.
		case v == "":
			b.valueProblem(at, -1, "%s is empty; leave the key out, or write %s", k, paramHelp(s.Store, path[len(path)-1], k))
		case k == keySource || !slices.Contains(ps.need, k) && !slices.Contains(ps.may, k):
			// The store and the parameters it takes: checked with the rule.
		default:
			n, err := paramNormalizer(s.Store, k)(v)
			if err != nil {
				b.valueProblem(at, -1, "%s: %v", k, err)
				continue
			}
			s.set(k, n)
		}
	}
	return &s
}

// quoteAll renders words as TOML strings.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = tomlString(w)
	}
	return out
}
