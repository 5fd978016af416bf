package extension

import (
	"encoding/json"
	"io/fs"
	"slices"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
)

type extManifest struct {
	ManifestVersion int    `json:"manifest_version"`
	Version         string `json:"version"`
	Key             string `json:"key"`
	Background      struct {
		ServiceWorker string   `json:"service_worker"`
		Scripts       []string `json:"scripts"`
	} `json:"background"`
	BrowserSpecificSettings struct {
		Gecko struct {
			ID string `json:"id"`
		} `json:"gecko"`
	} `json:"browser_specific_settings"`
	Permissions []string `json:"permissions"`
	Action      struct {
		DefaultPopup string            `json:"default_popup"`
		DefaultIcon  map[string]string `json:"default_icon"`
	} `json:"action"`
	Icons          map[string]string `json:"icons"`
	ContentScripts []struct {
		Matches   []string `json:"matches"`
		JS        []string `json:"js"`
		World     string   `json:"world"`
		RunAt     string   `json:"run_at"`
		AllFrames bool     `json:"all_frames"`
	} `json:"content_scripts"`
}

func readManifest(t *testing.T) extManifest {
	t.Helper()
	data, err := fs.ReadFile(Files, "manifest.json")
	if err != nil {
		t.Fatalf("read embedded manifest.json: %v", err)
	}
	var m extManifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("parse manifest.json: %v", err)
	}
	return m
}

func TestManifestIdentity(t *testing.T) {
	m := readManifest(t)
	if m.Key != manifest.ExtensionKey {
		t.Errorf("manifest.json key differs from manifest.ExtensionKey")
	}
	id, err := manifest.IDFromKey(m.Key)
	if err != nil {
		t.Fatalf("IDFromKey: %v", err)
	}
	if id != manifest.ExtensionID {
		t.Errorf("key yields id %s, want %s", id, manifest.ExtensionID)
	}
	if got := m.BrowserSpecificSettings.Gecko.ID; got != manifest.FirefoxID {
		t.Errorf("gecko id = %q, want %q", got, manifest.FirefoxID)
	}
	if m.ManifestVersion != 3 || m.Version != "0.1.0" {
		t.Errorf("manifest_version %d, version %q; want 3, 0.1.0", m.ManifestVersion, m.Version)
	}
}

// TestManifestFilesEmbedded checks that every file manifest.json names is in
// Files, so the unpacked copy `fillgate install` writes loads.
func TestManifestFilesEmbedded(t *testing.T) {
	m := readManifest(t)
	names := append([]string{m.Background.ServiceWorker, m.Action.DefaultPopup}, m.Background.Scripts...)
	for _, icons := range []map[string]string{m.Icons, m.Action.DefaultIcon} {
		for _, p := range icons {
			names = append(names, p)
		}
	}
	for _, name := range append(names, "popup.js", "popup.css") {
		if _, err := fs.Stat(Files, name); err != nil {
			t.Errorf("manifest names %q, but it is not embedded: %v", name, err)
		}
	}
	if want := []string{"inpage.js", "passkeys.js", "session.js", "sw.js"}; !slices.Equal(m.Background.Scripts, want) || m.Background.ServiceWorker != "sw.js" {
		t.Errorf("background = %+v; want service_worker sw.js and scripts %v", m.Background, want)
	}
}

// TestManifestDebuggerPermission checks that the extension asks for the
// debugger permission, which chrome.debugger.getTargets() needs to tell
// the host whether anything is attached to the browser's pages (README,
// Permissions, says why it is worth its install warning).
func TestManifestDebuggerPermission(t *testing.T) {
	m := readManifest(t)
	for _, p := range m.Permissions {
		if p == "debugger" {
			return
		}
	}
	t.Errorf("permissions = %v; want debugger among them", m.Permissions)
}

// TestManifestPasskeyDoor checks the passkey door's two content scripts:
// door.js in the page's main world and relay.js in the isolated one, both
// at document start, both in the top frame only (a frame's WebAuthn call
// is always the browser's own), on http and https pages only.
func TestManifestPasskeyDoor(t *testing.T) {
	m := readManifest(t)
	if len(m.ContentScripts) != 2 {
		t.Fatalf("content_scripts = %+v; want door.js and relay.js", m.ContentScripts)
	}
	for i, want := range []struct{ js, world string }{{"door.js", "MAIN"}, {"relay.js", ""}} {
		cs := m.ContentScripts[i]
		if len(cs.JS) != 1 || cs.JS[0] != want.js || cs.World != want.world || cs.RunAt != "document_start" || cs.AllFrames {
			t.Errorf("content script %d = %+v; want %s in world %q at document_start, top frame only", i, cs, want.js, want.world)
		}
		if len(cs.Matches) != 2 || cs.Matches[0] != "https://*/*" || cs.Matches[1] != "http://*/*" {
			t.Errorf("content script %s matches %v; want https and http pages", want.js, cs.Matches)
		}
		if _, err := fs.Stat(Files, want.js); err != nil {
			t.Errorf("%s is not embedded: %v", want.js, err)
		}
	}
}
