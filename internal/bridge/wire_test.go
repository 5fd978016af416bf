package bridge

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/wirevec"
)

// wireVector is one example message of a wire (testdata/wire/*.json): who
// sends it, whether it is a request, a reply or a notice, and the message.
type wireVector struct {
	Name    string          `json:"name"`
	From    string          `json:"from"`
	Kind    string          `json:"kind"`
	Message json.RawMessage `json:"message"`
}

// nativeMessagingTypes is the Go type of each native-messaging message, by
// who sends it, its kind and its type.
var nativeMessagingTypes = map[string]func() any{
	"host request inspect":             func() any { return new(inspectRequest) },
	"host request open_prompt":         func() any { return new(openPromptRequest) },
	"host request close_prompt":        func() any { return new(closePromptRequest) },
	"host request insert":              func() any { return new(insertMeta) },
	"host request ping":                func() any { return new(typeOnly) },
	"host request peek":                func() any { return new(typeOnly) },
	"host request drivable":            func() any { return new(typeOnly) },
	"host request notify":              func() any { return new(notifyRequest) },
	"host request tab_info":            func() any { return new(tabInfoRequest) },
	"host request cookies":             func() any { return new(cookiesRequest) },
	"host request handover":            func() any { return new(handoverRequest) },
	"host request passkey_arm":         func() any { return new(passkeyArmRequest) },
	"host request passkey_answer":      func() any { return new(passkeyAnswerRequest) },
	"host request passkey_refuse":      func() any { return new(passkeyVerdict) },
	"host request passkey_pass":        func() any { return new(passkeyVerdict) },
	"host request passkey_disarm":      func() any { return new(passkeyVerdict) },
	"host notice host":                 func() any { return new(hostNotice) },
	"host notice outcome":              func() any { return new(outcomeNotice) },
	"host notice leases":               func() any { return new(leasesNotice) },
	"extension reply inspected":        func() any { return new(inspectedReply) },
	"extension reply prompt_opened":    func() any { return new(promptOpenedReply) },
	"extension reply ok":               func() any { return new(typeOnly) },
	"extension reply pong":             func() any { return new(typeOnly) },
	"extension reply notified":         func() any { return new(typeOnly) },
	"extension reply inserted":         func() any { return new(insertedReply) },
	"extension reply not_inserted":     func() any { return new(notInsertedReply) },
	"extension reply peeked":           func() any { return new(peekedReply) },
	"extension reply drivable":         func() any { return new(driveReply) },
	"extension reply tab_info":         func() any { return new(tabInfoReply) },
	"extension reply cookies":          func() any { return new(cookiesReply) },
	"extension reply handed_over":      func() any { return new(handedOverReply) },
	"extension reply armed":            func() any { return new(armedReply) },
	"extension notice hello":           func() any { return new(helloNotice) },
	"extension notice paused":          func() any { return new(pausedNotice) },
	"extension notice prompt_closed":   func() any { return new(promptClosedNotice) },
	"extension notice end_lease":       func() any { return new(endLeaseNotice) },
	"extension notice passkey_called":  func() any { return new(calledNotice) },
	"extension notice passkey_aborted": func() any { return new(abortedNotice) },
}

// TestWireVectors holds the native-messaging vectors
// (testdata/wire/native-messaging.json, PROTOCOL.md §2) to the types the
// host writes and reads. A message the host sends is exactly what its type
// encodes: decoded strictly and encoded again, it is the same JSON. A
// message the extension sends decodes strictly into the type the host
// reads it with, so no field it sends goes unread or misnamed. The port
// adds a request's id and reads a reply's; an error reply is the port's
// (id, type, error, detail); the insert's value is secretjson's.
func TestWireVectors(t *testing.T) {
	var vs []wireVector
	wirevec.Load(t, "native-messaging.json", &vs)
	seen := map[string]bool{}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(v.Message, &fields); err != nil {
				t.Fatalf("not a JSON object: %v", err)
			}
			var typ string
			if err := json.Unmarshal(fields["type"], &typ); err != nil {
				t.Fatalf("no type: %v", err)
			}
			_, hasID := fields["id"]
			if hasID != (v.Kind != "notice") {
				t.Errorf("an id: %v; a %s has one exactly when it is not a notice", hasID, v.Kind)
			}
			delete(fields, "id")
			if v.Kind == "reply" && typ == "error" {
				for k := range fields {
					if k != "type" && k != "error" && k != "detail" {
						t.Errorf("an error reply has %q; it has type, error and detail only", k)
					}
				}
				return
			}
			if typ == "insert" {
				var value string
				if json.Unmarshal(fields["value"], &value) != nil {
					t.Errorf("insert: no string value")
				}
				delete(fields, "value")
				fields["id"] = json.RawMessage("4") // insertMeta writes its id itself
			}
			key := v.From + " " + v.Kind + " " + typ
			seen[key] = true
			newType, ok := nativeMessagingTypes[key]
			if !ok {
				t.Fatalf("no Go type for %q", key)
			}
			msg, _ := json.Marshal(fields)
			got := newType()
			if v.From != "host" {
				if err := wirevec.Strict(msg, got); err != nil {
					t.Fatalf("%s does not decode into %T: %v", key, got, err)
				}
				return
			}
			same, again, err := wirevec.RoundTrip(msg, got)
			if err != nil {
				t.Fatalf("%s does not decode into %T: %v", key, got, err)
			}
			if !same {
				t.Errorf("%T writes\n%s\nwant (the vector)\n%s", got, again, msg)
			}
		})
	}
	for key := range nativeMessagingTypes {
		if !seen[key] {
			t.Errorf("no vector for %q", key)
		}
	}
}

