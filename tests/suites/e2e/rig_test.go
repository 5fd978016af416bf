//go:build linux

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/dirs"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/manifest"
	"github.com/fillgate/fillgate/tests/kit/envlist"
	"github.com/fillgate/fillgate/tests/kit/fgenv"
	"github.com/fillgate/fillgate/tests/kit/fgrun"
	"github.com/fillgate/fillgate/tests/kit/hostwait"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// basePolicy is what every rig's policy holds. One browser (so one host)
// serves all scenarios, and every request comes from the same agent (this
// test binary): the default rate limit of 6 a minute and the 10-minute
// cool-down after no_response would refuse later scenarios for reasons
// that are not theirs. The test's browser runs with a debugging port (the
// test drives its pages), so prompt = "browser" keeps the person's answer
// in the loopback page, where the test answers it; the native dialog has
// suites of its own. Every check on the page and field stays as it is.
const basePolicy = `# fillgate end-to-end tests: many requests from one agent in a minute.
rate_limit = "1000/1m"
no_response_cooldown = "0s"
prompt = "browser"
`

// testPolicy is the policy file every rig writes: basePolicy, and the
// person's consent to have fillgate type into the browser a program
// drives (driven = "in-page"). The test's browsers are driven (a
// debugging port, WebDriver BiDi), so without it every fill would go
// through fillgate's clean room; most scenarios here test what happens in
// the page itself (the insert, the submit, what the page keeps, then
// none), and in-page is the only way a value reaches that page. In-page
// takes only a value the person types. The tests of the clean room and of
// saved values set driven = "clean-room" for their service
// (cleanRoomFor), or write basePolicy alone (the default, clean-room).
const testPolicy = basePolicy + `driven = "in-page"
`

// cleanRoomFor is a policy table that has service logged in to through
// the clean room (driven = "clean-room"), over testPolicy's in-page.
func cleanRoomFor(service string) string {
	return fmt.Sprintf("\n[service.%q]\ndriven = \"clean-room\"\n", service)
}

// rig is one fillgate set-up in a temp root: HOME and the XDG dirs, a
// policy file, what `fillgate install` wrote, and the environment that the
// browser, the host it starts and the agent all share.
type rig struct {
	root     string
	env      []string
	runDir   string // $XDG_RUNTIME_DIR/fillgate: agent.sock and hosts/
	stateDir string // $XDG_STATE_HOME/fillgate: fillgate.log, audit.jsonl
	// extensionDir is where `fillgate install` unpacked the extension.
	extensionDir string
	// hostManifest is the host manifest `fillgate install` wrote.
	hostManifest string
}

// newRig makes the temp root and environment (fgenv) and writes the
// policy.
func newRig(t testing.TB) *rig {
	t.Helper()
	root := fgenv.New(t, "fge2e-")
	r := &rig{root: root.Dir, env: root.Env, runDir: root.RunDir, stateDir: root.StateDir}
	r.writePolicy(t, testPolicy)
	return r
}

// getenv looks a variable up in the rig's environment.
func (r *rig) getenv(key string) string { return envlist.Get(r.env, key) }

// writePolicy writes the policy file; the host reads it afresh for every
// request.
func (r *rig) writePolicy(t testing.TB, text string) { fgenv.WritePolicy(t, r.env, text) }

// cli runs the built fillgate with args in the rig's environment and
// returns its stdout, stderr and exit code.
func (r *rig) cli(t testing.TB, ctx context.Context, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	return r.cliIn(t, ctx, nil, args...)
}

// cliIn is cli with stdin.
func (r *rig) cliIn(t testing.TB, ctx context.Context, stdin []byte, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, fillgateBin, args...)
	cmd.Env = r.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	return fgrun.Command(t, cmd)
}

// installReport is the part of `fillgate install --json` the tests use.
type installReport struct {
	Binary       string `json:"binary"`
	ExtensionDir string `json:"extension_dir"`
	Manifests    []struct {
		Path     string   `json:"path"`
		Browsers []string `json:"browsers"`
		Status   string   `json:"status"`
	} `json:"manifests"`
}

