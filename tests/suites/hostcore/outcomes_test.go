package hostcore

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
	"github.com/fillgate/fillgate/tests/fakes/fakepage"
)

// hostKinds are the two ways the tests run the host.
var hostKinds = []struct {
	name      string
	inProcess bool
}{{"binary", false}, {"in-process", true}}

// expectAudit checks that the audit log's last entry records got.
func (r *rig) expectAudit(got run) {
	r.t.Helper()
	es := r.auditEntries()
	if len(es) == 0 {
		r.t.Error("the audit log is empty")
		return
	}
	e := es[len(es)-1]
	if e.Status != got.res.Status || e.Detail != got.res.Detail || e.Service != got.res.Service || e.Origin != got.res.Origin {
		r.t.Errorf("the audit log's last entry says %s for %s at %s; the result says %s for %s at %s",
			e.Status, e.Service, e.Origin, got.res.Status, got.res.Service, got.res.Origin)
	}
}

func TestOK(t *testing.T) {
	for _, k := range hostKinds {
		t.Run(k.name+"/password", func(t *testing.T) {
			r := newRig(t, setup{inProcess: k.inProcess, page: loginPage("https://github.com")})
			r.behave(answers(r.secret))
			got := r.fill("github.com")
			r.expect(got, fill.StatusOK, "inserted into the focused password field; the form was submitted and the page navigated away")
			r.expectWhere(got, "github.com", "https://github.com", fill.FieldPassword)
			r.expectSubmit(got, true, true)
			if r.ext.Submits() != 1 || r.ext.FieldHolds() {
				t.Errorf("the page saw %d submits; its field holds the value: %v", r.ext.Submits(), r.ext.FieldHolds())
			}
			if got.res.Fallback != "" {
				t.Errorf("an ok result carries a fallback: %q", got.res.Fallback)
			}
			r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "insert", "outcome")
			r.expectInserted(r.secret)
			r.expectInsertTarget(7, 0, fill.FieldPassword, "https://github.com")
			r.expectInsertThen(fill.ThenSubmit)
			r.expectAudit(got)
		})
		t.Run(k.name+"/then none", func(t *testing.T) {
			r := newRig(t, setup{inProcess: k.inProcess, page: loginPage("https://github.com")})
			r.behave(answers(r.secret))
			got := r.fill("github.com", "--then", "none")
			r.expect(got, fill.StatusOK, "nothing was submitted (then none): the page, and any tool that reads it")
			r.expectSubmit(got, false, false)
			r.expectInserted(r.secret)
			r.expectInsertThen(fill.ThenNone)
			if r.ext.Submits() != 0 || !r.ext.FieldHolds() {
				t.Errorf("the page saw %d submits; its field holds the value: %v", r.ext.Submits(), r.ext.FieldHolds())
			}
			r.expectAudit(got)
		})
		t.Run(k.name+"/validation stops the submit", func(t *testing.T) {
			page := loginPage("https://github.com")
			page.After = fakepage.Page{Submit: fakepage.Invalid, InvalidField: "I accept the terms"}
			r := newRig(t, setup{inProcess: k.inProcess, page: page})
			r.behave(answers(r.secret))
			got := r.fill("github.com")
			r.expect(got, fill.StatusFailed, `validation stopped the submit at the field "I accept the terms"`)
			r.expectSubmit(got, false, false)
			if r.ext.Submits() != 0 || r.ext.FieldHolds() {
				t.Errorf("the page saw %d submits; its field holds the value: %v", r.ext.Submits(), r.ext.FieldHolds())
			}
			r.expectAudit(got)
		})
		t.Run(k.name+"/one-time-code", func(t *testing.T) {
			page := loginPage("https://login.github.com")
			page.Field = fill.FieldInfo{Kind: fill.FieldOTP, Split: 6}
			page.Frame = 3
			r := newRig(t, setup{inProcess: k.inProcess, page: page})
			r.behave(answers(r.secret))
			got := r.fill("github.com", "--field", "otp")
			r.expect(got, fill.StatusOK, "inserted into the focused one-time-code field")
			r.expectWhere(got, "github.com", "https://login.github.com", fill.FieldOTP)
			r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "insert", "outcome")
			r.expectInserted(r.secret)
			r.expectInsertTarget(7, 3, fill.FieldOTP, "https://login.github.com")
			r.expectAudit(got)
		})
	}
}

