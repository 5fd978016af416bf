package hostcore

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// TestPromptPortHeldWhileWindowOpen: once answered, the prompt's window
// closes while the value goes in, and the prompt's server must keep its
// port bound (answering 410) until the window is closed: a port freed
// while the window still shows a page from it could be bound by another
// local user, who would then serve whatever a reload or a late request of
// that window gets.
func TestPromptPortHeldWhileWindowOpen(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	r.ext.Ignore("close_prompt") // the window's close takes its whole budget
	freed := make(chan error, 1)
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if err := submitOn(ctx, p, r.secret); err != nil {
			return err
		}
		// The insert comes once the host has the answer and the window is
		// closing; the window stays open (close_prompt is never answered).
		if _, err := r.ext.Wait(ctx, fakeext.OfType("close_prompt")); err != nil {
			return err
		}
		if _, err := r.ext.Wait(ctx, fakeext.OfType("insert")); err != nil {
			return err
		}
		resp, err := http.Get(p.Action())
		if err != nil {
			freed <- err
			return nil
		}
		resp.Body.Close()
		freed <- nil
		return nil
	}))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	if err := <-freed; errors.Is(err, syscall.ECONNREFUSED) {
		t.Error("the prompt's port was free while its window was still open")
	} else if err != nil {
		t.Errorf("a request to the prompt while its window was open: %v", err)
	}
}
