package fgrun

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Installed reads what `fillgate install --json --browser … --user-data-dir
// profile` printed (out) and the code it exited with, as a person's first
// install for that profile: it fails t unless the run wrote one host
// manifest, new, into the profile's NativeMessagingHosts and unpacked the
// extension, whose directory it returns.
func Installed(t testing.TB, out []byte, code int, profile string) string {
	t.Helper()
	var rep struct {
		ExtensionDir string `json:"extension_dir"`
		Manifests    []struct {
			Path   string `json:"path"`
			Status string `json:"status"`
		} `json:"manifests"`
	}
	if code != 0 || json.Unmarshal(out, &rep) != nil {
		t.Fatalf("fillgate install exited %d: %s", code, out)
	}
	want := filepath.Join(profile, "NativeMessagingHosts")
	if len(rep.Manifests) != 1 || rep.Manifests[0].Status != "created" || filepath.Dir(rep.Manifests[0].Path) != want {
		t.Fatalf("fillgate install reported %s; want one host manifest created in %s", out, want)
	}
	if _, err := os.Stat(filepath.Join(rep.ExtensionDir, "manifest.json")); rep.ExtensionDir == "" || err != nil {
		t.Fatalf("fillgate install unpacked no extension: %s", out)
	}
	return rep.ExtensionDir
}
