package cleanroom

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Find returns the first Chromium-family browser found: on PATH by its
// usual names, then in the usual install places of this OS.
func Find() (string, error) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil && filepath.IsAbs(p) {
			return p, nil
		}
	}
	for _, p := range places() {
		if executable(p) {
			return p, nil
		}
	}
	return "", errors.New("none of chromium, google-chrome, brave, microsoft-edge or vivaldi was found")
}

// names are the Chromium-family browsers' commands, most likely first.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "brave-browser", "brave",
	"microsoft-edge", "microsoft-edge-stable", "vivaldi", "vivaldi-stable"}

// isChromium reports whether exe looks like a Chromium-family browser's
// executable (not Firefox's).
func isChromium(exe string) bool {
	base := strings.ToLower(filepath.Base(exe))
	base = strings.TrimSuffix(base, ".exe")
	for _, n := range []string{"chrom", "brave", "msedge", "microsoft-edge", "vivaldi", "opera", "google chrome"} {
		if strings.Contains(base, n) {
			return true
		}
	}
	return false
}

// executable reports whether path is a file this process may run.
func executable(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || st.Mode().Perm()&0o111 != 0
}
