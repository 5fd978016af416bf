// Package wirevec reads the wire vectors, testdata/wire/*.json: example
// messages of each wire PROTOCOL.md names, which tests hold the Go types,
// the extension and PROTOCOL.md to. Every read is strict: a member a type
// does not name is an error.
package wirevec

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/repo"
)

// Load reads the vectors file name (such as "mcp.json") strictly into
// vectors, a pointer to a slice, and fails t when it cannot or the file
// holds none. It returns the file's bytes.
func Load(t testing.TB, name string, vectors any) []byte {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "testdata", "wire", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Strict(data, vectors); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if reflect.ValueOf(vectors).Elem().Len() == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return data
}

// Strict decodes data into v, refusing members v does not name.
func Strict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// RoundTrip decodes msg strictly into v and encodes v again; it reports
// whether that gives the same JSON value, and what v encodes to.
func RoundTrip(msg []byte, v any) (same bool, again []byte, err error) {
	if err := Strict(msg, v); err != nil {
		return false, nil, err
	}
	if again, err = json.Marshal(v); err != nil {
		return false, nil, err
	}
	var want, have any
	if err := json.Unmarshal(msg, &want); err != nil {
		return false, again, err
	}
	if err := json.Unmarshal(again, &have); err != nil {
		return false, again, err
	}
	return reflect.DeepEqual(have, want), again, nil
}
