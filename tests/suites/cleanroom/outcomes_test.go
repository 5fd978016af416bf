//go:build linux

package cleanroom

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/loginserver"
	"github.com/fillgate/fillgate/tests/kit/sessionsite"
)

// TestOutcomes: every outcome of a login for a browser a program drives,
// on both paths: what the agent gets, that nothing was handed over where
// nothing should be, and that the value is nowhere it must not be (the
// final scan reads every file of the rig, the driven browser's profile
// among them, and finds no clean room left).
func TestOutcomes(t *testing.T) {
	onBothPaths(t, func(t *testing.T, r *rig, site *sessionsite.Site) {
		form := site.Archetype("form")
		other := loginserver.Start(t, "127.0.0.1")

		t.Run("cancelled in the dialog", func(t *testing.T) {
			secret := r.Secret(t)
			site.SetPassword(secret)
			tb := r.toLogin(t, site, form)
			run := r.fill(t, "127.0.0.1")
			run.presses(t, "Escape")
			res := run.result(t)
			wantStatus(t, res, fill.StatusCancelled, "cancelled")
			r.notHandedOver(t, tb, site, form, secret)
		})

		t.Run("nobody answers", func(t *testing.T) {
			r.writePolicy(strings.Replace(basePolicy(""), `prompt_budget = "45s"`, `prompt_budget = "5s"`, 1))
			defer r.writePolicy(basePolicy(""))
			secret := r.Secret(t)
			site.SetPassword(secret)
			tb := r.toLogin(t, site, form)
			res := r.fill(t, "127.0.0.1").result(t)
			wantStatus(t, res, fill.StatusNoResponse, "nobody answered")
			r.notHandedOver(t, tb, site, form, secret)
		})

		t.Run("the site does not take the password", func(t *testing.T) {
			right, wrong := r.Secret(t), r.Secret(t)
			site.SetPassword(right)
			tb := r.toLogin(t, site, form)
			run := r.fill(t, "127.0.0.1")
			run.types(t, wrong)
			res := run.result(t)
			wantStatus(t, res, fill.StatusFailed, "the site did not take the login")
			if res.HandedOver != nil {
				t.Error("a login the site did not take was handed over")
			}
			if n := site.Received(wrong); n != 1 {
				t.Errorf("the site received the typed value %d times; want once", n)
			}
			r.notHandedOver(t, tb, site, form, right)
		})

		t.Run("then none is refused before anything is asked", func(t *testing.T) {
			secret := r.Secret(t)
			site.SetPassword(secret)
			tb := r.toLogin(t, site, form)
			res := r.fill(t, "127.0.0.1", "--then", "none").result(t)
			wantStatus(t, res, fill.StatusRefused, `set driven = "in-page" for 127.0.0.1`)
			r.noDialog(t)
			r.notHandedOver(t, tb, site, form, secret)
		})

		t.Run("a login field in a frame is refused before anything is asked", func(t *testing.T) {
			tb := r.open(t, other.URL+"/frame-host")
			tb.waitFor(`document.getElementById("fr")?.contentDocument?.getElementById("pw") != null`)
			tb.eval(`document.getElementById("fr").contentDocument.getElementById("pw").focus(), true`, nil)
			res := r.fill(t, "127.0.0.1").result(t)
			wantStatus(t, res, fill.StatusRefused, "the login field is in a frame")
			r.noDialog(t)
		})

		t.Run("a device-bound session is not handed over", func(t *testing.T) {
			dbsc := site.Archetype("dbsc")
			tb, res, secret := r.typedLogin(t, site, dbsc, "127.0.0.1")
			wantStatus(t, res, fill.StatusFailed, "device-bound session")
			if res.HandedOver != nil {
				t.Error("a device-bound session was handed over")
			}
			r.notHandedOver(t, tb, site, dbsc, secret)
		})

		t.Run("a 307 to another origin is stopped in the clean room", func(t *testing.T) {
			secret := r.Secret(t)
			site.SetPassword(secret)
			a := site.Archetype("redirect307")
			tb := r.toLogin(t, site, a)
			login := tb.location()
			run := r.fill(t, "127.0.0.1")
			run.types(t, secret)
			res := run.result(t)
			wantStatus(t, res, fill.StatusRefused, "another origin, "+site.IdP)
			if n := site.ReceivedAt(site.IdP, "/collect", secret); n != 0 {
				t.Errorf("the other origin received the password %d times", n)
			}
			if res.HandedOver != nil {
				t.Error("a login stopped in the clean room was handed over")
			}
			if loc := tb.location(); loc != login {
				t.Errorf("the agent's tab went from %s to %s after a login stopped in the clean room", login, loc)
			}
		})

		t.Run("a login that keeps the password in web storage is not handed over", func(t *testing.T) {
			a := site.Archetype("leaky")
			tb, res, secret := r.typedLogin(t, site, a, "127.0.0.1")
			wantStatus(t, res, fill.StatusFailed, "keeps the password in what its login left")
			if n := site.Received(secret); n != 1 {
				t.Errorf("the site received the password %d times; want once (the login itself)", n)
			}
			if res.HandedOver != nil {
				t.Error("a session holding the password was handed over")
			}
			var kept bool
			tb.eval(`localStorage.getItem("remember") !== null`, &kept)
			if kept {
				t.Error("the agent's tab has the site's copy of the password in its localStorage")
			}
			r.notHandedOver(t, tb, site, a, secret)

			// The service is barred from the clean room for a day:
			// the next request is refused before anything is asked.
			tb.eval(`location.href = `+quote(a.Login)+`, true`, nil)
			tb.waitFor(`location.href === ` + quote(a.Login))
			tb.typeInto("user", sessionsite.User)
			tb.focus(a.Field)
			res = r.fill(t, "127.0.0.1").result(t)
			wantStatus(t, res, fill.StatusRefused, "logs in to it in a clean room again only after")
			r.noDialog(t)
		})
	})
}

