package hostcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/fillstate"
	"github.com/fillgate/fillgate/tests/fakes/fakehuman"
)

// leasePolicy grants a lease for github.com and has the person answer in
// the loopback page. Its scenarios run in the person's own browser
// (undriven): in one a program drives, no lease fills the page.
const leasePolicy = "prompt = \"browser\"\n\n[service.\"github.com\"]\napproval = \"lease\"\nlease = \"10m\"\n"

// agentShell is one shell process that runs `fillgate fill` each time the
// test tells it to: one agent process that asks again and again, as an
// interpreter running an agent does. Every shell runs the same
// executable.
type agentShell struct {
	r    *rig
	p    *running
	in   io.WriteCloser
	asks int
}

// startAgent starts a shell that, for each line on its stdin, runs
// `fillgate fill --json --via extension --service service` (not as its
// last command, so the shell stays the process that asks).
func (r *rig) startAgent(name, service string) *agentShell {
	r.t.Helper()
	const script = `while read -r _; do "$0" fill --json --via extension --service "$1" </dev/null; done`
	cmd := exec.Command("sh", "-c", script, fillgateBin(), service)
	in, err := cmd.StdinPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	a := &agentShell{r: r, p: r.start(name, cmd, r.dirs.environ()), in: in}
	// Before the rig's teardown (cleanups run last first): the shell's
	// output joins the leak scan.
	r.t.Cleanup(func() {
		_ = a.in.Close()
		_, _ = a.p.finish()
	})
	return a
}

// pid is the shell's pid.
func (a *agentShell) pid() int { return a.p.cmd.Process.Pid }

// fill has the shell run `fillgate fill` once more and returns its result.
func (a *agentShell) fill() fill.Result {
	r := a.r
	r.t.Helper()
	a.asks++
	if _, err := io.WriteString(a.in, "fill\n"); err != nil {
		r.t.Fatalf("%s: %v", a.p.name, err)
	}
	for {
		out := a.p.stdout.Bytes()
		if bytes.Count(out, []byte("\n")) >= a.asks {
			line := bytes.Split(out, []byte("\n"))[a.asks-1]
			var res fill.Result
			if err := json.Unmarshal(line, &res); err != nil {
				r.t.Fatalf("%s printed %q, want one JSON result", a.p.name, r.safe(string(line)))
			}
			return res
		}
		select {
		case <-r.ctx.Done():
			r.t.Fatalf("%s: fill %d never ended: %s", a.p.name, a.asks, r.safe(string(a.p.stderr.Bytes())))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// noPrompt is the person who is not asked: a prompt fails the test.
func noPrompt(why string) human {
	return func(context.Context, *rig, prompted) error { return errors.New("a prompt opened " + why) }
}

// approvesSaved approves the keyring's value for the service's only
// account.
func approvesSaved() human {
	return approvesFrom(fromKeyring, "", nil, fakehuman.ApproveOptions{})
}

// TestLeaseBelongsToOneProcess: two agents under one interpreter (two sh
// processes, one executable). The person approves for the first under
// approval = "lease"; the second, another process of the same
// executable, is asked in the prompt, not filled under the first's lease;
// the first, asking again, fills under its lease with a notice and no
// prompt.
func TestLeaseBelongsToOneProcess(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: k.env, policy: leasePolicy})
	r.remember("github.com", "", r.secret)
	first := r.startAgent("first sh", "github.com")
	second := r.startAgent("second sh", "github.com")

	r.behave(approvesSaved())
	r.expectResult(first.fill(), fill.StatusOK, "without a prompt until")
	if r.promptCount() != 1 {
		t.Fatalf("%d prompts after the first approval", r.promptCount())
	}

	r.behave(approvesSaved())
	r.expectResult(second.fill(), fill.StatusOK, "approved in the prompt")
	if r.promptCount() != 2 {
		t.Fatalf("the second shell filled under the first shell's lease (%d prompts)", r.promptCount())
	}

	r.behave(noPrompt("for the process that holds the lease"))
	r.expectResult(first.fill(), fill.StatusOK, "under a lease, with a notice and no prompt")
	if r.promptCount() != 2 || r.ext.Inserts() != 3 || !r.ext.ValueEquals(r.secret) {
		t.Fatalf("%d prompts, %d inserts; value matched %v", r.promptCount(), r.ext.Inserts(), r.ext.ValueEquals(r.secret))
	}
	notices := r.ext.Notices()
	if len(notices) != 1 || !strings.Contains(notices[0].Message, fmt.Sprintf("(pid %d)", first.pid())) {
		t.Errorf("the notices %+v do not name the first shell (pid %d)", notices, first.pid())
	}
	if hows := auditHows(r); !slices.Equal(hows, []string{fill.HowApproved, fill.HowApproved, fill.HowLease}) {
		t.Errorf("the audit log says %v", hows)
	}
	// Each shell holds a lease of its own.
	_, leases := r.saved()
	var agents []string
	for _, l := range leases {
		agents = append(agents, fmt.Sprint(l["agent"]))
	}
	slices.Sort(agents)
	want := []string{fmt.Sprintf("sh (pid %d) via fillgate fill", first.pid()), fmt.Sprintf("sh (pid %d) via fillgate fill", second.pid())}
	slices.Sort(want)
	if !slices.Equal(agents, want) {
		t.Errorf("fillgate saved lists leases for %q; want %q", agents, want)
	}
	k.scan(t, r)
}

// TestForgetAndRememberEndTheLease: `fillgate forget` and `fillgate
// remember` of a new value end the lease on the old one: the agent that
// held it is asked in the prompt again, and the new value goes in.
// Remembering again, with no forget first, does the same.
func TestForgetAndRememberEndTheLease(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{browser: undriven, page: loginPage("https://github.com"), env: k.env, policy: leasePolicy})
	r.remember("github.com", "", r.secret)
	agent := r.startAgent("sh", "github.com")

	r.behave(approvesSaved())
	r.expectResult(agent.fill(), fill.StatusOK, "without a prompt until")
	r.behave(noPrompt("under the lease"))
	r.expectResult(agent.fill(), fill.StatusOK, "under a lease, with a notice and no prompt")

	out, code := r.cli(nil, "forget", "--service", "github.com")
	if code != 0 || !strings.Contains(string(out), "removed the password for github.com") {
		t.Fatalf("fillgate forget: exit %d, %s", code, r.safe(string(out)))
	}
	// asked remembers a new value; the agent is asked in prompt number
	// prompts, and the new value goes in.
	asked := func(prompts int, after string) {
		t.Helper()
		value := r.newSecret()
		r.remember("github.com", "", value)
		r.behave(approvesSaved())
		r.expectResult(agent.fill(), fill.StatusOK, "approved in the prompt")
		if r.promptCount() != prompts || !r.ext.ValueEquals(value) {
			t.Fatalf("after %s: %d prompts; the new value went in: %v", after, r.promptCount(), r.ext.ValueEquals(value))
		}
	}
	asked(2, "forget and remember")
	// The approval granted a lease on the new value; a newer one ends it.
	asked(3, "remember")
	r.behave(noPrompt("under the lease on the newest value"))
	r.expectResult(agent.fill(), fill.StatusOK, "under a lease")
	if hows := auditHows(r); !slices.Equal(hows, []string{fill.HowApproved, fill.HowLease, fill.HowApproved, fill.HowApproved, fill.HowLease}) {
		t.Errorf("the audit log says %v", hows)
	}
	k.scan(t, r)
}

