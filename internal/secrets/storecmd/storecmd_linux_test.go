package storecmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fillgate/fillgate/internal/secrets"
	"github.com/fillgate/fillgate/tests/fakes/standins"
	"github.com/fillgate/fillgate/tests/kit/leakscan"
)

// fetch runs c in the background; the result comes on the channel.
func fetch(c Command) <-chan result {
	ch := make(chan result, 1)
	go func() {
		v, err := Run(context.Background(), c)
		ch <- result{v, err}
	}()
	return ch
}

type result struct {
	v   []byte
	err error
}

func TestRunArgsEnvStdinStdout(t *testing.T) {
	d := standins.Install(t, "store")
	secret, dbPassword := leakscan.NewSecret(t), leakscan.NewSecret(t)
	environ := []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "UNRELATED_TOKEN=zzz", "OP_SESSION_abc=s1", "OP_ACCOUNT=a", "EMPTY="}
	c := Command{
		Store: "store", Path: d.Program("store"), Args: []string{"show", "--", "work/github"},
		Environ: environ, Keys: []string{"PATH", "HOME", "EMPTY", "OP_*", "MISSING"},
		Stdin: append(slices.Clone(dbPassword), '\n'),
	}
	done := fetch(c)
	run := d.Next()
	if !slices.Equal(run.Args, c.Args) {
		t.Errorf("argv = %q; want %q", run.Args, c.Args)
	}
	if want := []string{"PATH", "HOME", "OP_SESSION_abc", "OP_ACCOUNT", "LC_MESSAGES"}; !slices.Equal(run.EnvNames(), want) {
		t.Errorf("environment = %q; want exactly %q", run.EnvNames(), want)
	}
	if !slices.Contains(run.Env, "LC_MESSAGES=C") {
		t.Errorf("environment = %q; want LC_MESSAGES=C, the English that Classify reads", run.EnvNames())
	}
	leakscan.Bytes(t, secret, "the store's argv", run.Cmdline())
	leakscan.Bytes(t, dbPassword, "the store's argv", run.Cmdline())
	leakscan.Bytes(t, dbPassword, "the store's environment", run.Environ())
	run.Answer(0, false, append(slices.Clone(secret), '\n'))
	r := <-done
	if r.err != nil || string(r.v) != string(secret)+"\n" {
		t.Fatalf("Run: value differed (%v)", r.err)
	}
}

// TestMessagesStayEnglish: no locale the environment or the store's own
// settings carry replaces LC_MESSAGES=C, whose English Classify reads.
func TestMessagesStayEnglish(t *testing.T) {
	d := standins.Install(t, "store")
	done := fetch(Command{Store: "store", Path: d.Program("store"),
		Environ: []string{"PATH=/usr/bin:/bin", "LC_MESSAGES=de_DE.UTF-8"}, Keys: []string{"PATH", "LC_*"}, Set: []string{"LC_MESSAGES=fr_FR.UTF-8"}})
	run := d.Next()
	var got []string
	for _, kv := range run.Env {
		if strings.HasPrefix(kv, "LC_MESSAGES=") {
			got = append(got, kv)
		}
	}
	// os/exec keeps the last of two entries for one key; the program
	// sees one.
	if len(got) == 0 || got[len(got)-1] != "LC_MESSAGES=C" {
		t.Errorf("LC_MESSAGES entries %q; want the last to be LC_MESSAGES=C", got)
	}
	run.Answer(0, false, []byte("x\n"))
	if r := <-done; r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
}

// TestRunInHome: the program runs in the HOME of the environment it is
// given, and in the root directory when that is unset or no directory.
func TestRunInHome(t *testing.T) {
	d := standins.Install(t, "store")
	home, err := filepath.EvalSymlinks(t.TempDir()) // the kernel reports the cwd resolved
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		environ []string
		want    string
	}{
		{[]string{"PATH=/usr/bin:/bin", "HOME=" + home}, home},
		{[]string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(home, "gone")}, "/"},
		{[]string{"PATH=/usr/bin:/bin"}, "/"},
	} {
		done := fetch(Command{Store: "store", Path: d.Program("store"), Environ: tc.environ, Keys: []string{"PATH", "HOME"}})
		run := d.Next()
		if got := run.Dir(); got != tc.want {
			t.Errorf("with %q the program ran in %q; want %q", tc.environ, got, tc.want)
		}
		run.Answer(0, false, []byte("x\n"))
		if r := <-done; r.err != nil {
			t.Fatalf("Run: %v", r.err)
		}
	}
}

