package manifest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIDFromKeyMatchesHexMapping(t *testing.T) {
	// A second, independent route to the id: hex-encode the first 16 bytes
	// of the digest and shift each hex digit 0-f onto a-p.
	der, err := base64.StdEncoding.DecodeString(ExtensionKey)
	require.NoError(t, err)
	sum := sha256.Sum256(der)
	want := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'a' + (r - '0')
		}
		return 'k' + (r - 'a')
	}, hex.EncodeToString(sum[:16]))

	got, err := IDFromKey(ExtensionKey)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, want, ExtensionID)
	assert.Equal(t, "chrome-extension://"+want+"/", ExtensionOrigin)
}

func TestIDFromKeyRejectsBadBase64(t *testing.T) {
	_, err := IDFromKey("not base64!")
	assert.ErrorContains(t, err, "not base64")
}

// unixAbs checks paths as for a Unix target: the manifests here carry
// Unix paths, so the tests hold on every OS they run on (Windows under
// tests/windows included; TestCheckUsesTargetAbs checks a Windows path).
var unixAbs = path.IsAbs

func TestNewChromium(t *testing.T) {
	h, err := New(Chromium, "/usr/local/bin/fillgate")
	require.NoError(t, err)
	b, err := h.Marshal()
	require.NoError(t, err)
	want := `{
  "name": "dev.fillgate.host",
  "description": "` + Description + `",
  "path": "/usr/local/bin/fillgate",
  "type": "stdio",
  "allowed_origins": [
    "chrome-extension://` + ExtensionID + `/"
  ]
}
`
	assert.Equal(t, want, string(b))
	assert.Empty(t, h.Check(Chromium, unixAbs))
}

func TestNewFirefox(t *testing.T) {
	h, err := New(Firefox, "/opt/fill&gate/fillgate")
	require.NoError(t, err)
	b, err := h.Marshal()
	require.NoError(t, err)
	assert.Contains(t, string(b), `"allowed_extensions": [
    "fillgate@fillgate.dev"
  ]`)
	assert.NotContains(t, string(b), "allowed_origins")
	assert.Contains(t, string(b), `"/opt/fill&gate/fillgate"`, "paths are not HTML-escaped")
	assert.Empty(t, h.Check(Firefox, unixAbs))
}

func TestNewRejects(t *testing.T) {
	_, err := New("safari", "/bin/fillgate")
	assert.Error(t, err)
	_, err = New(Chromium, "")
	assert.Error(t, err)
}

func TestParseRoundTrip(t *testing.T) {
	h, err := New(Chromium, `C:\Program Files\fillgate\fillgate.exe`)
	require.NoError(t, err)
	b, err := h.Marshal()
	require.NoError(t, err)
	got, err := Parse(append([]byte("\xef\xbb\xbf"), b...))
	require.NoError(t, err)
	assert.Equal(t, h, got)
}

func TestParseNamesLineOfSyntaxError(t *testing.T) {
	_, err := Parse([]byte("{\n  \"name\": \"dev.fillgate.host\",\n  \"path\": ,\n}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not valid JSON: line 3, column")
}

func TestParseWrongType(t *testing.T) {
	_, err := Parse([]byte(`{"name": "dev.fillgate.host", "allowed_origins": "chrome-extension://x/"}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `field "allowed_origins" has the wrong type`)
}

func TestCheckFindsEachProblem(t *testing.T) {
	other := "chrome-extension://" + strings.Repeat("b", 32) + "/"
	cases := []struct {
		name   string
		host   Host
		family Family
		field  string
		detail string
	}{
		{"name", Host{Name: "com.other", Type: "stdio", Path: "/x", AllowedOrigins: []string{ExtensionOrigin}}, Chromium, "name", `is "com.other"`},
		{"type", Host{Name: HostName, Type: "socket", Path: "/x", AllowedOrigins: []string{ExtensionOrigin}}, Chromium, "type", `is "socket"`},
		{"no path", Host{Name: HostName, Type: "stdio", AllowedOrigins: []string{ExtensionOrigin}}, Chromium, "path", "is missing"},
		{"relative path", Host{Name: HostName, Type: "stdio", Path: "bin/fillgate", AllowedOrigins: []string{ExtensionOrigin}}, Chromium, "path", "not absolute"},
		{"wrong id", Host{Name: HostName, Type: "stdio", Path: "/x", AllowedOrigins: []string{other}}, Chromium, "allowed_origins", "does not list " + ExtensionOrigin + " (it lists " + other + ")"},
		{"wildcard", Host{Name: HostName, Type: "stdio", Path: "/x", AllowedOrigins: []string{ExtensionOrigin, "chrome-extension://*/"}}, Chromium, "allowed_origins", "rejects the whole manifest"},
		{"firefox style in chromium", Host{Name: HostName, Type: "stdio", Path: "/x", AllowedExtensions: []string{FirefoxID}}, Chromium, "allowed_origins", "is missing"},
		{"chromium style in firefox", Host{Name: HostName, Type: "stdio", Path: "/x", AllowedOrigins: []string{ExtensionOrigin}}, Firefox, "allowed_extensions", "is missing"},
		{"wrong add-on", Host{Name: HostName, Type: "stdio", Path: "/x", AllowedExtensions: []string{"other@example.com"}}, Firefox, "allowed_extensions", "does not list fillgate@fillgate.dev"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := c.host.Check(c.family, unixAbs)
			require.Len(t, ps, 1, "%v", ps)
			assert.Equal(t, c.field, ps[0].Field)
			assert.Contains(t, ps[0].Detail, c.detail)
		})
	}
}

func TestCheckUsesTargetAbs(t *testing.T) {
	h, err := New(Chromium, `C:\fillgate\fillgate.exe`)
	require.NoError(t, err)
	winAbs := func(p string) bool { return len(p) > 2 && p[1] == ':' && p[2] == '\\' }
	assert.Empty(t, h.Check(Chromium, winAbs))
	assert.NotEmpty(t, h.Check(Chromium, func(string) bool { return false }))
}
