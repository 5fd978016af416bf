package fillstate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// The test binary doubles as a helper process: with FILLSTATE_HELPER set
// it runs one State operation on FILLSTATE_DIR and reports on stdout.
func TestMain(m *testing.M) {
	if op := os.Getenv("FILLSTATE_HELPER"); op != "" {
		os.Exit(helper(op))
	}
	os.Exit(m.Run())
}

func helper(op string) int {
	d, err := Open(os.Getenv("FILLSTATE_DIR"))
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	switch op {
	case "claim":
		if _, err := d.Claim(os.Getenv("FILLSTATE_SERVICE")); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("held")
		// Hold the claim until killed or stdin closes.
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return 0
	case "noresponse":
		if err := d.NoteNoResponse("agent", "example.com", time.Now().Add(time.Hour)); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("noted")
		return 0
	case "allow":
		limit, _ := strconv.Atoi(os.Getenv("FILLSTATE_LIMIT"))
		fmt.Println(d.Allow("agent", time.Now(), limit, time.Hour))
		return 0
	case "grant":
		err := d.Grant(fill.Lease{ID: "l1", AgentKey: "agent", Service: "example.com", Field: fill.FieldPassword,
			Account: "alice", Origin: "https://example.com", Until: time.Now().Add(time.Hour)})
		if err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("granted")
		return 0
	}
	return 2
}

// helperCmd prepares a helper process running op on dir.
func helperCmd(t *testing.T, dir, op string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FILLSTATE_HELPER="+op, "FILLSTATE_DIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func open(t *testing.T, dir string) *Dir {
	t.Helper()
	d, err := Open(dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return d
}

func TestClaimIsExclusiveAndReleased(t *testing.T) {
	dir := stateDir(t)
	a, b := open(t, dir), open(t, dir)
	release, err := a.Claim("example.com")
	if err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if _, err := b.Claim("example.com"); !errors.Is(err, fill.ErrBusy) {
		t.Fatalf("second claim of the same service: got %v, want ErrBusy", err)
	}
	if _, err := a.Claim("example.com"); !errors.Is(err, fill.ErrBusy) {
		t.Fatalf("same Dir claiming again: got %v, want ErrBusy", err)
	}
	other, err := b.Claim("example.org")
	if err != nil {
		t.Fatalf("another service: %v", err)
	}
	other()
	release()
	release() // a second call does nothing
	again, err := b.Claim("example.com")
	if err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	again()
}

func TestClaimAcrossProcessesEndsWhenTheHolderDies(t *testing.T) {
	dir := stateDir(t)
	d := open(t, dir)
	cmd := helperCmd(t, dir, "claim", "FILLSTATE_SERVICE=example.com")
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "held" {
		t.Fatalf("helper did not claim: %q %v", line, err)
	}
	if _, err := d.Claim("example.com"); !errors.Is(err, fill.ErrBusy) {
		t.Fatalf("claim held by another process: got %v, want ErrBusy", err)
	}
	// Kill the holder without letting it release: the kernel must.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("kill helper: %v", err)
	}
	_ = cmd.Wait()
	release, err := d.Claim("example.com")
	if err != nil {
		t.Fatalf("claim after the holder died: %v", err)
	}
	release()
}

func TestCooldownPersistsAcrossProcesses(t *testing.T) {
	dir := stateDir(t)
	out, err := helperCmd(t, dir, "noresponse").Output()
	if err != nil || strings.TrimSpace(string(out)) != "noted" {
		t.Fatalf("helper: %q %v", out, err)
	}
	d := open(t, dir)
	until, ok := d.CoolingDown("agent", "example.com", time.Now())
	if !ok || until.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("cool-down not seen by another process: %v %v", until, ok)
	}
	if _, ok := d.CoolingDown("agent", "example.org", time.Now()); ok {
		t.Fatalf("cool-down leaked to another service")
	}
	if _, ok := d.CoolingDown("other-agent", "example.com", time.Now()); ok {
		t.Fatalf("cool-down leaked to another agent")
	}
	if _, ok := d.CoolingDown("agent", "example.com", time.Now().Add(2*time.Hour)); ok {
		t.Fatalf("cool-down did not end")
	}
}

