package manifest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"path"
	"reflect"
	"strings"
	"testing"
)

func TestIDFromKeyMatchesHexMapping(t *testing.T) {
	// A second, independent route to the id: hex-encode the first 16 bytes
	// of the digest and shift each hex digit 0-f onto a-p.
	der, err := base64.StdEncoding.DecodeString(ExtensionKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(der)
	want := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'a' + (r - '0')
		}
		return 'k' + (r - 'a')
	}, hex.EncodeToString(sum[:16]))

	got, err := IDFromKey(ExtensionKey)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("IDFromKey(ExtensionKey) = %v, want %v", got, want)
	}
	if ExtensionID != want {
		t.Errorf("ExtensionID = %v, want %v", ExtensionID, want)
	}
	if ExtensionOrigin != "chrome-extension://"+want+"/" {
		t.Errorf("ExtensionOrigin = %q, want %q", ExtensionOrigin, "chrome-extension://"+want+"/")
	}
}

func TestIDFromKeyRejectsBadBase64(t *testing.T) {
	_, err := IDFromKey("not base64!")
	if err == nil || !strings.Contains(err.Error(), "not base64") {
		t.Errorf("IDFromKey(\"not base64!\"): error %v; want one containing %q", err, "not base64")
	}
}

// unixAbs checks paths as for a Unix target: the manifests here carry
// Unix paths, so the tests hold on every OS they run on (Windows under
// tests/windows included; TestCheckUsesTargetAbs checks a Windows path).
var unixAbs = path.IsAbs

func TestNewChromium(t *testing.T) {
	h, err := New(Chromium, "/usr/local/bin/fillgate", Listed())
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
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
	if got := string(b); got != want {
		t.Errorf("string(b) = %q, want %q", got, want)
	}
	if got := h.Check(Chromium, Listed(), unixAbs); len(got) != 0 {
		t.Errorf("h.Check(Chromium, Listed(), unixAbs) = %v, want it empty", got)
	}
}

func TestNewFirefox(t *testing.T) {
	h, err := New(Firefox, "/opt/fill&gate/fillgate", Listed())
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	const allowed = `"allowed_extensions": [
    "fillgate@fillgate.dev"
  ]`
	if !strings.Contains(got, allowed) {
		t.Errorf("got %q; want it to contain %q", got, allowed)
	}
	if strings.Contains(got, "allowed_origins") {
		t.Errorf("got %q; want it not to contain %q", got, "allowed_origins")
	}
	if !strings.Contains(got, `"/opt/fill&gate/fillgate"`) {
		t.Errorf("paths are not HTML-escaped: got %q; want it to contain %q", got, `"/opt/fill&gate/fillgate"`)
	}
	if got := h.Check(Firefox, Listed(), unixAbs); len(got) != 0 {
		t.Errorf("h.Check(Firefox, Listed(), unixAbs) = %v, want it empty", got)
	}
}

func TestNewRejects(t *testing.T) {
	_, err := New("safari", "/bin/fillgate", Listed())
	if err == nil {
		t.Errorf("New(\"safari\", \"/bin/fillgate\"): got no error, want one")
	}
	_, err = New(Chromium, "", Listed())
	if err == nil {
		t.Errorf("New(Chromium, \"\"): got no error, want one")
	}
}

func TestParseRoundTrip(t *testing.T) {
	h, err := New(Chromium, `C:\Program Files\fillgate\fillgate.exe`, Listed())
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(append([]byte("\xef\xbb\xbf"), b...))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, h) {
		t.Errorf("Parse(Marshal(h)) = %+v, want %+v", got, h)
	}
}

func TestParseNamesLineOfSyntaxError(t *testing.T) {
	_, err := Parse([]byte("{\n  \"name\": \"dev.fillgate.host\",\n  \"path\": ,\n}\n"))
	if err == nil {
		t.Fatalf("Parse of bad JSON: got no error, want one")
	}
	if got := err.Error(); !strings.Contains(got, "not valid JSON: line 3, column") {
		t.Errorf("got %q; want it to contain %q", got, "not valid JSON: line 3, column")
	}
}

func TestParseWrongType(t *testing.T) {
	_, err := Parse([]byte(`{"name": "dev.fillgate.host", "allowed_origins": "chrome-extension://x/"}`))
	if err == nil {
		t.Fatalf("Parse of a wrong type: got no error, want one")
	}
	if got := err.Error(); !strings.Contains(got, `field "allowed_origins" has the wrong type`) {
		t.Errorf("got %q; want it to contain %q", got, `field "allowed_origins" has the wrong type`)
	}
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
			ps := c.host.Check(c.family, Listed(), unixAbs)
			if len(ps) != 1 {
				t.Fatalf("ps has %d items (%v), want %d", len(ps), ps, 1)
			}
			if ps[0].Field != c.field {
				t.Errorf("ps[0].Field = %v, want %v", ps[0].Field, c.field)
			}
			if !strings.Contains(ps[0].Detail, c.detail) {
				t.Errorf("ps[0].Detail = %q; want it to contain %q", ps[0].Detail, c.detail)
			}
		})
	}
}

func TestCheckUsesTargetAbs(t *testing.T) {
	h, err := New(Chromium, `C:\fillgate\fillgate.exe`, Listed())
	if err != nil {
		t.Fatal(err)
	}
	winAbs := func(p string) bool { return len(p) > 2 && p[1] == ':' && p[2] == '\\' }
	if got := h.Check(Chromium, Listed(), winAbs); len(got) != 0 {
		t.Errorf("h.Check(Chromium, Listed(), winAbs) = %v, want it empty", got)
	}
	if len(h.Check(Chromium, Listed(), func(string) bool { return false })) == 0 {
		t.Errorf("Check with an IsAbs that says no: found no problem, want one")
	}
}
