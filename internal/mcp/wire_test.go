package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/wirevec"
)

// TestWireVectors holds the MCP tool's vectors (testdata/wire/mcp.json,
// PROTOCOL.md §5) to its schemas and its code: good arguments are what
// the input schema describes and parseArgs takes them; bad ones are
// refused with a detail that names what is wrong; a result decodes
// strictly into fill.Result, encodes again to the same JSON, and is what
// the output schema describes, every member of it a property there.
func TestWireVectors(t *testing.T) {
	var vs []struct {
		Name    string          `json:"name"`
		Kind    string          `json:"kind"`
		Message json.RawMessage `json:"message"`
		Names   string          `json:"names"`
	}
	wirevec.Load(t, "mcp.json", &vs)
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			switch v.Kind {
			case "arguments":
				checkSchema(t, inputSchema(), v.Message)
				if _, res, ok := parseArgs(v.Message); !ok {
					t.Errorf("parseArgs refused them: %s", res.Detail)
				}
			case "bad arguments":
				_, res, ok := parseArgs(v.Message)
				if ok || res.Status != fill.StatusRefused || !strings.HasPrefix(res.Detail, "bad arguments: ") || !strings.Contains(res.Detail, v.Names) {
					t.Errorf("parseArgs: ok %v, %s %q; want refused, with a detail that names %q", ok, res.Status, res.Detail, v.Names)
				}
			case "result":
				checkSchema(t, outputSchema(), v.Message)
				var r fill.Result
				same, again, err := wirevec.RoundTrip(v.Message, &r)
				if err != nil {
					t.Fatalf("does not decode into fill.Result: %v", err)
				}
				if !same {
					t.Errorf("fill.Result writes\n%s\nwant (the vector)\n%s", again, v.Message)
				}
			default:
				t.Fatalf("kind %q", v.Kind)
			}
		})
	}
}

// checkSchema checks msg against an object schema of the kind the tool
// has: required members, no member that is not a property, each of its
// property's type (null for an optional one), within an enum.
func checkSchema(t *testing.T, schema map[string]any, msg json.RawMessage) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(msg, &m); err != nil {
		t.Fatal(err)
	}
	props := schema["properties"].(map[string]any)
	for _, r := range schema["required"].([]string) {
		if m[r] == nil {
			t.Errorf("the required %q is missing", r)
		}
	}
	for k, val := range m {
		p, ok := props[k].(map[string]any)
		if !ok {
			t.Errorf("%q is not a property of the schema", k)
			continue
		}
		if val == nil {
			continue
		}
		var typ string
		switch x := val.(type) {
		case string:
			typ = "string"
		case bool:
			typ = "boolean"
		case float64:
			typ = "number"
			if x == float64(int64(x)) {
				typ = "integer"
			}
		default:
			typ = "object"
		}
		if p["type"] != typ && !(p["type"] == "number" && typ == "integer") {
			t.Errorf("%q is a %s; the schema says %v", k, typ, p["type"])
		}
		if enum, ok := p["enum"].([]string); ok && !slices.Contains(enum, val.(string)) {
			t.Errorf("%q is %v, not in the schema's enum %q", k, val, enum)
		}
	}
}
