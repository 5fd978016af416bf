package extension

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"reflect"
	"slices"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/wirevec"
)

// TestWireVectors loads the service worker in Node with a stub of the
// browser's API (testdata/wire.js) and holds it to the native-messaging
// vectors (../testdata/wire/native-messaging.json, PROTOCOL.md §2), the
// same ones internal/bridge holds the host's types to: the worker has a
// handler for every request the host sends and refuses any other type;
// the host's notices set what the popup shows as the vectors say; and the
// notices the worker sends (hello, paused, end_lease, prompt_closed) have
// exactly the vectors' members, and only the popup itself, not the same
// page in a tab, makes it send paused or end_lease.
func TestWireVectors(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: tests/setup installs what the tests need") // never skipped
	}
	var vectors []struct {
		Name    string         `json:"name"`
		From    string         `json:"from"`
		Kind    string         `json:"kind"`
		Message map[string]any `json:"message"`
	}
	data := wirevec.Load(t, "native-messaging.json", &vectors)
	cmd := exec.CommandContext(t.Context(), node, "testdata/wire.js")
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("testdata/wire.js: %v: %s", err, stderr.Bytes())
	}
	var got struct {
		Dispatched map[string]bool   `json:"dispatched"`
		Unknown    map[string]string `json:"unknown"`
		State      struct {
			Host   map[string]any   `json:"host"`
			Recent []map[string]any `json:"recent"`
			Leases []map[string]any `json:"leases"`
		} `json:"state"`
		Sent []map[string]any `json:"sent"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("testdata/wire.js wrote %q: %v", raw, err)
	}

	notices := map[string]map[string]any{}
	for _, v := range vectors {
		typ, _ := v.Message["type"].(string)
		switch {
		case v.From == "host" && v.Kind == "request":
			if !got.Dispatched[typ] {
				t.Errorf("the worker has no handler for the host's %q request", typ)
			}
		case v.Kind == "notice":
			notices[v.From+" "+typ] = v.Message
		}
	}
	if got.Unknown["type"] != "error" || got.Unknown["error"] != "bad_request" {
		t.Errorf("an unknown request type is answered %v, want a bad_request error", got.Unknown)
	}

	host := notices["host host"]
	if got.State.Host["version"] != host["version"] || got.State.Host["pid"] != host["pid"] {
		t.Errorf("after the host notice the worker holds %v, want the version and pid of %v", got.State.Host, host)
	}
	outcome := notices["host outcome"]
	if len(got.State.Recent) != 1 || !sameMembers(got.State.Recent[0], outcome, "type") {
		t.Errorf("after the outcome notice the popup's history is %v, want %v (without its type)", got.State.Recent, outcome)
	}
	leases, _ := notices["host leases"]["leases"].([]any)
	if len(got.State.Leases) != len(leases) || len(leases) == 0 || !reflect.DeepEqual(any(got.State.Leases[0]), leases[0]) {
		t.Errorf("after the leases notice the popup's leases are %v, want %v", got.State.Leases, leases)
	}

	var types []string
	for _, m := range got.Sent {
		typ, _ := m["type"].(string)
		types = append(types, typ)
		want, ok := notices["extension "+typ]
		if !ok {
			t.Errorf("the worker sent a %q notice, which has no vector", typ)
			continue
		}
		if !sameKeys(m, want) {
			t.Errorf("the worker's %q notice is %v, want the members of %v", typ, m, want)
		}
	}
	if want := []string{"hello", "paused", "end_lease", "prompt_closed"}; !slices.Equal(types, want) {
		t.Errorf("the worker sent %q, want %q (the popup page in a tab sends nothing)", types, want)
	}
}

// sameMembers reports whether a and b hold the same members, but the ones
// named in but.
func sameMembers(a, b map[string]any, but ...string) bool {
	c := map[string]any{}
	for k, v := range b {
		if !slices.Contains(but, k) {
			c[k] = v
		}
	}
	return reflect.DeepEqual(a, c)
}

// sameKeys reports whether a and b have the same member names.
func sameKeys(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