// TestForgetEndsDiskLeases: the CDP path's leases, in the state dir, end
// with `fillgate forget` (by service, and by account) and with `fillgate
// remember`; `fillgate saved` lists them no more, and each command says
// how many ended, naming no account it was not given.
func TestForgetEndsDiskLeases(t *testing.T) {
	k := startKeyring(t)
	r := newRig(t, setup{noHost: true, env: k.env})
	st, err := fillstate.Open(filepath.Join(r.dirs.stateDir(t), "cdp"))
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(10 * time.Minute)
	grant := func(id, service, item string) {
		t.Helper()
		l := fill.Lease{ID: id, AgentKey: "sh\x00" + id, Agent: "sh (pid 1) via fillgate fill", Service: service,
			Field: fill.FieldPassword, Account: item, Item: item, Stamp: "old", Origin: "https://" + service, Via: fill.ViaCDP, Until: until}
		if err := st.Grant(l); err != nil {
			t.Fatal(err)
		}
	}
	grant("a", "github.com", "alice@example.com")
	grant("b", "github.com", "bob")
	grant("c", "gitlab.com", "")
	leased := func() []string {
		_, leases := r.saved()
		var out []string
		for _, l := range leases {
			account, _ := l["account"].(string)
			out = append(out, fmt.Sprint(l["service"])+" "+account)
		}
		slices.Sort(out)
		return out
	}
	if got := leased(); len(got) != 3 {
		t.Fatalf("fillgate saved lists the leases %q", got)
	}

	r.remember("github.com", "alice@example.com", r.secret)
	r.remember("github.com", "bob", r.newSecret())
	if got := leased(); !slices.Equal(got, []string{"gitlab.com "}) {
		t.Errorf("after remember: leases %q", got)
	}
	grant("a", "github.com", "alice@example.com")
	grant("b", "github.com", "bob")

	out, code := r.cli(nil, "forget", "--service", "github.com", "--account", "bob")
	if code != 0 || !strings.Contains(string(out), "ended 1 lease for github.com; its agent must ask again\n") {
		t.Errorf("forget --account: exit %d, %q", code, r.safe(string(out)))
	}
	if got := leased(); !slices.Equal(got, []string{"github.com alice@example.com", "gitlab.com "}) {
		t.Errorf("after forget --account bob: leases %q", got)
	}
	out, code = r.cli(nil, "forget", "--service", "github.com")
	if code != 0 || !strings.Contains(string(out), "ended 1 lease for github.com; its agent must ask again\n") || strings.Contains(endedLine(out), "alice") {
		t.Errorf("forget: exit %d, %q", code, r.safe(string(out)))
	}
	if got := leased(); !slices.Equal(got, []string{"gitlab.com "}) {
		t.Errorf("after forget: leases %q", got)
	}
	r.remember("gitlab.com", "", r.newSecret())
	if got := leased(); len(got) != 0 {
		t.Errorf("after remember for gitlab.com: leases %q", got)
	}
	grant("d", "example.com", "")
	out, code = r.cli(nil, "forget", "--all")
	if code != 0 || !strings.Contains(string(out), "ended 1 lease; its agent must ask again\n") {
		t.Errorf("forget --all: exit %d, %q", code, r.safe(string(out)))
	}
	if got := leased(); len(got) != 0 {
		t.Errorf("after forget --all: leases %q", got)
	}
	k.scan(t, r)
}

// endedLine is the line of out that says how many leases ended, or "".
func endedLine(out []byte) string {
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "ended ") {
			return line
		}
	}
	return ""
}