// install runs `fillgate install --json` with args, as a person would,
// and checks what it wrote: one host manifest (at wantDir) that starts the
// built binary for our extension only, and the unpacked extension.
func (r *rig) install(t testing.TB, ctx context.Context, wantDir string, args ...string) {
	t.Helper()
	out, errOut, code := r.cli(t, ctx, append([]string{"install", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("fillgate install exited %d: %s%s", code, out, errOut)
	}
	var rep installReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("fillgate install --json printed %s: %v", out, err)
	}
	if rep.Binary != fillgateBin || len(rep.Manifests) != 1 || rep.Manifests[0].Status != "created" ||
		filepath.Dir(rep.Manifests[0].Path) != wantDir {
		t.Fatalf("fillgate install reported %s; want one manifest created in %s for %s", out, wantDir, fillgateBin)
	}
	r.hostManifest, r.extensionDir = rep.Manifests[0].Path, rep.ExtensionDir
	data, err := dirs.Data(r.getenv)
	if err != nil {
		t.Fatal(err)
	}
	if r.extensionDir != filepath.Join(data, "extension") {
		t.Errorf("extension unpacked to %s; want %s", r.extensionDir, filepath.Join(data, "extension"))
	}
	if _, err := os.Stat(filepath.Join(r.extensionDir, "manifest.json")); err != nil {
		t.Fatalf("no unpacked extension: %v", err)
	}
	raw, err := os.ReadFile(r.hostManifest)
	if err != nil {
		t.Fatalf("read the host manifest: %v", err)
	}
	var m struct {
		Name              string   `json:"name"`
		Path              string   `json:"path"`
		Type              string   `json:"type"`
		AllowedOrigins    []string `json:"allowed_origins"`
		AllowedExtensions []string `json:"allowed_extensions"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("the host manifest is not JSON: %v", err)
	}
	allowed := slices.Concat(m.AllowedOrigins, m.AllowedExtensions)
	if m.Name != manifest.HostName || m.Path != fillgateBin || m.Type != "stdio" ||
		len(allowed) != 1 || (allowed[0] != manifest.ExtensionOrigin && allowed[0] != manifest.FirefoxID) {
		t.Fatalf("host manifest %s holds %s", r.hostManifest, raw)
	}
}

// waitHostOf waits until a host started by the browser browserPID (or
// its helpers), other than the host whose pid is old (0: any), runs in
// the rig's environment with the extension connected, and returns its
// status. Other browsers' hosts may run too.
func (r *rig) waitHostOf(t testing.TB, ctx context.Context, browserPID, old int) agentsock.HostStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var found agentsock.HostStatus
	hs, err := hostwait.Until(ctx, r.runDir, func(hs []agentsock.HostStatus) bool {
		for _, h := range hs {
			if h.PID != old && h.Extension.Connected && descends(h.PID, browserPID) {
				found = h
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no new host of browser %d with the extension connected (%v); last status %+v", browserPID, err, hs)
	}
	return found
}

// doctorCheck is one check of `fillgate doctor --json`.
type doctorCheck struct{ Name, Status, Detail string }

// doctor runs `fillgate doctor --json` with args as a person would and
// returns its checks and what it printed.
func (r *rig) doctor(t testing.TB, ctx context.Context, args ...string) ([]doctorCheck, []byte) {
	t.Helper()
	out, errOut, _ := r.cli(t, ctx, append([]string{"doctor", "--json"}, args...)...)
	var rep struct {
		Checks []doctorCheck `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("fillgate doctor --json printed %s%s: %v", out, errOut, err)
	}
	return rep.Checks, out
}

// doctorSees runs `fillgate doctor --json` with args and checks that it
// sees the browser browserName's manifest and the running host hostPID
// with the extension connected.
func (r *rig) doctorSees(t testing.TB, ctx context.Context, hostPID int, browserName string, args ...string) {
	t.Helper()
	checks, out := r.doctor(t, ctx, args...)
	want := map[string]bool{browserName: false, fmt.Sprintf("host %d", hostPID): false, "extension": false}
	for _, c := range checks {
		if _, ok := want[c.Name]; ok {
			want[c.Name] = c.Status == "ok"
		}
	}
	for name, ok := range want {
		if !ok {
			t.Errorf("fillgate doctor's %s check is not ok: %s", name, out)
		}
	}
}

// awaitPaused waits until the one running host has heard that fills are
// paused (or not).
func (r *rig) awaitPaused(t testing.TB, ctx context.Context, paused bool) {
	t.Helper()
	deadline, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	if poll.Until(deadline, 50*time.Millisecond, func() (bool, error) {
		return r.hostStatus(t, deadline).Extension.Paused == paused, nil
	}) != nil {
		t.Fatalf("the host never heard that fills are paused=%v", paused)
	}
}

// descends reports whether pid is a descendant of ancestor.
func descends(pid, ancestor int) bool {
	for p := parentPID(pid); p > 1; p = parentPID(p) {
		if p == ancestor {
			return true
		}
	}
	return false
}

// hostStatus returns the one running host's status.
func (r *rig) hostStatus(t testing.TB, ctx context.Context) agentsock.HostStatus {
	t.Helper()
	hs, err := agentsock.Status(ctx, r.runDir)
	if err != nil || len(hs) != 1 {
		t.Fatalf("host status: %+v, %v", hs, err)
	}
	return hs[0]
}

// checkHostProcess checks that pid is the built fillgate, started by the
// browser whose pid is browserPID (directly or through its helpers), and
// that its socket is hosts/<pid>.sock.
func (r *rig) checkHostProcess(t testing.TB, st agentsock.HostStatus, browserPID int) {
	t.Helper()
	exe, err := os.Readlink("/proc/" + strconv.Itoa(st.PID) + "/exe")
	if err != nil || exe != fillgateBin {
		t.Fatalf("host pid %d runs %q (%v); want %s", st.PID, exe, err, fillgateBin)
	}
	if want := filepath.Join(r.runDir, "hosts", strconv.Itoa(st.PID)+".sock"); st.Socket != want {
		t.Errorf("host socket %s; want %s", st.Socket, want)
	}
	for pid := st.PID; ; {
		ppid := parentPID(pid)
		if ppid == browserPID {
			return
		}
		if ppid <= 1 {
			t.Fatalf("host pid %d is not a descendant of the browser (pid %d)", st.PID, browserPID)
		}
		pid = ppid
	}
}

// parentPID reads pid's parent from /proc, or 0.
func parentPID(pid int) int {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// waitGone waits for process pid to exit: reaped, or a zombie whose
// threads have all exited (its files closed).
func waitGone(t testing.TB, ctx context.Context, pid int, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if poll.Until(ctx, 100*time.Millisecond, func() (bool, error) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true, nil // reaped
		}
		// A zombie: its first thread has exited. A killed Go process
		// has more, and its files (a listening socket) close only when
		// the last one exits: until then, as /proc/PID/task shows,
		// another process could not bind its port.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || len(stat) <= i+2 || stat[i+2] != 'Z' {
			return false, nil
		}
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		return err != nil || len(tasks) <= 1, nil
	}) != nil {
		t.Errorf("%s (pid %d) still runs after the browser stopped", what, pid)
	}
}

