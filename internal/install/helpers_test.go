package install

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/browsertable"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ and the browser table in docs/browsers.md")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("missing golden file; run go test ./install -update: %v", err)
	}
	if got, want := string(got), string(want); got != want {
		t.Fatalf("differs from %s; if the change is meant, run go test ./install -update: got\n%s\nwant\n%s", p, got, want)
	}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// normalize replaces machine-specific paths in JSON output by names.
func normalize(b []byte, pairs ...string) []byte {
	s := string(b)
	for i := 0; i+1 < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, jsonEscaped(pairs[i]), pairs[i+1])
	}
	return []byte(s)
}

// namesFor lists the table's browsers that exist on os.
func namesFor(os string) []string {
	var out []string
	for _, b := range browsertable.Table() {
		if _, ok := b.OS[os]; ok {
			out = append(out, b.Name)
		}
	}
	return out
}
