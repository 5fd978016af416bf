package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeID is an id such as a store assigns.
const storeID = "abcdefghijklmnopabcdefghijklmnop"

// listed makes the host accept storeID as a store's copy for the test.
func listed(t *testing.T) string {
	t.Helper()
	old := ChromiumOrigins
	ChromiumOrigins = chromiumOrigins(ExtensionID, storeID)
	t.Cleanup(func() { ChromiumOrigins = old })
	return "chrome-extension://" + storeID + "/"
}

func TestStoreIDsAreWellFormed(t *testing.T) {
	// chromiumOrigins panics on a malformed id, so a bad constant fails
	// every test run, not a person's browser.
	assert.Equal(t, ExtensionOrigin, ChromiumOrigins[0], "the unpacked extension's origin comes first")
	assert.Len(t, ChromiumOrigins, 1+len(nonEmpty(ChromeWebStoreID, EdgeAddonsID)))
	for _, s := range Stores() {
		assert.NotEmpty(t, s.Page, s.Name)
		if s.Family == Chromium {
			assert.Regexp(t, idPattern, s.ID, s.Name)
			assert.Contains(t, ChromiumOrigins, "chrome-extension://"+s.ID+"/")
		}
	}
}

func nonEmpty(ids ...string) []string {
	var out []string
	for _, id := range ids {
		if id != "" {
			out = append(out, id)
		}
	}
	return out
}

func TestChromiumOriginsRejectMalformedIDs(t *testing.T) {
	assert.Equal(t, []string{"chrome-extension://" + storeID + "/"}, chromiumOrigins("", storeID, ""))
	for _, bad := range []string{"ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP", "abcdefghijklmnopabcdefghijklmnoz", "abc", storeID + "/", "*"} {
		assert.Panics(t, func() { chromiumOrigins(bad) }, bad)
	}
}

func TestStoreCopyIsAllowed(t *testing.T) {
	store := listed(t)

	h, err := New(Chromium, "/usr/bin/fillgate")
	require.NoError(t, err)
	assert.Equal(t, []string{ExtensionOrigin, store}, h.AllowedOrigins, "the unpacked copy and the store's")
	assert.Empty(t, h.Check(Chromium, unixAbs))

	for _, origin := range []string{ExtensionOrigin, store} {
		c, err := ParseCaller([]string{origin})
		require.NoError(t, err, origin)
		assert.Equal(t, Caller{Family: Chromium, ID: origin}, c)
	}
	_, err = ParseCaller([]string{"chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"})
	assert.ErrorContains(t, err, "not fillgate's extension ("+ExtensionOrigin+" or "+store+")")

	assert.True(t, IsStoreOrigin(store))
	assert.False(t, IsStoreOrigin(ExtensionOrigin))
	assert.False(t, IsStoreOrigin("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"))
}

// TestManifestBeforeListingMissesStore: a host manifest written before
// fillgate was listed allows only the unpacked copy, so the store's copy
// could not start the host; Check says so, and doctor's fix (fillgate
// install) rewrites it.
func TestManifestBeforeListingMissesStore(t *testing.T) {
	store := listed(t)
	h := Host{Name: HostName, Type: "stdio", Path: "/usr/bin/fillgate", AllowedOrigins: []string{ExtensionOrigin}}
	assert.Equal(t, []Problem{{Field: "allowed_origins", Detail: "does not list " + store + " (it lists " + ExtensionOrigin + ")"}},
		h.Check(Chromium, unixAbs))
}

func TestBuildInfo(t *testing.T) {
	assert.Equal(t, "0.1.0", BuildInfo{Version: "0.1.0"}.String())
	assert.Equal(t, "0.1.0 (commit 0123456789ab, 2026-05-01T10:00:00Z)",
		BuildInfo{Version: "0.1.0", Commit: "0123456789abcdef0123456789abcdef01234567", Date: "2026-05-01T10:00:00Z"}.String())
	assert.Equal(t, "0.1.0 (commit 0123456789ab with uncommitted changes)",
		BuildInfo{Version: "0.1.0", Commit: "0123456789abcdef", Modified: true}.String())

	// Stamped values win over the toolchain's record.
	oldC, oldD := Commit, Date
	t.Cleanup(func() { Commit, Date = oldC, oldD })
	Commit, Date = "feedfacefeedfacefeedfacefeedfacefeedface", "2026-05-01T10:00:00Z"
	assert.Equal(t, BuildInfo{Version: Version, Commit: Commit, Date: Date}, Build())
}
