package demo

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/desktop"
)

// TestDemoNativeDialog takes the tour as a newcomer with a display does: a
// window of Chromium, and the person answers the dialog fillgate shows on
// the desktop (the demo's browser has a debugging port, so fillgate asks
// outside it), here a real pinentry on a private X server answered with
// the keyboard.
func TestDemoNativeDialog(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "fillgate")
	build := exec.Command("go", "build", "-o", bin, "github.com/fillgate/fillgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fillgate: %v\n%s", err, out)
	}
	display := desktop.Start(t)
	person := display.Person(t)
	t.Setenv("DISPLAY", display.Name)
	t.Setenv("WAYLAND_DISPLAY", "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	typed := []byte("demo-Made-up-9" + strings.Repeat("x", 3))
	go func() {
		w, err := person.WaitClass(ctx, "^[Pp]inentry")
		if err == nil {
			err = person.WaitFocus(ctx, w)
		}
		if err == nil {
			err = person.Type(ctx, typed)
		}
		if err == nil {
			err = person.Key(ctx, "Return")
		}
		if err != nil {
			t.Errorf("the person could not answer the dialog: %v", err)
		}
	}()
	var out bytes.Buffer
	res, err := Run(ctx, Options{Out: &out, Binary: bin, Timeout: 60 * time.Second})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if res.Status != fill.StatusOK || !strings.Contains(out.String(), "a fillgate dialog opened on your desktop") ||
		res.HandedOver == nil || !*res.HandedOver || !strings.Contains(out.String(), "is signed in to Acme (its own request for the account page is let in): true") {
		t.Fatalf("result %+v\n%s", res, out.String())
	}
	if bytes.Contains(out.Bytes(), typed) {
		t.Error("the demo printed what the person typed")
	}
}
