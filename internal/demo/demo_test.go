package demo

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/windows/wine"
)

// TestDemoHeadless takes the whole tour with the real binary, Chromium, the
// extension and the prompt, the demo playing the human.
func TestDemoHeadless(t *testing.T) {
	wine.Skip(t, "the demo builds fillgate with Go and runs Chromium, and the Wine prefix has neither")
	bin := filepath.Join(t.TempDir(), "fillgate")
	build := exec.Command("go", "build", "-o", bin, "github.com/fillgate/fillgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fillgate: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := Run(ctx, Options{Out: &out, Binary: bin, Headless: true, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if res.Status != fill.StatusOK || res.Via != fill.ViaExtension {
		t.Fatalf("result %+v\n%s", res, out.String())
	}
	if !strings.Contains(out.String(), "is signed in to Acme (its own request for the account page is let in): true") ||
		res.HandedOver == nil || !*res.HandedOver {
		t.Errorf("the demo's browser was not handed a session:\n%s", out.String())
	}
	if strings.Contains(out.String(), samplePassword) {
		t.Error("the demo printed the sample password")
	}
	// The tour cleans up after itself.
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "fillgate-demo-*", "profile"))
	for _, m := range matches {
		if strings.Contains(out.String(), m) {
			t.Errorf("left %s behind", m)
		}
	}
}
