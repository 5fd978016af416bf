package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/manifest"
)

// TestStoreZip: the store package holds exactly the files the binary
// embeds, byte for byte, but for manifest.json, which loses "key" and
// nothing else.
func TestStoreZip(t *testing.T) {
	out := t.TempDir()
	stamp := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	path, err := pack(extension.Files, out, "v"+manifest.Version, stamp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := path, filepath.Join(out, "fillgate-"+manifest.Version+"-chrome.zip"); got != want {
		t.Errorf("path = %v, want %v", got, want)
	}

	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.Modified.Equal(stamp) {
			t.Errorf("%s stamped %v", f.Name, f.Modified)
		}
		got := read(t, f)
		want, err := fs.ReadFile(extension.Files, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		unpacked, err := os.ReadFile(filepath.Join(out, "unpacked", filepath.FromSlash(f.Name)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(unpacked, want) {
			t.Errorf("unpacked/%s differs from the embedded file", f.Name)
		}
		if f.Name != "manifest.json" {
			if !bytes.Equal(got, want) {
				t.Errorf("%s in the zip differs from the embedded file", f.Name)
			}
			continue
		}
		var store, src map[string]any
		if err := json.Unmarshal(got, &store); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &src); err != nil {
			t.Fatal(err)
		}
		if _, ok := store["key"]; ok {
			t.Errorf("the Chrome Web Store refuses a manifest with a key: the zip's manifest.json has one")
		}
		if _, ok := src["key"]; !ok {
			t.Fatalf("extension/manifest.json has no key: got %v", src)
		}
		delete(src, "key")
		if !reflect.DeepEqual(store, src) {
			t.Errorf("nothing but key changes: got %v, want %v", store, src)
		}
	}
	var embedded []string
	if err := fs.WalkDir(extension.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(names, embedded) {
		t.Errorf("the zip holds %v, want the embedded files %v", names, embedded)
	}

	// Reproducible: the same input makes the same bytes.
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pack(extension.Files, out, "", stamp)
	if err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("packing the same input again made other bytes")
	}
}

func read(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTagMustBeTheVersion(t *testing.T) {
	_, err := pack(extension.Files, t.TempDir(), "v9.9.9", time.Time{})
	if err == nil || !strings.Contains(err.Error(), `the tag is "v9.9.9", but extension/manifest.json's version is "`+manifest.Version+`"`) {
		t.Errorf("error %v; want one containing %q", err, `the tag is "v9.9.9", but extension/manifest.json's version is "`+manifest.Version+`"`)
	}
	_, err = pack(extension.Files, t.TempDir(), manifest.Version, time.Time{})
	if err == nil || !strings.Contains(err.Error(), "the tag is") {
		t.Errorf("a tag without its v: error %v; want one containing %q", err, "the tag is")
	}
}

func TestManifestProblems(t *testing.T) {
	good := `{
  "version": "` + manifest.Version + `",
  "key": "AAAA",
  "name": "x"
}`
	for name, c := range map[string]struct{ manifest, err string }{
		"other version": {`{"version": "0.0.1", "key": "A"}`, "manifest.Version"},
		"no key line":   {`{"version": "` + manifest.Version + `", "key": "A"}`, `no "key" line`},
		"key last":      {"{\n  \"version\": \"" + manifest.Version + "\",\n  \"key\": \"A\"\n}", `no "key" line`},
		"two keys":      {"{\n\"version\": \"" + manifest.Version + "\",\n\"key\": \"A\",\n\"key\": \"B\",\n\"x\": 1}", `no "key" line`},
		"good":          {good, ""},
	} {
		t.Run(name, func(t *testing.T) {
			ext := fstest.MapFS{"manifest.json": {Data: []byte(c.manifest)}}
			_, err := pack(ext, t.TempDir(), "", time.Time{})
			if c.err == "" {
				if err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("error %v; want one containing %q", err, c.err)
			}
		})
	}
}
