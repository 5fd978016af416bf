package install

import (
	"os"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMETableMatchesTheCode keeps the browser table in docs/browsers.md
// (between its browser-table markers) equal to the code's table;
// `go test ./internal/install -update` rewrites it.
func TestREADMETableMatchesTheCode(t *testing.T) {
	const path = "../../docs/browsers.md"
	const begin, end = "<!-- browser-table:begin -->\n", "<!-- browser-table:end -->"
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s := string(data)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, path+" lacks the browser-table markers")
	got := MarkdownTable()
	if *update {
		s = s[:i+len(begin)] + got + s[j:]
		require.NoError(t, os.WriteFile(path, []byte(s), 0o644))
		return
	}
	require.Equal(t, got, s[i+len(begin):j], "the browser table in "+path+" differs from the code; run go test ./internal/install -update")
}

func TestTableIsSound(t *testing.T) {
	s := &sys{Options: Options{Env: envOf(map[string]string{
		"HOME": "/home/u", "USERPROFILE": `C:\Users\u`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`, "APPDATA": `C:\Users\u\AppData\Roaming`,
	})}}
	seen := map[string]bool{}
	for _, b := range Table() {
		t.Run(b.Name, func(t *testing.T) {
			assert.False(t, seen[b.Name], "unique name")
			seen[b.Name] = true
			assert.NotEmpty(t, b.Title)
			assert.Contains(t, []manifest.Family{manifest.Chromium, manifest.Firefox}, b.Family)
			wantOS := []string{"linux", "darwin", "windows"}
			if b.Name == "arc" {
				wantOS = []string{"darwin"}
			}
			assert.Len(t, b.OS, len(wantOS))
			for _, os := range wantOS {
				pl, ok := b.OS[os]
				require.True(t, ok, os)
				s.os, s.p = os, osPath(os)
				assert.NotEmpty(t, append(append(pl.Profile, pl.Programs...), pl.Commands...), "%s: a way to find it", os)
				for _, tm := range append(append(append(append([]string{}, pl.User...), pl.System...), pl.Profile...), pl.Programs...) {
					p, err := s.expand(tm)
					require.NoError(t, err, tm)
					assert.True(t, s.p.isAbs(p), "%s expands to an absolute path, not %s", tm, p)
				}
				if os == "windows" {
					assert.NotEmpty(t, pl.Keys)
					for _, k := range pl.Keys {
						assert.True(t, strings.HasPrefix(k, `Software\`) && strings.HasSuffix(k, `\NativeMessagingHosts`), k)
						if b.Family == manifest.Firefox {
							assert.Equal(t, mozillaKey, k, "Firefox and its forks read Mozilla's key")
						}
					}
					continue
				}
				require.NotEmpty(t, pl.User)
				slug := "NativeMessagingHosts"
				if os == "linux" && b.Family == manifest.Firefox {
					slug = "native-messaging-hosts"
				}
				for _, u := range pl.User {
					assert.True(t, strings.HasSuffix(u, "/"+slug), u)
				}
				for _, sd := range append(append([]string{}, pl.System...), pl.SystemIfParent...) {
					assert.True(t, strings.HasPrefix(sd, "/"), sd)
					if os == "linux" {
						assert.True(t, strings.HasSuffix(sd, "/native-messaging-hosts"), sd)
					} else {
						assert.True(t, strings.HasSuffix(sd, "/NativeMessagingHosts"), sd)
					}
				}
			}
		})
	}
	assert.Equal(t, "chrome-dev", Lookup("chrome-unstable").Name)
	assert.Equal(t, "firefox", Lookup("firefox-esr").Name)
	assert.Nil(t, Lookup("safari"))
	b := Lookup("chrome")
	b.Title = "changed"
	assert.Equal(t, "Google Chrome", Lookup("chrome").Title, "Lookup returns a copy")
}

func TestExpand(t *testing.T) {
	s := &sys{Options: Options{Env: envOf(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "/cfg"})}, os: "linux", p: "linux"}
	p, err := s.expand("$XDG_CONFIG_HOME/chromium/NativeMessagingHosts")
	require.NoError(t, err)
	assert.Equal(t, "/cfg/chromium/NativeMessagingHosts", p)
	s.Env = envOf(map[string]string{"HOME": "/home/u", "XDG_CONFIG_HOME": "relative"})
	p, err = s.expand("$XDG_CONFIG_HOME/chromium")
	require.NoError(t, err)
	assert.Equal(t, "/home/u/.config/chromium", p, "a relative XDG_CONFIG_HOME is ignored, as the spec says")
	p, err = s.expand("/etc/opt/chrome/native-messaging-hosts")
	require.NoError(t, err)
	assert.Equal(t, "/etc/opt/chrome/native-messaging-hosts", p)
	s.Env = envOf(map[string]string{})
	_, err = s.expand("~/.mozilla")
	assert.ErrorContains(t, err, "set HOME")

	w := &sys{Options: Options{Env: envOf(map[string]string{"LOCALAPPDATA": `C:\L`})}, os: "windows", p: "windows"}
	p, err = w.expand(`%LOCALAPPDATA%\Google\Chrome\User Data`)
	require.NoError(t, err)
	assert.Equal(t, `C:\L\Google\Chrome\User Data`, p)
	p, err = w.expand(`%ProgramFiles(x86)%\Microsoft\Edge\Application\msedge.exe`)
	require.NoError(t, err)
	assert.Equal(t, `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`, p)
	_, err = w.expand(`%APPDATA%\Mozilla`)
	assert.ErrorContains(t, err, "set APPDATA")
}
