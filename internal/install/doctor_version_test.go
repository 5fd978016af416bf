//go:build !windows

package install

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/doctor"
	"github.com/fillgate/fillgate/internal/manifest"
)

// storeID is an id such as the Chrome Web Store assigns.
const storeID = "abcdefghijklmnopabcdefghijklmnop"

// TestDoctorManifestWrittenBeforeListing: a host manifest from before
// fillgate was in a store lets only the unpacked copy start the host;
// doctor says so and fillgate install mends it.
func TestDoctorManifestWrittenBeforeListing(t *testing.T) {
	_, o := doctorHome(t) // installed before the listing
	o.Origins = manifest.Listed().WithStore(storeID)
	store := "chrome-extension://" + storeID + "/"
	o.Browsers = []string{"chrome"}
	d := runDoctor(context.Background(), o, healthy(t))
	bad := notOK(d)
	if len(bad) != 1 {
		t.Fatalf("%v: bad has %d items (%v), want %d", d.Text(), len(bad), bad, 1)
	}
	if bad[0].Name != "chrome" {
		t.Errorf("bad[0].Name = %q, want %q", bad[0].Name, "chrome")
	}
	if !strings.Contains(bad[0].Detail, "allowed_origins does not list "+store) {
		t.Errorf("got %q; want it to contain %q", bad[0].Detail, "allowed_origins does not list "+store)
	}
	if !strings.Contains(bad[0].Fix, "fillgate install") {
		t.Errorf("got %q; want it to contain %q", bad[0].Fix, "fillgate install")
	}

	_, err := Install(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := notOK(runDoctor(context.Background(), o, healthy(t))); len(got) != 0 {
		t.Errorf("notOK(runDoctor(context.Background(), o, healthy(t))) = %v, want it empty", got)
	}
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
				if err := os.MkdirAll(h.real(filepath.Dir(c.dpkg)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(h.real(c.dpkg), []byte("/usr/bin/fillgate\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			o.Binary = c.bin
			d := runDoctor(context.Background(), o, healthy(t))
			if d.Checks[0].Name != "binary" {
				t.Fatalf("d.Checks[0].Name = %q, want %q", d.Checks[0].Name, "binary")
			}
			if d.Checks[0].Level != doctor.OK {
				t.Errorf("the binary check's level = %v, want %v", d.Checks[0].Level, doctor.OK)
			}
			if !strings.Contains(d.Checks[0].Detail, c.want) {
				t.Errorf("got %q; want it to contain %q", d.Checks[0].Detail, c.want)
			}
		})
	}
}
