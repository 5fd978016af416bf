//go:build !darwin && !windows

package opener

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNoDesktopFailsAtOnce: without DISPLAY or WAYLAND_DISPLAY the
// freedesktop opener has no browser to show the prompt in: launching it is
// an error before anything runs, in well under the 2 s a headless machine
// may take to say so.
func TestNoDesktopFailsAtOnce(t *testing.T) {
	ctx := openerCtx(t)
	dir := t.TempDir()
	l := osLauncher([]string{"PATH=/usr/bin:/bin", "HOME=/home/u", "WAYLAND_DISPLAY="})
	l.dirs = []string{dir}
	ran := filepath.Join(dir, "ran")
	writeOpener(t, dir, l.name, "touch '"+ran+"'\n")
	start := time.Now()
	err := l.launch(ctx, filepath.Join(dir, "page.html"))
	if err == nil || !strings.Contains(err.Error(), "neither DISPLAY nor WAYLAND_DISPLAY") {
		t.Fatalf("launch without a display: %v", err)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the opener ran without a display")
	}
	for _, env := range [][]string{{"DISPLAY=:0"}, {"WAYLAND_DISPLAY=wayland-0"}} {
		if err := desktopReady(env); err != nil {
			t.Errorf("%v: %v", env, err)
		}
	}
	t.Logf("launch without a display failed after %v", time.Since(start))
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("launch without a display took %v", d)
	}
}
