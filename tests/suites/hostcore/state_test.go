package hostcore

import (
	"context"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/procinfo"
	"github.com/fillgate/fillgate/tests/fakes/fakeext"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

func TestCooldownAfterNoResponse(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	r.behave(neverLooks())
	first := r.fill("github.com", "--timeout", "1s")
	r.expect(first, fill.StatusNoResponse, "nobody answered the prompt")
	if first.res.Fallback == "" {
		t.Fatal("no_response without a fallback")
	}

	// A new `fillgate fill` from the same agent (this test) for the same
	// service is refused before the browser is even asked.
	r.behave(answers(r.secret))
	second := r.fill("github.com")
	r.expect(second, fill.StatusRefused, "nobody answered the last prompt for github.com from this agent; fillgate will not ask again before")
	if second.res.Fallback != first.res.Fallback {
		t.Errorf("the refusal's fallback is %q, want the no_response one", r.safe(second.res.Fallback))
	}
	if first.pid == second.pid {
		t.Fatal("both requests came from one process; the test proves nothing")
	}
	r.expectExtSaw(2, "inspect", "open_prompt", "close_prompt", "outcome", "outcome")
	if n := r.promptCount(); n != 1 {
		t.Errorf("%d prompts opened, want 1", n)
	}
	r.expectNothingInserted()
	es := r.auditEntries()
	if len(es) != 2 || es[0].Agent.Key() != es[1].Agent.Key() || es[0].Agent.PeerPID == es[1].Agent.PeerPID {
		t.Errorf("audit: %d entries; want two from one agent through two clients", len(es))
	}

	// Another service is not cooling down.
	r.ext.Update(func(p *fakeext.Page) { p.Origins = []string{"https://gitlab.com"} })
	third := r.fill("gitlab.com")
	r.expect(third, fill.StatusOK, "inserted")
	r.expectInserted(r.secret)
}

// TestNoResponseToAPromptSeenCoolsDown: the human loaded the prompt and
// let it run out. That is no_response, and the agent does not raise a
// second prompt for the service within the cool-down: its retry is
// refused with the fallback advice, and no prompt opens.
func TestNoResponseToAPromptSeenCoolsDown(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com"), policy: "no_response_cooldown = \"10m\"\n"})
	r.behave(looksAway())
	first := r.fill("github.com", "--timeout", "1s")
	r.expect(first, fill.StatusNoResponse, "nobody answered the prompt")
	r.behave(answers(r.secret))
	second := r.fill("github.com")
	r.expect(second, fill.StatusRefused, "nobody answered the last prompt for github.com from this agent")
	if second.res.Fallback == "" {
		t.Errorf("the refused retry carries no fallback advice: %+v", second.res)
	}
	if n := r.promptCount(); n != 1 {
		t.Errorf("%d prompts opened, want 1", n)
	}
	if r.ext.Inserts() != 0 {
		t.Errorf("%d inserts, want none", r.ext.Inserts())
	}
}

func TestOnePromptPerService(t *testing.T) {
	r := newRig(t, setup{page: loginPage("https://github.com")})
	second := make(chan run, 1)
	r.behave(func(ctx context.Context, r *rig, at prompted) error {
		// While the human has this prompt open, the agent asks again.
		second <- r.startFill("github.com").wait()
		return answers(r.secret)(ctx, r, at)
	})
	first := r.fill("github.com")
	r.expect(first, fill.StatusOK, "inserted")
	r.expect(<-second, fill.StatusRefused, "a prompt for github.com is already open, or a tab is armed for its passkey; answer or cancel it first")
	// The second request's outcome comes while the first prompt is open.
	r.expectExtSaw(2, "inspect", "open_prompt", "outcome", "close_prompt", "insert", "outcome")
	if n := r.promptCount(); n != 1 {
		t.Errorf("%d prompts opened, want 1", n)
	}
	r.expectInserted(r.secret)

	// Once it is answered, the service may be asked for again.
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
}

func TestConcurrentServices(t *testing.T) {
	// One page, two services it belongs to, both asked for at once.
	r := newRig(t, setup{page: loginPage("https://login.github.com")})
	secrets := map[string][]byte{"github.com": r.secret, "login.github.com": r.newSecret()}
	var mu sync.Mutex
	open := 0
	both := make(chan struct{})
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		mu.Lock()
		if open++; open == 2 {
			close(both)
		}
		mu.Unlock()
		select { // answer only once both prompts are open together
		case <-both:
		case <-ctx.Done():
			return fmt.Errorf("the second prompt never opened: %w", ctx.Err())
		}
		for svc, s := range secrets {
			if strings.Contains(p.HTML(), `for <code dir="ltr">`+svc+`</code>`) {
				if err := p.Submit(ctx, s); err != nil {
					return err
				}
				return nil
			}
		}
		return fmt.Errorf("the prompt names neither service")
	}))
	a, b := r.startFill("github.com"), r.startFill("login.github.com")
	ra, rb := a.wait(), b.wait()
	r.expect(ra, fill.StatusOK, "inserted")
	r.expect(rb, fill.StatusOK, "inserted")
	r.expectWhere(ra, "github.com", "https://login.github.com", fill.FieldPassword)
	r.expectWhere(rb, "login.github.com", "https://login.github.com", fill.FieldPassword)
	r.extSaw(2)
	if n := r.ext.Inserts(); n != 2 {
		t.Errorf("%d inserts, want 2", n)
	}
	if !r.ext.ValueEquals(secrets["github.com"]) && !r.ext.ValueEquals(secrets["login.github.com"]) {
		t.Error("the field holds neither answer: value differed")
	}
}

func TestAgentIsTheCaller(t *testing.T) {
	self, err := procinfo.Get(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s (pid %d) via fillgate fill", self.Name, os.Getpid())

	r := newRig(t, setup{page: loginPage("https://github.com")})
	r.behave(atPage(func(ctx context.Context, r *rig, p *fakehuman.Page) error {
		if !strings.Contains(p.HTML(), "Asked by</dt><dd><code dir=\"ltr\">"+html.EscapeString(want)+"</code>") {
			r.t.Errorf("the prompt does not name the agent as %q", want)
		}
		return submitOn(ctx, p, r.secret)
	}))
	got := r.fill("github.com")
	r.expect(got, fill.StatusOK, "inserted")
	es := r.auditEntries()
	if len(es) != 1 {
		t.Fatalf("%d audit entries, want 1", len(es))
	}
	a := es[0].Agent
	if a.Name != self.Name || a.PID != os.Getpid() || a.Exe != exe || a.Via != "fillgate fill" || a.PeerPID != got.pid {
		t.Errorf("audit names the agent %+v; want %s (pid %d, %s) via fillgate fill through pid %d",
			a, self.Name, os.Getpid(), exe, got.pid)
	}
	log, err := os.ReadFile(filepath.Join(r.dirs.stateDir(t), "fillgate.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), fmt.Sprintf("agent=%q", want)) {
		t.Errorf("the host log does not name the agent as %q", want)
	}
}
