// Command storepack lays out fillgate's extension for the browsers' stores,
// from the very files the fillgate binary embeds (extension.Files):
//
//	go run ./extension/storepack -out DIR [-tag vX.Y.Z] [-date RFC3339]
//
// It writes DIR/unpacked/, the extension as fillgate install unpacks it
// (web-ext lints it and builds the Firefox package from it), and
// DIR/fillgate-<version>-chrome.zip for the Chrome Web Store and Microsoft
// Edge Add-ons: the same files, with manifest.json's "key" removed, since
// the Chrome Web Store refuses a package that has one and assigns its own
// id (docs/release.md; internal/manifest/stores.go holds the ids the stores
// assign). The zip is reproducible: sorted entries, one timestamp (-date,
// the commit's time in a release).
//
// With -tag, it fails unless the tag is "v" + manifest.json's version, the
// one version fillgate and its extension share: a release tag that does
// not match would stamp a binary whose version its extension does not
// carry.
package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"time"

	"github.com/fillgate/fillgate/extension"
	"github.com/fillgate/fillgate/internal/manifest"
)

func main() {
	out := flag.String("out", "", "the folder to write into (required)")
	tag := flag.String("tag", "", "the release tag, which must be v + the extension's version")
	date := flag.String("date", "", "the time stamped on the zip's entries, RFC 3339 (default 1980-01-01)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	stamp := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	if *date != "" {
		t, err := time.Parse(time.RFC3339, *date)
		if err != nil {
			fail(fmt.Errorf("-date: %w", err))
		}
		stamp = t.UTC()
	}
	zipPath, err := pack(extension.Files, *out, *tag, stamp)
	if err != nil {
		fail(err)
	}
	fmt.Println(zipPath)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "storepack: %v\n", err)
	os.Exit(1)
}

// pack writes out/unpacked and the Chrome Web Store zip from ext, and
// returns the zip's path.
func pack(ext fs.FS, out, tag string, stamp time.Time) (string, error) {
	raw, err := fs.ReadFile(ext, "manifest.json")
	if err != nil {
		return "", err
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", fmt.Errorf("manifest.json: %w", err)
	}
	if m.Version != manifest.Version {
		return "", fmt.Errorf("manifest.json's version is %q but manifest.Version is %q: they must be one", m.Version, manifest.Version)
	}
	if tag != "" && tag != "v"+m.Version {
		return "", fmt.Errorf("the tag is %q, but extension/manifest.json's version is %q: tag v%s, or bump the version (manifest.json and manifest.Version) first", tag, m.Version, m.Version)
	}
	storeManifest, err := withoutKey(raw)
	if err != nil {
		return "", err
	}

	unpacked := filepath.Join(out, "unpacked")
	if err := os.RemoveAll(unpacked); err != nil {
		return "", err
	}
	zipPath := filepath.Join(out, "fillgate-"+m.Version+"-chrome.zip")
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// fs.WalkDir visits in lexical order, so the zip is the same each time.
	err = fs.WalkDir(ext, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(ext, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(unpacked, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		if p == "manifest.json" {
			data = storeManifest
		}
		h := &zip.FileHeader{Name: p, Method: zip.Deflate, Modified: stamp}
		h.SetMode(0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	if err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return zipPath, os.WriteFile(zipPath, buf.Bytes(), 0o644)
}

// keyLine is manifest.json's "key" member on a line of its own, as the
// file keeps it.
var keyLine = regexp.MustCompile(`(?m)^[ \t]*"key":[ \t]*"[A-Za-z0-9+/=]*",[ \t]*\r?\n`)

// withoutKey removes the "key" line from manifest.json and leaves every
// other byte as it was; it checks that the result is the same manifest
// less "key".
func withoutKey(raw []byte) ([]byte, error) {
	if len(keyLine.FindAll(raw, -1)) != 1 {
		return nil, errors.New(`manifest.json has no "key" line of its own (a line "key": "...", before other members) to remove`)
	}
	out := keyLine.ReplaceAll(raw, nil)
	var before, after map[string]any
	if err := json.Unmarshal(raw, &before); err != nil {
		return nil, fmt.Errorf("manifest.json: %w", err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		return nil, fmt.Errorf("manifest.json without its key is not JSON: %w", err)
	}
	delete(before, "key")
	if !reflect.DeepEqual(before, after) {
		return nil, errors.New(`removing "key" from manifest.json changed other members`)
	}
	return out, nil
}