// expectSubmit checks that the result says whether the form was
// submitted and the page navigated.
func (r *rig) expectSubmit(got run, submitted, navigated bool) {
	r.t.Helper()
	res := got.res
	if res.Submitted == nil || res.Navigated == nil || *res.Submitted != submitted || *res.Navigated != navigated {
		r.t.Errorf("result %s; want submitted %v, navigated %v", r.safe(string(got.stdout)), submitted, navigated)
	}
}

// expectInsertThen checks what the insert request asked to follow it.
func (r *rig) expectInsertThen(then string) {
	r.t.Helper()
	for _, m := range r.ext.Received() {
		if m.Type != "insert" {
			continue
		}
		var ins struct{ Then string }
		if err := json.Unmarshal(m.Raw, &ins); err != nil || ins.Then != then {
			r.t.Errorf("the insert request asked for then %q (%v); want %q", ins.Then, err, then)
		}
		return
	}
	r.t.Error("the extension received no insert request")
}

// expectInsertTarget checks that the insert request named the inspected
// tab, frame, field kind and origin.
func (r *rig) expectInsertTarget(tab, frame int64, kind string, origins ...string) {
	r.t.Helper()
	for _, m := range r.ext.Received() {
		if m.Type != "insert" {
			continue
		}
		var ins struct {
			Tab, Frame int64
			Kind       string
			Origins    []string
			Value      string
		}
		if err := json.Unmarshal(m.Raw, &ins); err != nil {
			r.t.Fatalf("the insert request: %v", err)
		}
		if ins.Tab != tab || ins.Frame != frame || ins.Kind != kind || !slices.Equal(ins.Origins, origins) {
			r.t.Errorf("insert went to tab %d frame %d kind %q origins %v; want %d %d %q %v",
				ins.Tab, ins.Frame, ins.Kind, ins.Origins, tab, frame, kind, origins)
		}
		if ins.Value != "[redacted]" {
			r.t.Error("the fake extension's record of the insert is not redacted")
		}
		return
	}
	r.t.Error("the extension received no insert request")
}

func TestCancelled(t *testing.T) {
	t.Run("cancel button", func(t *testing.T) {
		r := newRig(t, setup{page: loginPage("https://github.com")})
		// The human had typed the secret before pressing Cancel, so the
		// browser posts it with the Cancel button: it must go nowhere.
		r.behave(cancels(r.secret))
		got := r.fill("github.com")
		r.expect(got, fill.StatusCancelled, "the human cancelled the prompt")
		r.expectWhere(got, "github.com", "https://github.com", fill.FieldPassword)
		r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "outcome")
		r.expectNothingInserted()
		r.expectAudit(got)
	})
	t.Run("prompt window closed", func(t *testing.T) {
		r := newRig(t, setup{page: loginPage("https://github.com")})
		r.behave(closesWindow())
		got := r.fill("github.com")
		r.expect(got, fill.StatusCancelled, "the prompt window was closed without an answer")
		// The window is gone already: the host does not ask to close it.
		r.expectExtSaw(1, "inspect", "open_prompt", "outcome")
		r.expectNothingInserted()
		r.expectAudit(got)
		r.expectPromptDead(r.lastPage())
	})
}

func TestNoResponse(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	r.behave(looksAway())
	got := r.fill("github.com", "--timeout", "1s")
	r.expect(got, fill.StatusNoResponse, "nobody answered the prompt within 1s")
	if !strings.Contains(got.res.Fallback, "do not ask again now") {
		t.Errorf("no_response without the fallback hint: %q", r.safe(got.res.Fallback))
	}
	r.expectExtSaw(1, "inspect", "open_prompt", "close_prompt", "outcome")
	if w := r.ext.Windows(); len(w) != 0 {
		t.Errorf("prompt windows still open: %v", w)
	}
	r.expectNothingInserted()
	r.expectAudit(got)
	r.expectPromptDead(r.lastPage())
}

// noHostDetail is what `fillgate fill --via extension` says with no host.
const noHostDetail = "no browser with the fillgate extension is running"

