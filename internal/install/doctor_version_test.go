//go:build !windows

package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeID is an id such as the Chrome Web Store assigns.
const storeID = "abcdefghijklmnopabcdefghijklmnop"

// listedInStore makes fillgate accept storeID's copy for the test, as it
// does once manifest.ChromeWebStoreID is set.
func listedInStore(t *testing.T) string {
	t.Helper()
	old := manifest.ChromiumOrigins
	manifest.ChromiumOrigins = []string{manifest.ExtensionOrigin, "chrome-extension://" + storeID + "/"}
	t.Cleanup(func() { manifest.ChromiumOrigins = old })
	return manifest.ChromiumOrigins[1]
}

// TestDoctorStoreExtensionVersions: the extension from a store updates on
// its own, so when it and the host differ, doctor says which of the two
// to update.
func TestDoctorStoreExtensionVersions(t *testing.T) {
	store := listedInStore(t)
	_, o := doctorHome(t)
	v := embeddedVersion(t)
	cases := []struct {
		ext, host, cli string
		detail, fix    string
	}{
		{"0.9.0", "0.1.0", "0.1.0", `chrome runs extension "0.9.0" from the store with host "0.1.0"`,
			"put the newer release's fillgate where this one is (or go install github.com/fillgate/fillgate@latest), then restart the browser"},
		{"0.9.0", "0.1.0", "0.9.0", `chrome runs extension "0.9.0" from the store with host "0.1.0"`, "restart the browser so it starts this binary"},
		{"0.0.9", "0.1.0", "0.1.0", `chrome runs extension "0.0.9" from the store with host "0.1.0"`,
			"update fillgate's extension: on chrome://extensions turn on Developer mode and click Update (or wait: the store updates it within a few hours)"},
		{"0.0.9", "0.0.9", "0.1.0", `chrome runs host "0.0.9"; this binary is "0.1.0"`, "restart the browser so it starts this binary"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			p := healthy(t)
			p.Version = c.cli
			p.Hosts = func(context.Context) ([]HostStatus, error) {
				return []HostStatus{{PID: 7, Version: c.host, Browser: "chrome", Caller: store, Connected: true, ExtensionVersion: c.ext}}, nil
			}
			d := Doctor(context.Background(), o, p)
			var got []Check
			for _, ch := range notOK(d) {
				if ch.Name == "host 7" {
					got = append(got, ch)
				}
			}
			require.Len(t, got, 1, d.Text())
			assert.Contains(t, got[0].Detail, c.detail)
			assert.Equal(t, c.fix, got[0].Fix)
		})
	}

	// A store copy in step with the host is fine, whatever the unpacked
	// copy this binary carries says.
	p := healthy(t)
	p.Version = "0.9.0"
	p.Hosts = func(context.Context) ([]HostStatus, error) {
		return []HostStatus{{PID: 7, Version: "0.9.0", Browser: "chrome", Caller: store, Connected: true, ExtensionVersion: "0.9.0"}}, nil
	}
	d := Doctor(context.Background(), o, p)
	assert.Empty(t, notOK(d), d.Text())
	assert.NotEqual(t, "0.9.0", v)
}

// TestDoctorManifestWrittenBeforeListing: a host manifest from before
// fillgate was in a store lets only the unpacked copy start the host;
// doctor says so and fillgate install mends it.
func TestDoctorManifestWrittenBeforeListing(t *testing.T) {
	_, o := doctorHome(t)
	store := listedInStore(t)
	o.Browsers = []string{"chrome"}
	d := Doctor(context.Background(), o, healthy(t))
	bad := notOK(d)
	require.Len(t, bad, 1, d.Text())
	assert.Equal(t, "chrome", bad[0].Name)
	assert.Contains(t, bad[0].Detail, "allowed_origins does not list "+store)
	assert.Contains(t, bad[0].Fix, "fillgate install")

	_, err := Install(context.Background(), o)
	require.NoError(t, err)
	assert.Empty(t, notOK(Doctor(context.Background(), o, healthy(t))))
}

func TestDoctorNamesHowFillgateWasInstalled(t *testing.T) {
	cases := []struct {
		bin, dpkg string
		want      string
	}{
		{"/usr/bin/fillgate", "/var/lib/dpkg/info/fillgate.list", "fillgate 0.1.0 at /usr/bin/fillgate, installed with the .deb package"},
		{"/usr/bin/fillgate", "", "fillgate 0.1.0 at /usr/bin/fillgate, installed with a system package"},
		{"/home/linuxbrew/.linuxbrew/Cellar/fillgate/0.1.0/bin/fillgate", "",
			"installed with Homebrew (run fillgate install again after each brew upgrade)"},
		{"/opt/homebrew/Caskroom/fillgate/0.1.0/fillgate", "",
			"fillgate 0.1.0 at /opt/homebrew/Caskroom/fillgate/0.1.0/fillgate, installed with Homebrew (run fillgate install again after each brew upgrade)"},
		{"/home/u/go/bin/fillgate", "", "fillgate 0.1.0 at ~/go/bin/fillgate"},
	}
	for _, c := range cases {
		t.Run(c.bin, func(t *testing.T) {
			h, o := doctorHome(t)
			h.writeBin(t, c.bin)
			if c.dpkg != "" {
				require.NoError(t, os.MkdirAll(h.real(filepath.Dir(c.dpkg)), 0o755))
				require.NoError(t, os.WriteFile(h.real(c.dpkg), []byte("/usr/bin/fillgate\n"), 0o644))
			}
			o.Binary = c.bin
			d := Doctor(context.Background(), o, healthy(t))
			require.Equal(t, "binary", d.Checks[0].Name)
			assert.Equal(t, OK, d.Checks[0].Level)
			assert.Contains(t, d.Checks[0].Detail, c.want)
		})
	}
}

func TestNewer(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"0.2.0", "0.1.0", true}, {"0.10.0", "0.9.0", true}, {"1.0", "0.9.9", true}, {"0.1.0.1", "0.1.0", true},
		{"0.1.0", "0.1.0", false}, {"0.1.0", "0.2.0", false}, {"0.1.0", "0.1.0.0", false}, {"x", "0.1.0", false}, {"0.2.0", "", false},
	} {
		assert.Equal(t, c.want, newer(c.a, c.b), "%s > %s", c.a, c.b)
	}
}
