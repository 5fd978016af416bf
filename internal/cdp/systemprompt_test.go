package cdp_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hostcdp "github.com/fillgate/fillgate/internal/cdp"
	"github.com/fillgate/fillgate/internal/opener"
	"github.com/fillgate/fillgate/tests/fakes/fakecdp"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// TestOpenPromptThroughSystemOpener: Browser.OpenPrompt with the system
// opener hands the opener a page, never the URL, and the page goes when
// the engine ends the prompt after closing its window.
func TestOpenPromptThroughSystemOpener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := fakecdp.New(t)
	const promptURL = "http://127.0.0.1:4321/n0nce"
	var got []string
	o := opener.System{Dir: filepath.Join(t.TempDir(), "open"), Launch: func(_ context.Context, path string) error {
		got = append(got, path)
		return nil
	}}
	b, err := hostcdp.Connect(ctx, hostcdp.Endpoint{URL: s.URL, Source: hostcdp.SourceFillgateEnv}, hostcdp.Options{OpenURL: o.OpenURL})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = b.Close() }()
	pctx, end := context.WithCancel(ctx)
	defer end()
	win, err := b.OpenPrompt(pctx, promptURL)
	if err != nil {
		t.Fatalf("open the prompt: %v", err)
	}
	if len(got) != 1 || strings.Contains(got[0], "n0nce") || strings.Contains(got[0], "4321") {
		t.Fatalf("the opener was given %q, want one page path", got)
	}
	if target, err := fakehuman.RedirectTarget(got[0]); err != nil || target != promptURL {
		t.Fatalf("the page leads to %q (%v)", target, err)
	}
	// What the engine does when the prompt is over.
	if err := win.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
	end()
	for {
		if _, err := os.Lstat(filepath.Dir(got[0])); errors.Is(err, os.ErrNotExist) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the redirect page outlived the prompt")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
