package manifest

import (
	"encoding/json"
	"testing"

	"github.com/fillgate/fillgate/extension"
)

// TestExtensionManifestMatchesIdentity keeps extension/manifest.json and the
// constants here from drifting apart: the key the browser derives the
// extension id from, and the Firefox add-on id.
func TestExtensionManifestMatchesIdentity(t *testing.T) {
	data, err := extension.Files.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version  string `json:"version"`
		Key      string `json:"key"`
		Settings struct {
			Gecko struct {
				ID string `json:"id"`
			} `json:"gecko"`
		} `json:"browser_specific_settings"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}

	if len(m.Key) == 0 {
		t.Fatalf("extension/manifest.json has no \"key\", so Chromium would give the extension a random id that no host manifest allows: m.Key is empty, want it not empty")
	}
	id, err := IDFromKey(m.Key)
	if err != nil {
		t.Fatal(err)
	}
	if id != ExtensionID {
		t.Errorf("the key in extension/manifest.json yields another extension id: got %v, want %v", id, ExtensionID)
	}
	if m.Key != ExtensionKey {
		t.Errorf("m.Key = %v, want %v", m.Key, ExtensionKey)
	}
	if m.Settings.Gecko.ID != FirefoxID {
		t.Errorf("browser_specific_settings.gecko.id: got %v, want %v", m.Settings.Gecko.ID, FirefoxID)
	}
	// One version: the host's is the extension's (docs/release.md).
	if m.Version != Version {
		t.Errorf("manifest.Version and extension/manifest.json's version: got %v, want %v", m.Version, Version)
	}
}
