package browserproc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/tests/windows/wine"
)

func TestStartAndStopChromium(t *testing.T) {
	wine.Skip(t, "there is no Windows Chromium in the Wine prefix")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Chromium keeps its profile's singleton socket in a directory of its
	// own under TMPDIR, which Stop must remove: a killed browser does not.
	tmp := t.TempDir()
	env := append(os.Environ(), "TMPDIR="+tmp)
	c, err := StartChromium(ctx, ChromiumOptions{UserDataDir: t.TempDir(), Headless: true, Env: env})
	if err != nil {
		t.Fatal(err) // .ci/run installs Chromium; a missing one fails, never skips
	}
	if c.Port == 0 || !strings.HasPrefix(c.WebSocketURL, "ws://127.0.0.1:") {
		t.Fatalf("endpoint %q port %d", c.WebSocketURL, c.Port)
	}
	c.Stop()
	select {
	case <-c.Done():
	default:
		t.Fatal("Stop returned before the browser exited")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
		t.Errorf("Stop left %v in the browser's TMPDIR", left)
	}
	c.Stop() // a second Stop is harmless
}

func TestStartChromiumReportsAnEarlyExit(t *testing.T) {
	// A program that exits at once: false, or where there is none
	// (Windows) this test binary, which exits on Chromium's flags.
	bin, err := exec.LookPath("false")
	if err != nil && runtime.GOOS == "windows" {
		bin, err = os.Executable()
	}
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartChromium(context.Background(), ChromiumOptions{Binary: bin, UserDataDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exited at start") {
		t.Fatalf("err = %v", err)
	}
}