// TestProtocolShowsTheVectors holds PROTOCOL.md §2 to the vectors: every
// message its tables show (each `{"…"}` cell, its "…" placeholders and
// optional members, marked "?", allowed) has the members of a vector of
// its type, and every vector's type is shown there.
func TestProtocolShowsTheVectors(t *testing.T) {
	doc, err := os.ReadFile("../../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	start := strings.Index(section, "\n## 2. ")
	end := strings.Index(section, "\n## 3. ")
	if start < 0 || end < start {
		t.Fatal("PROTOCOL.md has no section 2")
	}
	section = section[start:end]
	var vs []wireVector
	wirevec.Load(t, "native-messaging.json", &vs)
	keysOf := func(raw []byte) map[string]bool {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(raw, &m)
		out := map[string]bool{}
		for k := range m {
			out[k] = true
		}
		return out
	}
	shown := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, cell := range regexp.MustCompile("`(\\{\"[^`]*\\})`").FindAllStringSubmatch(line, -1) {
			msg, optional, err := docMessage(cell[1])
			if err != nil {
				t.Errorf("PROTOCOL.md shows %s, which is not JSON even with its placeholders read: %v", cell[1], err)
				continue
			}
			var typ struct{ Type string }
			_ = json.Unmarshal(msg, &typ)
			shown[typ.Type] = true
			want := keysOf(msg)
			match := false
			for _, v := range vs {
				var vt struct{ Type string }
				_ = json.Unmarshal(v.Message, &vt)
				if vt.Type != typ.Type {
					continue
				}
				have := keysOf(v.Message)
				ok := true
				for k := range want {
					ok = ok && (have[k] || optional[k])
				}
				for k := range have {
					ok = ok && want[k]
				}
				match = match || ok
			}
			if !match {
				t.Errorf("PROTOCOL.md shows %s; no vector of type %q has those members", cell[1], typ.Type)
			}
		}
	}
	for _, v := range vs {
		var vt struct{ Type string }
		_ = json.Unmarshal(v.Message, &vt)
		if !shown[vt.Type] {
			t.Errorf("the vector %q (type %q) is not shown in PROTOCOL.md §2", v.Name, vt.Type)
		}
	}
}

// docMessage reads a message as PROTOCOL.md writes it: "?" after a member
// marks it optional (the top level's are returned), "[…]", "{…}" and
// "[cookie…]" stand for any array or object.
func docMessage(s string) (json.RawMessage, map[string]bool, error) {
	s = regexp.MustCompile(`\[[a-z]*…\]`).ReplaceAllString(s, "[]")
	s = strings.ReplaceAll(s, "{…}", "{}")
	optional := map[string]bool{}
	var b strings.Builder
	depth, inString, key, last := 0, false, "", ""
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			if c == '\\' && i+1 < len(s) {
				b.WriteByte(c)
				i++
				c = s[i]
			} else if c == '"' {
				inString = false
			} else {
				last += string(c)
			}
		case c == '"':
			inString, last = true, ""
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		case c == '?':
			if depth == 1 {
				optional[key] = true
			}
			continue
		case c == ':' && depth == 1:
			key = last
		}
		b.WriteByte(c)
	}
	var raw json.RawMessage
	err := json.Unmarshal([]byte(b.String()), &raw)
	return raw, optional, err
}