// agent is one run of `fillgate fill --json` as the agent.
type agent struct{ *fgrun.Run }

// fill starts `fillgate fill --json` with args in the rig's environment.
func (r *rig) fill(t testing.TB, ctx context.Context, args ...string) *agent {
	t.Helper()
	cmd := exec.CommandContext(ctx, fillgateBin, append([]string{"fill", "--json"}, args...)...)
	cmd.Env = r.env
	return &agent{fgrun.Start(t, cmd)}
}

// result waits for the agent to exit and returns its one JSON result and
// exit code. Nothing but that one line may be on stdout.
func (a *agent) result(t testing.TB, ctx context.Context) (fill.Result, int) {
	t.Helper()
	res, code, err := a.Result(ctx)
	if err != nil {
		t.Fatalf("%v; stderr: %s", err, a.Stderr())
	}
	return res, code
}

// wantResult checks a result's status, exit code, service, path and field
// and that its detail holds each of details.
func wantResult(t testing.TB, res fill.Result, code int, status fill.Status, service, field string, details ...string) {
	t.Helper()
	if res.Status != status || code != status.ExitCode() {
		t.Fatalf("result %+v with exit code %d; want %s with exit code %d", res, code, status, status.ExitCode())
	}
	if res.Service != service || res.Field != field || res.Via != fill.ViaExtension {
		t.Errorf("result %+v; want service %s, field %s, via extension", res, service, field)
	}
	for _, d := range details {
		if !strings.Contains(res.Detail, d) {
			t.Errorf("result detail %q does not say %q", res.Detail, d)
		}
	}
}

// lastAudit returns the audit log's newest entry.
func (r *rig) lastAudit(t testing.TB) fill.AuditEntry { return fgenv.LastAudit(t, r.stateDir) }

// awaitAudit waits until the audit log's newest entry has status and
// returns it: after an agent that hung up, the host records the outcome
// once its own flow has ended, which the agent does not wait for.
func (r *rig) awaitAudit(t testing.TB, ctx context.Context, status fill.Status) fill.AuditEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var es []fill.AuditEntry
	err := poll.Until(ctx, 20*time.Millisecond, func() (bool, error) {
		var err error
		es, err = audit.Open(r.stateDir).Recent(1)
		return len(es) == 1 && es[0].Status == status, err
	})
	if err != nil {
		t.Fatalf("the audit log's newest entry is %+v (%v), want status %s", es, err, status)
	}
	return es[0]
}

// scanAgentOutput looks for the secret in what the agent side of one
// request wrote: the agent's stdout (the result) and stderr, the host's
// log and the audit log; neither log may report a data race.
func (r *rig) scanAgentOutput(t testing.TB, secret []byte, a *agent) {
	t.Helper()
	select {
	case <-a.Done():
	default:
		t.Fatal("scan of an agent that still runs")
	}
	leakscan.Bytes(t, secret, "the agent's stdout (the result)", a.Stdout())
	leakscan.Bytes(t, secret, "the agent's stderr", a.Stderr())
	for _, name := range []string{"fillgate.log", audit.FileName} {
		data, err := os.ReadFile(filepath.Join(r.stateDir, name))
		if err != nil {
			t.Errorf("read %s: %v", name, err)
			continue
		}
		leakscan.Bytes(t, secret, name, data)
		if bytes.Contains(data, []byte("DATA RACE")) {
			t.Errorf("%s reports a data race", name)
		}
	}
}

// scanAgentSide looks for the secret in everything the agent side of one
// request produced (scanAgentOutput), and in the command line and
// environment of the host (hostPID), the browser (browserPID) and this
// test process.
func (r *rig) scanAgentSide(t testing.TB, secret []byte, a *agent, hostPID, browserPID int) {
	t.Helper()
	r.scanAgentOutput(t, secret, a)
	for _, pid := range []int{hostPID, browserPID, os.Getpid()} {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			t.Errorf("process %d is gone before its scan", pid)
		}
		leakscan.Process(t, secret, pid)
	}
}
