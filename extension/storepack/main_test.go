package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreZip: the store package holds exactly the files the binary
// embeds, byte for byte, but for manifest.json, which loses "key" and
// nothing else.
func TestStoreZip(t *testing.T) {
	out := t.TempDir()
	stamp := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	path, err := pack(extension.Files, out, "v"+manifest.Version, stamp)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(out, "fillgate-"+manifest.Version+"-chrome.zip"), path)

	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		assert.True(t, f.Modified.Equal(stamp), "%s stamped %v", f.Name, f.Modified)
		got := read(t, f)
		want, err := fs.ReadFile(extension.Files, f.Name)
		require.NoError(t, err)
		unpacked, err := os.ReadFile(filepath.Join(out, "unpacked", filepath.FromSlash(f.Name)))
		require.NoError(t, err)
		assert.Equal(t, want, unpacked, "unpacked/%s is the embedded file", f.Name)
		if f.Name != "manifest.json" {
			assert.Equal(t, want, got, f.Name)
			continue
		}
		var store, src map[string]any
		require.NoError(t, json.Unmarshal(got, &store))
		require.NoError(t, json.Unmarshal(want, &src))
		assert.NotContains(t, store, "key", "the Chrome Web Store refuses a manifest with a key")
		require.Contains(t, src, "key")
		delete(src, "key")
		assert.Equal(t, src, store, "nothing but key changes")
	}
	var embedded []string
	require.NoError(t, fs.WalkDir(extension.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			embedded = append(embedded, p)
		}
		return err
	}))
	assert.Equal(t, embedded, names)

	// Reproducible: the same input makes the same bytes.
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = pack(extension.Files, out, "", stamp)
	require.NoError(t, err)
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(first, second))
}

func read(t *testing.T, f *zip.File) []byte {
	t.Helper()
	r, err := f.Open()
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

func TestTagMustBeTheVersion(t *testing.T) {
	_, err := pack(extension.Files, t.TempDir(), "v9.9.9", time.Time{})
	assert.ErrorContains(t, err, `the tag is "v9.9.9", but extension/manifest.json's version is "`+manifest.Version+`"`)
	_, err = pack(extension.Files, t.TempDir(), manifest.Version, time.Time{})
	assert.ErrorContains(t, err, "the tag is", "a tag without its v")
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
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, c.err)
		})
	}
}
