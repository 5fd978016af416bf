//go:build linux

package cdpe2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/desktop"
)

// TestCLINativeDialog: on the CDP path a program drives the browser by
// definition, so with the person's default (prompt = "auto") `fillgate
// fill` asks in the native dialog on the desktop: no prompt tab in the
// browser, no page through the system opener. The dialog dies with the
// request, even when fillgate is killed. The scenes let fillgate type into
// the driven page (driven = "in-page", scene.policy), so what the person
// types lands in the tab's field.
func TestCLINativeDialog(t *testing.T) {
	e := newEnvWithin(t, 4*time.Minute)
	display := desktop.Start(t)
	person := display.Person(t)
	native := func(t *testing.T) *scene {
		sc := e.scene(t)
		sc.vars["DISPLAY"] = display.Name
		sc.policy("prompt = \"auto\"\nprompt_opener = \"cdp-tab\"\n")
		return sc
	}
	dialog := func(t *testing.T, r *fillRun) desktop.Window {
		t.Helper()
		ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
		defer cancel()
		go func() {
			select {
			case <-r.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		w, err := person.WaitDialog(ctx)
		if err != nil {
			t.Fatalf("no native dialog: %v", err)
		}
		return w
	}
	gone := func(t *testing.T, w desktop.Window) {
		t.Helper()
		ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		defer cancel()
		if err := person.WaitGone(ctx, w); err != nil {
			t.Errorf("the dialog outlived its request: %v", err)
		}
	}

	t.Run("typed in the dialog: ok, and no prompt in the browser", func(t *testing.T) {
		sc := native(t)
		tb := sc.passwordTab()
		before := len(sc.pageTargets())
		secret := sc.secret()
		r := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json")
		w := dialog(t, r)
		if got := len(sc.pageTargets()); got != before {
			t.Errorf("a page opened in the CDP browser while the dialog asks")
		}
		sc.scanProcess(r, secret)
		if err := person.Type(e.ctx, secret); err != nil {
			t.Fatal(err)
		}
		if err := person.Key(e.ctx, "Return"); err != nil {
			t.Fatal(err)
		}
		o := r.wait()
		o.want(sc, fill.StatusOK, "inserted into the focused password field")
		if !fieldIs(t, tb.ctx, "pw", secret) {
			t.Errorf("password field: value differed")
		}
		sc.wantOpened(0)
		gone(t, w)
	})

	t.Run("cancelled in the dialog", func(t *testing.T) {
		sc := native(t)
		tb := sc.passwordTab()
		r := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json")
		w := dialog(t, r)
		if err := person.Key(e.ctx, "Escape"); err != nil {
			t.Fatal(err)
		}
		r.wait().want(sc, fill.StatusCancelled, "cancelled")
		if !tb.evalBool(`document.getElementById('pw').value === ''`) {
			t.Errorf("the field holds something after a cancel")
		}
		sc.wantOpened(0)
		gone(t, w)
	})

	t.Run("fillgate killed: its dialog dies with it", func(t *testing.T) {
		sc := native(t)
		sc.passwordTab()
		r := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json")
		w := dialog(t, r)
		if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-r.done
		gone(t, w)
	})

	t.Run("no display: refused with the fix; no tab, no opener", func(t *testing.T) {
		sc := native(t)
		delete(sc.vars, "DISPLAY")
		sc.passwordTab()
		before := len(sc.pageTargets())
		o := sc.fill("--service", "127.0.0.1", "--via", "cdp", "--json").wait()
		o.want(sc, fill.StatusRefused, "the browser can be driven by a program", "no desktop display", "nothing was asked")
		if got := len(sc.pageTargets()); got != before {
			t.Errorf("a prompt tab opened although no dialog could be shown")
		}
		sc.wantOpened(0)
	})
}