func TestNoteNoResponseReplacesAndExpires(t *testing.T) {
	d := open(t, stateDir(t))
	now := time.Now()
	if err := d.NoteNoResponse("a", "s.test", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := d.NoteNoResponse("a", "s.test", now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	until, ok := d.CoolingDown("a", "s.test", now.Add(5*time.Minute))
	if !ok || !until.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("later note did not replace the earlier: %v %v", until, ok)
	}
	var s state
	data, _ := os.ReadFile(filepath.Join(d.dir, stateFile))
	if err := json.Unmarshal(data, &s); err != nil || len(s.Cooldowns) != 1 {
		t.Fatalf("state file holds %d cool-downs (%v), want 1", len(s.Cooldowns), err)
	}
}

// TestBarsAreSharedAndExpire: a bar set through one Dir is seen by
// another on the same directory (the host's and the CDP path's), holds
// its service only, and ends.
func TestBarsAreSharedAndExpire(t *testing.T) {
	dir := stateDir(t)
	now := time.Now()
	if err := open(t, dir).Bar("s.test", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	d := open(t, dir)
	if until, ok := d.Barred("s.test", now); !ok || !until.Equal(now.Add(time.Hour)) {
		t.Fatalf("the bar is not seen by another Dir: %v %v", until, ok)
	}
	if _, ok := d.Barred("other.test", now); ok {
		t.Error("the bar holds another service")
	}
	if _, ok := d.Barred("s.test", now.Add(2*time.Hour)); ok {
		t.Error("the bar did not end")
	}
}

func TestAllowSlidingWindow(t *testing.T) {
	d := open(t, stateDir(t))
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if !d.Allow("a", t0.Add(time.Duration(i)*time.Second), 3, time.Minute) {
			t.Fatalf("request %d refused under the limit", i)
		}
	}
	if d.Allow("a", t0.Add(10*time.Second), 3, time.Minute) {
		t.Fatalf("fourth request in the window allowed")
	}
	if !d.Allow("b", t0.Add(10*time.Second), 3, time.Minute) {
		t.Fatalf("another agent refused")
	}
	if !d.Allow("a", t0.Add(61*time.Second), 3, time.Minute) {
		t.Fatalf("request after the window refused")
	}
	if !d.Allow("a", t0, 0, time.Minute) {
		t.Fatalf("no limit refused")
	}
}

func TestAllowIsSerialisedAcrossProcesses(t *testing.T) {
	dir := stateDir(t)
	const procs, limit = 6, 3
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range procs {
		wg.Go(func() {
			out, err := helperCmd(t, dir, "allow", "FILLSTATE_LIMIT="+strconv.Itoa(limit)).Output()
			if err != nil {
				t.Errorf("helper: %v", err)
				return
			}
			if strings.TrimSpace(string(out)) == "true" {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Fatalf("%d of %d concurrent processes were allowed, want exactly %d", got, procs, limit)
	}
}

func TestAllowIsSerialisedAcrossGoroutines(t *testing.T) {
	dir := stateDir(t)
	const n, limit = 20, 7
	var allowed atomic.Int32
	var wg sync.WaitGroup
	now := time.Now()
	for range n {
		wg.Go(func() {
			if open(t, dir).Allow("a", now, limit, time.Hour) {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != limit {
		t.Fatalf("%d of %d allowed, want %d", got, n, limit)
	}
}

func TestCorruptStateIsSetAside(t *testing.T) {
	dir := stateDir(t)
	d := open(t, dir)
	path := filepath.Join(dir, stateFile)
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !d.Allow("a", time.Now(), 1, time.Minute) {
		t.Fatalf("fresh state after corruption refused")
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Fatalf("corrupt file not kept aside: %v", err)
	}
	var s state
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("state file not rewritten as JSON: %v", err)
	}
}

func TestFilesArePrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	d := open(t, dir)
	release, err := d.Claim("example.com")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !d.Allow("a", time.Now(), 5, time.Minute) {
		t.Fatal("refused")
	}
	err = filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		// File modes are Unix: on Windows the files have the ACL of
		// %LOCALAPPDATA% (the user's own); fillgate sets none. The
		// temp-file check holds on both.
		if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
			t.Errorf("%s has mode %04o, open to others", path, perm)
		}
		if strings.HasSuffix(path, ".tmp") {
			t.Errorf("temp file left behind: %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLockTimeout(t *testing.T) {
	dir := stateDir(t)
	d := open(t, dir)
	d.LockTimeout = 20 * time.Millisecond
	unlock, err := open(t, dir).lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if d.Allow("a", time.Now(), 5, time.Minute) {
		t.Fatalf("Allow said yes while the state could not be locked")
	}
	if err := d.NoteNoResponse("a", "s.test", time.Now().Add(time.Minute)); err == nil {
		t.Fatalf("NoteNoResponse succeeded while the state could not be locked")
	}
}

func BenchmarkAllow(b *testing.B) {
	d, err := Open(filepath.Join(b.TempDir(), "state"))
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	for b.Loop() {
		d.Allow("agent", now, 1<<30, time.Hour)
	}
}

// stateDir is a state directory that does not exist yet (Open makes it
// 0700; a test's temp dir itself is 0755).
func stateDir(t *testing.T) string { return filepath.Join(t.TempDir(), "state") }

// TestLeasesAcrossProcesses: a lease one process granted covers the same
// agent, service, field, account and origin in another, until it ends or
// is ended; a new one replaces it.
func TestLeasesAcrossProcesses(t *testing.T) {
	dir := stateDir(t)
	d := open(t, dir)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FILLSTATE_HELPER=grant", "FILLSTATE_DIR="+dir)
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "granted" {
		t.Fatalf("helper: %v %s", err, out)
	}
	now := time.Now()
	l, ok := d.Leased("agent", "example.com", fill.FieldPassword, "alice", "https://example.com", now)
	if !ok || l.ID != "l1" {
		t.Fatalf("the other process's lease: %v %+v", ok, l)
	}
	for name, args := range map[string][5]string{
		"another agent":   {"other", "example.com", fill.FieldPassword, "alice", "https://example.com"},
		"another service": {"agent", "example.org", fill.FieldPassword, "alice", "https://example.com"},
		"another field":   {"agent", "example.com", fill.FieldOTP, "alice", "https://example.com"},
		"another account": {"agent", "example.com", fill.FieldPassword, "", "https://example.com"},
		"another origin":  {"agent", "example.com", fill.FieldPassword, "alice", "https://www.example.com"},
	} {
		if _, ok := d.Leased(args[0], args[1], args[2], args[3], args[4], now); ok {
			t.Errorf("%s is covered", name)
		}
	}
	if _, ok := d.Leased("agent", "example.com", fill.FieldPassword, "alice", "https://example.com", now.Add(time.Hour)); ok {
		t.Error("the lease covers a fill after it ended")
	}
	renewed := l
	renewed.ID, renewed.Until = "l2", now.Add(2*time.Hour)
	if err := d.Grant(renewed); err != nil {
		t.Fatal(err)
	}
	live, err := d.LiveLeases(now)
	if err != nil || len(live) != 1 || live[0].ID != "l2" {
		t.Fatalf("live leases %v %+v", err, live)
	}
	if ended, err := d.EndLease("l2"); err != nil || !ended {
		t.Fatalf("end: %v %v", ended, err)
	}
	if live, _ := d.LiveLeases(now); len(live) != 0 {
		t.Fatalf("after the end: %+v", live)
	}
}

// TestPausedIsKeptByProfile: the pause switch of one profile's extension
// is seen by another Dir on the directory, holds that profile only, and
// is switched off.
func TestPausedIsKeptByProfile(t *testing.T) {
	dir := stateDir(t)
	if err := open(t, dir).SetPaused("ext chromium default", true); err != nil {
		t.Fatal(err)
	}
	d := open(t, dir)
	if !d.Paused("ext chromium default") || d.Paused("ext chromium work") {
		t.Fatal("the pause is not kept for its profile only")
	}
	if err := d.SetPaused("ext chromium default", false); err != nil {
		t.Fatal(err)
	}
	if open(t, dir).Paused("ext chromium default") {
		t.Fatal("the pause was not switched off")
	}
}
