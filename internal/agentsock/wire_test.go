package agentsock

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/wirevec"
)

// agentSocketVector is one example message of the agent socket
// (testdata/wire/agent-socket.json).
type agentSocketVector struct {
	Name    string          `json:"name"`
	From    string          `json:"from"`
	Kind    string          `json:"kind"` // request or message
	Message json.RawMessage `json:"message"`
}

// loadAgentSocketVectors reads testdata/wire/agent-socket.json.
func loadAgentSocketVectors(t *testing.T) []agentSocketVector {
	t.Helper()
	var vs []agentSocketVector
	wirevec.Load(t, "agent-socket.json", &vs)
	return vs
}

// TestWireVectors holds the agent socket's vectors (PROTOCOL.md §1) to
// Request and Message, which both ends of the socket write and read: each
// decodes strictly into its type and encodes again to the same JSON, so
// no member is unknown, misnamed or dropped.
func TestWireVectors(t *testing.T) {
	for _, v := range loadAgentSocketVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			var got any = new(Message)
			if v.Kind == "request" {
				got = new(Request)
			}
			same, again, err := wirevec.RoundTrip(v.Message, got)
			if err != nil {
				t.Fatalf("does not decode into %T: %v", got, err)
			}
			if !same {
				t.Errorf("%T writes\n%s\nwant (the vector)\n%s", got, again, v.Message)
			}
		})
	}
}

// TestProtocolShowsTheVectors holds PROTOCOL.md §1's examples to the
// vectors: each JSON line or block there is a vector, a string with "…"
// in the document standing for any string.
func TestProtocolShowsTheVectors(t *testing.T) {
	doc, err := os.ReadFile("../../PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	start, end := strings.Index(s, "\n## 1. "), strings.Index(s, "\n## 2. ")
	if start < 0 || end < start {
		t.Fatal("PROTOCOL.md has no section 1")
	}
	var vectors []any
	for _, v := range loadAgentSocketVectors(t) {
		var m any
		_ = json.Unmarshal(v.Message, &m)
		vectors = append(vectors, m)
	}
	blocks := strings.Split(s[start:end], "```json\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("PROTOCOL.md §1 shows no message")
	}
	for _, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		dec := json.NewDecoder(strings.NewReader(b))
		for dec.More() {
			var m any
			if err := dec.Decode(&m); err != nil {
				t.Errorf("PROTOCOL.md §1 shows a message that is not JSON: %v in\n%s", err, b)
				break
			}
			found := false
			for _, v := range vectors {
				found = found || shows(m, v)
			}
			if !found {
				t.Errorf("PROTOCOL.md §1 shows %v, which no vector is", m)
			}
		}
	}
}

// shows reports whether the document's value d shows the vector's value
// v: equal, but that a string with "…" in d stands for any string.
func shows(d, v any) bool {
	switch d := d.(type) {
	case string:
		vs, ok := v.(string)
		return ok && (d == vs || strings.Contains(d, "…"))
	case map[string]any:
		vm, ok := v.(map[string]any)
		if !ok || len(vm) != len(d) {
			return false
		}
		for k, x := range d {
			if y, ok := vm[k]; !ok || !shows(x, y) {
				return false
			}
		}
		return true
	case []any:
		va, ok := v.([]any)
		if !ok || len(va) != len(d) {
			return false
		}
		for i := range d {
			if !shows(d[i], va[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(d, v)
}
