package agentid

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/internal/procinfo"
	"github.com/fillgate/fillgate/tests/kit/child"
)

// program copies /bin/sleep to dir/name: a process that runs under that
// name until killed.
func program(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// startProgram runs prog 60 as a child of this test and returns its pid.
func startProgram(t *testing.T, prog string) int {
	t.Helper()
	cmd := exec.Command(prog, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// startUnderShell runs prog 60 in the background of a shell, as an
// interpreter runs a `fillgate fill`, and returns the shell's pid and
// prog's once prog runs.
func startUnderShell(t *testing.T, prog string) (shell, child int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `"$0" 60 & echo $!; wait`, prog)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			_ = p.Kill()
		}
	})
	// The background job is a forked shell until it execs prog.
	want := filepath.Base(prog)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if p, err := procinfo.Get(child); err == nil && p.Name == want {
			return cmd.Process.Pid, child
		}
		if time.Now().After(deadline) {
			t.Fatalf("the shell's child never became %s", want)
		}
	}
}

// TestAgentIsOneProcess: two shells, one executable, each running a
// fillgate client: each shell is its own agent, named with its start
// time, so their process keys differ while their executable key (for
// cool-downs and rates) is the same; one agent read twice is the same.
func TestAgentIsOneProcess(t *testing.T) {
	fg := program(t, t.TempDir(), "fillgate")
	sh1, c1 := startUnderShell(t, fg)
	sh2, c2 := startUnderShell(t, fg)
	a1, a2 := Find(c1, ""), Find(c2, "")
	if a1.PID != sh1 || a2.PID != sh2 || a1.PeerPID != c1 || a2.PeerPID != c2 {
		t.Fatalf("agents %+v and %+v; want the shells %d and %d", a1, a2, sh1, sh2)
	}
	for _, a := range []fill.Agent{a1, a2} {
		p, err := procinfo.Get(a.PID)
		if err != nil {
			t.Fatal(err)
		}
		if a.Start == 0 || a.Start != p.Start {
			t.Errorf("agent %d has start %d; the OS says %d", a.PID, a.Start, p.Start)
		}
	}
	if a1.Key() != a2.Key() || a1.Exe == "" {
		t.Errorf("executable keys %q and %q; want one, the shell's", a1.Key(), a2.Key())
	}
	if a1.ProcessKey() == "" || a1.ProcessKey() == a2.ProcessKey() {
		t.Error("the two shells share a process key (or have none)")
	}
	if again := Find(c1, ""); again.ProcessKey() != a1.ProcessKey() {
		t.Error("the same shell read twice has two process keys")
	}
}

// TestForwardedAgentIsItsTunnelProcess: a request forwarded over ssh
// comes from the local ssh (or sshd) process, which is the agent: its own
// pid and start time, so two ssh connections are two agents.
func TestForwardedAgentIsItsTunnelProcess(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"ssh", "sshd"} {
		prog := program(t, dir, name)
		p1, p2 := startProgram(t, prog), startProgram(t, prog)
		a1, a2 := Find(p1, ""), Find(p2, "")
		if a1.PID != p1 || a2.PID != p2 || a1.Remote != "ssh" || a2.Remote != "ssh" {
			t.Fatalf("%s: agents %+v and %+v; want the tunnel processes %d and %d via ssh", name, a1, a2, p1, p2)
		}
		if a1.Start == 0 || a1.ProcessKey() == "" || a1.ProcessKey() == a2.ProcessKey() {
			t.Errorf("%s: two connections share a process key (or have none)", name)
		}
	}
}

// TestAgentAncestry: sh runs a fillgate (a copy of this binary, named
// fillgate), which runs this very executable as the socket's peer: both
// fillgates are skipped, and the agent is the shell. A peer that is not
// fillgate is itself the agent.
func TestAgentAncestry(t *testing.T) {
	self := Self()
	bin := t.TempDir()
	fillgateCopy := child.CopySelf(t, bin, "fillgate")
	agentCopy := child.CopySelf(t, bin, "some-agent")

	// sh -> fillgate -> this test binary. "; exit" keeps sh from
	// exec'ing its last command.
	sh := exec.Command("sh", "-c", `"$0"; exit $?`, fillgateCopy)
	sh.Env = append(os.Environ(), envHelper+"=spawn", envNext+"="+self)
	peer := startChain(t, sh)
	a := Find(peer, self)
	if a.PID != sh.Process.Pid || a.Name != "sh" {
		t.Errorf("agent = %+v, want the shell (pid %d)", a, sh.Process.Pid)
	}
	if base := filepath.Base(a.Exe); base != "dash" && base != "bash" && base != "sh" {
		t.Errorf("agent exe = %q, want the shell's", a.Exe)
	}
	if a.PeerPID != peer || a.PeerPID == a.PID {
		t.Errorf("peer pid = %d, want the client %d", a.PeerPID, peer)
	}

	sh = exec.Command("sh", "-c", `"$0"; exit $?`, agentCopy)
	sh.Env = append(os.Environ(), envHelper+"=wait")
	peer = startChain(t, sh)
	if a := Find(peer, self); a.PID != peer || a.PeerPID != peer || a.Name != "some-agent" || a.Exe != agentCopy {
		t.Errorf("agent = %+v, want the client itself (pid %d, %s)", a, peer, agentCopy)
	}
}