func TestRunFailures(t *testing.T) {
	d := standins.Install(t, "store")
	classify := func(code int, stderr []byte) *secrets.Error {
		if Contains(stderr, "VAULT IS LOCKED") {
			return &secrets.Error{Source: "store", Kind: secrets.KindLocked, Detail: "locked", Fix: "unlock it"}
		}
		return nil
	}
	base := Command{Store: "store", Path: d.Program("store"), Args: []string{"get", "x"}, Environ: []string{"PATH=/usr/bin:/bin"}, Keys: []string{"PATH"}, Classify: classify}

	// A classified failure: stderr read, never repeated.
	marker := leakscan.NewSecret(t)
	done := fetch(base)
	d.Next().Answer(1, true, append([]byte("Vault is locked. "), marker...))
	r := <-done
	if !errors.Is(r.err, secrets.ErrLocked) || !strings.Contains(r.err.Error(), "unlock it") {
		t.Fatalf("locked: %v", r.err)
	}
	leakscan.Bytes(t, marker, "the error", []byte(r.err.Error()))

	// An unclassified failure names the exit status and the command to try,
	// not what the program printed.
	done = fetch(base)
	d.Next().Answer(3, true, marker)
	r = <-done
	if r.err == nil || !strings.Contains(r.err.Error(), "exit status 3") || !strings.Contains(r.err.Error(), "store get x") {
		t.Fatalf("failure: %v", r.err)
	}
	leakscan.Bytes(t, marker, "the error", []byte(r.err.Error()))

	// Too much output.
	c := base
	c.Max = 16
	done = fetch(c)
	d.Next().Answer(0, false, []byte(strings.Repeat("x", 17)))
	if r := <-done; r.err == nil || !strings.Contains(r.err.Error(), "more than 16 bytes") {
		t.Fatalf("too much output: %v", r.err)
	}
	c.Max = 17
	done = fetch(c)
	d.Next().Answer(0, false, []byte(strings.Repeat("x", 17)))
	if r := <-done; r.err != nil || len(r.v) != 17 {
		t.Fatalf("output at the cap: %v", r.err)
	}
}

// TestRunEndsWithContext: when the context ends, the program and what it
// started are killed, and Run returns the cause.
func TestRunEndsWithContext(t *testing.T) {
	d := standins.Install(t, "store")
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := errors.New("the request ended")
	done := make(chan result, 1)
	go func() {
		v, err := Run(ctx, Command{Store: "store", Path: d.Program("store"), Environ: []string{"PATH=/usr/bin:/bin"}, Keys: []string{"PATH"}})
		done <- result{v, err}
	}()
	run := d.Next()
	cancel(gone)
	r := <-done
	if !errors.Is(r.err, gone) {
		t.Fatalf("Run after cancel = %v; want the cause", r.err)
	}
	// The stand-in was killed (Run waited for it): its pid is gone or a
	// zombie nobody waits for.
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", run.PID)); err == nil && !strings.Contains(string(stat), ") Z ") {
		t.Fatalf("the store's program is still running: %s", stat)
	}
}

func TestFind(t *testing.T) {
	d := standins.Install(t, "pass")
	if p, err := Find("pass", "pass", "", []string{"PATH=relative:" + d.Path}, "install it"); err != nil || p != d.Program("pass") {
		t.Fatalf("Find on PATH = %q, %v", p, err)
	}
	if p, err := Find("pass", "pass", d.Program("pass"), nil, "install it"); err != nil || p != d.Program("pass") {
		t.Fatalf("Find of the policy's command = %q, %v", p, err)
	}
	_, err := Find("pass", "pass", "", []string{"PATH=/nonexistent"}, "install it")
	if !errors.Is(err, secrets.ErrMissing) || !strings.Contains(err.Error(), "install it") {
		t.Fatalf("Find of a missing program = %v", err)
	}
	if _, err := Find("pass", "pass", "/etc/passwd", nil, "install it"); !errors.Is(err, secrets.ErrMissing) {
		t.Fatalf("Find of a file that is not executable = %v", err)
	}
	// A relative PATH entry is not searched, even one that leads to it.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Find("pass", "pass", "", []string{"PATH=" + rel}, "x"); err == nil {
		t.Fatal("Find searched a relative PATH entry")
	}
}

func TestMinimalEnvAndGetenv(t *testing.T) {
	environ := []string{"A=1", "B=2", "A=3", "P_X=x", "P_Y=", "C"}
	if getenv(environ, "A") != "3" || getenv(environ, "C") != "" || getenv(environ, "Z") != "" {
		t.Fatal("getenv")
	}
	got := minimalEnv(environ, []string{"A", "P_*", "B", "Z"}, "B=override")
	if want := []string{"A=3", "P_X=x", "B=override"}; !slices.Equal(got, want) {
		t.Fatalf("minimalEnv = %q; want %q", got, want)
	}
	if minimalEnv(nil, nil) == nil {
		t.Fatal("minimalEnv returned nil, which os/exec reads as the whole environment")
	}
}