func TestFailedWithoutHost(t *testing.T) {
	// Nothing runs: no socket directory at all, then an empty one.
	r := newRig(t, setup{noHost: true})
	for range 2 {
		got := r.fill("github.com")
		r.expect(got, fill.StatusFailed, noHostDetail)
		if !strings.Contains(got.res.Detail, "fillgate doctor") {
			t.Errorf("the detail does not say how to fix it: %q", got.res.Detail)
		}
		if got.res.Via != fill.ViaExtension || got.res.Service != "github.com" {
			t.Errorf("result %+v", got.res)
		}
		if err := os.MkdirAll(r.dirs.socketDir(t), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// BenchmarkNoHost measures how fast this is.
}

func TestExtensionDisconnects(t *testing.T) {
	t.Run("at insert", func(t *testing.T) {
		r := newRig(t, setup{page: loginPage("https://github.com")})
		r.ext.DisconnectOn("insert")
		r.behave(answers(r.secret))
		got := r.fill("github.com")
		r.expect(got, fill.StatusFailed, "cannot insert: ")
		if !strings.Contains(got.res.Detail, "disconnected") {
			t.Errorf("the detail does not say the browser went away: %q", r.safe(got.res.Detail))
		}
		// It hung up on the insert: no outcome reached it, nor the close
		// of the prompt when that was sent after the insert.
		saw := concurrent(r.extReceived())
		if !slices.Equal(saw, []string{"inspect", "open_prompt", "close_prompt", "insert"}) && !slices.Equal(saw, []string{"inspect", "open_prompt", "insert"}) {
			t.Errorf("the extension received %v", saw)
		}
		r.expectNothingInserted()
		r.expectAudit(got)
		r.expectHostGone()
	})
	t.Run("while the prompt is open", func(t *testing.T) {
		r := newRig(t, setup{page: loginPage("https://github.com")})
		r.behave(then(looksAway(), func(context.Context, *rig, prompted) error {
			r.ext.Disconnect()
			return nil
		}))
		got := r.fill("github.com")
		r.expect(got, fill.StatusFailed, "the browser disconnected")
		if saw := r.extReceived(); !slices.Equal(saw, []string{"inspect", "open_prompt"}) {
			t.Errorf("the extension received %v", saw)
		}
		r.expectNothingInserted()
		r.expectAudit(got)
		r.expectHostGone()
		r.expectPromptDead(r.lastPage())
	})
}

// expectHostGone checks that the host exits once the extension hung up,
// and that a later request finds no host.
func (r *rig) expectHostGone() {
	r.t.Helper()
	select {
	case err := <-r.hostDone:
		r.hostDone <- err // teardown checks it too
	case <-r.ctx.Done():
		r.t.Fatal("the host did not exit after the extension hung up")
	}
	got := r.fill("github.com")
	r.expect(got, fill.StatusFailed, noHostDetail)
}

// expectPromptDead checks that the prompt page p no longer takes an
// answer: a late one, sent with the page's own form on a new connection,
// is refused (410 Gone, or no server at all once the host closed the
// prompt) and goes nowhere.
func (r *rig) expectPromptDead(p *fakehuman.Page) {
	r.t.Helper()
	late := r.newSecret()
	f := forged{name: "a late answer", method: http.MethodPost}
	code, err := f.send(r.ctx, r, p.Action(), p.Hidden("csrf"), p.Cookies(), late)
	switch {
	case err != nil && !strings.Contains(err.Error(), "connection refused"):
		r.t.Errorf("a late answer failed in an unexpected way: %s", r.safe(err.Error()))
	case err == nil && code != http.StatusGone:
		r.t.Errorf("a late answer got %d, want 410 Gone or no server", code)
	}
	if r.ext.ValueEquals(late) {
		r.t.Error("a late answer reached the page")
	}
}

// extReceived is the types of what the fake extension received so far in
// the scenario (not for the rig's own checks before it began), without
// the "host" notice and the host's drivable questions: whether a program
// drives the browser is asked about the browser, not the page, by a fill
// while it inspects the page or after, and by every status.
func (r *rig) extReceived() []string {
	var types []string
	for _, m := range r.ext.Received()[r.extFrom:] {
		if m.Type != "host" && m.Type != "drivable" {
			types = append(types, m.Type)
		}
	}
	return types
}
