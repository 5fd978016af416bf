package mcp

import (
	"encoding/json"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
)

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want secretArgs
	}{
		{`{"service":"github.com"}`, secretArgs{Service: "github.com", Field: fill.FieldPassword, Then: fill.ThenSubmit}},
		{`{"service":"a.test","field":"otp","then":"none"}`, secretArgs{Service: "a.test", Field: fill.FieldOTP, Then: fill.ThenNone}},
		{`{"service":"a.test","tab":"12","frame":3}`, secretArgs{Service: "a.test", Field: fill.FieldPassword, Then: fill.ThenSubmit, Tab: new(int64(12)), Frame: new(int64(3))}},
		{`{"service":"a.test","tab":12}`, secretArgs{Service: "a.test", Field: fill.FieldPassword, Then: fill.ThenSubmit, Tab: new(int64(12))}},
		{`{"service":"a.test","field":"passkey","no_wait":true}`, secretArgs{Service: "a.test", Field: fill.FieldPasskey, Then: fill.ThenSubmit, NoWait: true}},
		{`{"service":"a.test","field":"passkey","no_wait":null}`, secretArgs{Service: "a.test", Field: fill.FieldPasskey, Then: fill.ThenSubmit}},
		{`{"service":"a.test","tab":"8f3a2b9c0d1e4f5a6b7c8d9e0f1a2b3c"}`, secretArgs{Service: "a.test", Field: fill.FieldPassword, Then: fill.ThenSubmit, CDPTab: "8f3a2b9c0d1e4f5a6b7c8d9e0f1a2b3c"}},
	} {
		got, res, ok := parseArgs(json.RawMessage(c.raw))
		if !ok {
			t.Errorf("%s: refused: %s", c.raw, res.Detail)
			continue
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(c.want)
		if string(gb) != string(wb) {
			t.Errorf("%s: %s; want %s", c.raw, gb, wb)
		}
	}
	for _, raw := range []string{`[]`, `"github.com"`, `{"service":"a.test","tab":"012"}`, `{"service":"a.test","tab":"9007199254740993"}`, `{"service":"a.test"`,
		`{"service":"a.test","no_wait":true}`, `{"service":"a.test","field":"passkey","no_wait":"yes"}`} {
		if _, res, ok := parseArgs(json.RawMessage(raw)); ok || res.Status != fill.StatusRefused {
			t.Errorf("%s: accepted", raw)
		}
	}
}

// Only ok and armed tell the agent to go on: every other status is an
// error result.
func TestToolResultIsError(t *testing.T) {
	for _, s := range []fill.Status{fill.StatusOK, fill.StatusArmed, fill.StatusCancelled, fill.StatusRefused, fill.StatusNoResponse, fill.StatusFailed} {
		want := s != fill.StatusOK && s != fill.StatusArmed
		if got := toolResult(fill.Result{Status: s}).IsError; got != want {
			t.Errorf("%s: isError %v; want %v", s, got, want)
		}
	}
}
