package pageprompt

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/wirevec"
)

// TestWireVectors holds the prompt's answers (testdata/wire/
// prompt-answer.json, PROTOCOL.md §4, "payload") to the type the host
// reads them with: each decodes strictly into payload, so no member goes
// unread or misnamed, and readPayload takes it as the vector says
// (made-up values, never a person's).
func TestWireVectors(t *testing.T) {
	var vs []struct {
		Name    string          `json:"name"`
		Action  string          `json:"action"`
		Payload json.RawMessage `json:"payload"`
	}
	wirevec.Load(t, "prompt-answer.json", &vs)
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			var strict payload
			if err := wirevec.Strict(v.Payload, &strict); err != nil {
				t.Fatalf("does not decode into payload: %v", err)
			}
			var want struct {
				Value, Ask string
				Remember   bool
				Account    *string
			}
			_ = json.Unmarshal(v.Payload, &want)
			got, err := readPayload(v.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if base64.StdEncoding.EncodeToString(got.Value) != want.Value || base64.StdEncoding.EncodeToString(got.Ask) != want.Ask ||
				got.Remember != want.Remember || (got.Account == nil) != (want.Account == nil) ||
				(got.Account != nil && *got.Account != *want.Account) {
				t.Errorf("readPayload did not read the vector's members")
			}
			if (v.Action == "approve") != (len(got.Value) == 0) {
				t.Errorf("a %s answer carries a value: %v; only a submit does", v.Action, len(got.Value) > 0)
			}
		})
	}
}
