package wirevec

import "testing"

func TestStrictAndRoundTrip(t *testing.T) {
	type msg struct {
		Type string `json:"type"`
		N    int    `json:"n,omitempty"`
	}
	if err := Strict([]byte(`{"type":"a","extra":1}`), new(msg)); err == nil {
		t.Errorf("Strict took a member the type does not name")
	}
	if same, _, err := RoundTrip([]byte(`{"type":"a","n":2}`), new(msg)); err != nil || !same {
		t.Errorf("RoundTrip of a message the type writes back: same %v, %v; want true", same, err)
	}
	// The type drops a zero n: not the message the vector shows.
	if same, _, err := RoundTrip([]byte(`{"type":"a","n":0}`), new(msg)); err != nil || same {
		t.Errorf("RoundTrip of a member the type leaves out: same %v, %v; want false", same, err)
	}
}

func TestLoad(t *testing.T) {
	var vs []struct {
		Name    string         `json:"name"`
		Kind    string         `json:"kind"`
		Message map[string]any `json:"message"`
		Names   string         `json:"names"`
	}
	if data := Load(t, "mcp.json", &vs); len(data) == 0 || len(vs) == 0 {
		t.Errorf("Load read %d bytes and %d vectors", len(data), len(vs))
	}
}