// wantStatus fails t unless res has status and its detail says detail.
func wantStatus(t testing.TB, res fill.Result, status fill.Status, detail string) {
	t.Helper()
	if res.Status != status || !strings.Contains(res.Detail, detail) {
		t.Fatalf("got %s %q; want %s saying %q", res.Status, res.Detail, status, detail)
	}
}

// notHandedOver checks that the agent's tab was given no session: it is
// still on the login page and a request from it is not signed in.
func (r *rig) notHandedOver(t testing.TB, tb *tab, site *sessionsite.Site, a sessionsite.Archetype, secret []byte) {
	t.Helper()
	if loc := tb.location(); strings.HasPrefix(loc, a.Home) {
		t.Errorf("the agent's tab went to %s", loc)
	}
	var got struct {
		Status int `json:"status"`
	}
	tb.eval(`fetch(`+quote(a.WhoAmI)+`, {credentials: "include"}).then((r) => ({status: r.status}))`, &got)
	if got.Status == 200 {
		t.Errorf("the agent's tab is signed in after an outcome that hands nothing over")
	}
	r.scanFillgate(t, secret)
}

// TestSavedValueNoPrompt: a saved password that the person's policy fills
// with no prompt (approval = "none") goes into the clean room only; the
// person sees a notice, the agent's tab ends signed in, and the value is
// nowhere in the agent's browser.
func TestSavedValueNoPrompt(t *testing.T) {
	for _, via := range []string{viaExtension, viaCDP} {
		t.Run(via, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
			defer cancel()
			r, notices := newKeyringRig(t, ctx, via)
			site := sessionsite.Start(t)
			form := site.Archetype("form")
			// approval = "none" holds only for the exact host and port.
			svc := strings.TrimPrefix(site.App, "http://")
			r.writePolicy(basePolicy(fmt.Sprintf("\n[service.%q]\napproval = \"none\"\n", svc)))
			secret := r.Secret(t)
			site.SetPassword(secret)
			r.remember(t, svc, secret)
			tb := r.toLogin(t, site, form)
			res := r.fill(t, svc).result(t)
			wantStatus(t, res, fill.StatusOK, "logged in in fillgate's clean room")
			r.noDialog(t)
			if n := site.Received(secret); n != 1 {
				t.Errorf("the site received the saved value %d times; want once", n)
			}
			tb.waitFor(`location.href.startsWith(` + quote(form.Home) + `)`)
			r.authenticated(t, tb, form)
			if e := r.lastAudit(t); e.How != fill.HowNone || e.Status != fill.StatusOK {
				t.Errorf("audit %+v", e)
			}
			if via == viaCDP && len(notices.Notices()) != 1 {
				t.Errorf("the desktop showed %d notices; want one", len(notices.Notices()))
			}
			r.scanFillgate(t, secret)
		})
	}
}

// TestOneTimeCode: a one-time code goes the same way as a password.
func TestOneTimeCode(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	r := newRig(t, ctx, viaCDP)
	site := loginserver.Start(t, "127.0.0.1")
	code := r.Code(t)
	site.SetRight(code)
	tb := r.open(t, site.URL+"/otp")
	tb.focus("otp")
	run := r.fill(t, "127.0.0.1", "--field", "otp")
	run.types(t, code)
	res := run.result(t)
	wantStatus(t, res, fill.StatusOK, "the one-time code never entered the agent's browser")
	if n := site.Logins("/otp/verify", code); n != 1 {
		t.Errorf("the site got the code %d times", n)
	}
	tb.waitFor(`location.pathname === "/welcome"`)
}

// TestKilledWithItsRoom: fillgate killed while its clean room is open
// (the CDP path's `fillgate fill`, which holds the room): the room's
// browser dies with it, and the next request sweeps its profile.
func TestKilledWithItsRoom(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	r := newRig(t, ctx, viaCDP)
	site := sessionsite.Start(t)
	form := site.Archetype("form")
	secret := r.Secret(t)
	site.SetPassword(secret)
	rooms := filepath.Join(r.root.RunDir, "rooms")
	tb := r.toLogin(t, site, form)
	run := r.fill(t, "127.0.0.1")
	wctx, wcancel := run.Awaiting(ctx, 60*time.Second)
	if _, err := r.person.WaitDialog(wctx); err != nil {
		t.Fatalf("no dialog: %v", err)
	}
	wcancel()
	if len(roomBrowsers(rooms)) == 0 {
		t.Fatal("no clean-room browser runs while the dialog is open: the check below cannot fail")
	}
	if err := run.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-run.Done()
	deadline := time.Now().Add(10 * time.Second)
	for len(roomBrowsers(rooms)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the clean room's browser outlived fillgate: %v", roomBrowsers(rooms))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The next request, in the same tab, sweeps the profile of the room
	// whose owner died.
	tb.focus(form.Field)
	run = r.fill(t, "127.0.0.1")
	run.types(t, secret)
	wantStatus(t, run.result(t), fill.StatusOK, "logged in in fillgate's clean room")
}

// roomBrowsers lists the pids of processes whose command line has a
// --user-data-dir under rooms.
func roomBrowsers(rooms string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "--user-data-dir="+rooms+string(filepath.Separator)) {
			out = append(out, e.Name())
		}
	}
	return out
}
