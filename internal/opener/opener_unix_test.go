//go:build !windows

package opener

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeOpener writes an executable script called name into dir that
// records its argument and environment into out.
func fakeOpener(t *testing.T, dir, name, out string) {
	t.Helper()
	script := "#!/bin/sh\nenv > '" + out + ".env'\nprintf '%s\\n' \"$1\" > '" + out + ".tmp'\nmv '" + out + ".tmp' '" + out + "'\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
}

// TestOpenerRunsFromFixedDirsOnly puts a fake opener first in PATH and
// another one in the launcher's fixed directory: only the fixed one runs,
// with the page's path as its only argument and a trimmed environment.
func TestOpenerRunsFromFixedDirsOnly(t *testing.T) {
	ctx := openerCtx(t)
	work := t.TempDir()
	decoyDir, fixedDir := filepath.Join(work, "path"), filepath.Join(work, "fixed")
	for _, d := range []string{decoyDir, fixedDir, filepath.Join(work, "relative")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	l := osLauncher([]string{
		"PATH=" + decoyDir + ":/usr/bin:/bin", "HOME=/home/u", "DISPLAY=:7", "XDG_RUNTIME_DIR=/run/user/7",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/7/bus", "BROWSER=" + decoyDir + "/evil", "AGENT_TOKEN=t0k3n",
	})
	l.dirs = []string{"relative", fixedDir}
	fakeOpener(t, decoyDir, l.name, filepath.Join(work, "decoy"))
	fakeOpener(t, fixedDir, l.name, filepath.Join(work, "fixed.out"))
	fakeOpener(t, filepath.Join(work, "relative"), l.name, filepath.Join(work, "relative.out"))
	t.Chdir(work) // where "relative" would find one
	t.Setenv("PATH", decoyDir+string(os.PathListSeparator)+os.Getenv("PATH"))

	page := filepath.Join(work, "prompt.html")
	if err := l.launch(ctx, page); err != nil {
		t.Fatalf("launch: %v", err)
	}
	var arg []byte
	for {
		var err error
		if arg, err = os.ReadFile(filepath.Join(work, "fixed.out")); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the opener in the fixed directory did not run")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if got := strings.TrimSpace(string(arg)); got != page {
		t.Errorf("the opener got %q, want the page's path", got)
	}
	for _, f := range []string{"decoy", "relative.out"} {
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			t.Errorf("the opener from %s ran", f)
		}
	}
	env, err := os.ReadFile(filepath.Join(work, "fixed.out.env"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(env), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	for k, want := range map[string]string{
		"HOME": "/home/u", "DISPLAY": ":7", "XDG_RUNTIME_DIR": "/run/user/7",
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/7/bus",
	} {
		if vars[k] != want {
			t.Errorf("the opener's %s is %q, want %q", k, vars[k], want)
		}
	}
	for _, k := range []string{"BROWSER", "AGENT_TOKEN"} {
		if _, ok := vars[k]; ok {
			t.Errorf("the opener got the caller's %s", k)
		}
	}
	if strings.Contains(vars["PATH"], decoyDir) {
		t.Errorf("the opener got the caller's PATH")
	}
}

func TestFindOpener(t *testing.T) {
	dir := t.TempDir()
	write := func(sub string, mode os.FileMode) string {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, "opener")
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return d
	}
	plain := write("plain", 0o644)
	good := write("good", 0o755)
	open := write("open", 0o775)
	asDir := filepath.Join(dir, "asdir")
	if err := os.MkdirAll(filepath.Join(asDir, "opener"), 0o700); err != nil {
		t.Fatal(err)
	}
	if p, err := findOpener([]string{filepath.Join(dir, "none"), asDir, plain, good}, "opener"); err != nil || p != filepath.Join(good, "opener") {
		t.Errorf("findOpener = %q, %v; want the executable one", p, err)
	}
	if _, err := findOpener([]string{open, good}, "opener"); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Errorf("a group-writable opener: %v", err)
	}
	if _, err := findOpener([]string{plain, asDir}, "opener"); err == nil || !strings.Contains(err.Error(), "no opener in") {
		t.Errorf("no usable opener: %v", err)
	}
}

// writeOpener writes an executable script called name into dir.
func writeOpener(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o700); err != nil {
		t.Fatal(err)
	}
}

// TestOpenerFailureIsSeen: an opener that exits with a failure (xdg-open
// exits 3 when it finds no way to open a file) is an error naming it and
// its status, as soon as it exits; one still running after the grace is
// taken to have started a browser.
func TestOpenerFailureIsSeen(t *testing.T) {
	ctx := openerCtx(t)
	dir := t.TempDir()
	l := osLauncher([]string{"PATH=/usr/bin:/bin", "DISPLAY=:7"})
	l.dirs = []string{dir}
	writeOpener(t, dir, l.name, "echo 'xdg-open: no method available for opening' >&2\nexit 3\n")
	exe, err := findOpener(l.dirs, l.name)
	if err != nil {
		t.Fatal(err)
	}
	// A grace longer than the test can take: the failure is seen when the
	// opener exits, whatever the machine's load.
	cmd := exec.Command(exe, "page.html")
	err = startDetached(ctx, cmd, time.Hour)
	if err == nil || !strings.Contains(err.Error(), l.name+" failed (exit status 3)") {
		t.Fatalf("an opener exiting 3: %v, want it named with its status", err)
	}
	if strings.Contains(err.Error(), "page.html") || strings.Contains(err.Error(), "no method") {
		t.Errorf("the error quotes the page or the opener's output: %v", err)
	}

	// Still running after the grace: a browser it started, not a failure.
	fifo := filepath.Join(t.TempDir(), "hold")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	hold, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close() // the opener's cat ends with it
	writeOpener(t, dir, l.name, "exec cat '"+fifo+"' >/dev/null\n")
	if err := startDetached(ctx, exec.Command(exe, "page.html"), 100*time.Millisecond); err != nil {
		t.Fatalf("an opener still running after the grace: %v", err)
	}
}
