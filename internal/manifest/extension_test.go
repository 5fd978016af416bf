package manifest

import (
	"encoding/json"
	"testing"

	"github.com/fillgate/fillgate/extension"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtensionManifestMatchesIdentity keeps extension/manifest.json and the
// constants here from drifting apart: the key the browser derives the
// extension id from, and the Firefox add-on id.
func TestExtensionManifestMatchesIdentity(t *testing.T) {
	data, err := extension.Files.ReadFile("manifest.json")
	require.NoError(t, err)
	var m struct {
		Version  string `json:"version"`
		Key      string `json:"key"`
		Settings struct {
			Gecko struct {
				ID string `json:"id"`
			} `json:"gecko"`
		} `json:"browser_specific_settings"`
	}
	require.NoError(t, json.Unmarshal(data, &m))

	require.NotEmpty(t, m.Key, "extension/manifest.json has no \"key\", so Chromium would give the extension a random id that no host manifest allows")
	id, err := IDFromKey(m.Key)
	require.NoError(t, err)
	assert.Equal(t, ExtensionID, id, "the key in extension/manifest.json yields another extension id")
	assert.Equal(t, ExtensionKey, m.Key)
	assert.Equal(t, FirefoxID, m.Settings.Gecko.ID, "browser_specific_settings.gecko.id")
	// One version: the host's is the extension's (docs/release.md).
	assert.Equal(t, Version, m.Version, "manifest.Version and extension/manifest.json's version")
}
