//go:build linux

// Package secretservice starts a private, unlocked Secret Service
// (gnome-keyring under its own D-Bus session bus) for tests that need a
// real keyring.
package secretservice

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Start launches dbus-daemon and gnome-keyring-daemon with their state in
// temp dirs, points this test process at them (t.Setenv), and stops them
// when the test ends. It fails the test, never skips, when the programs are
// missing: .ci/run installs them.
func Start(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"dbus-daemon", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found: run apt-get install -y dbus gnome-keyring", bin)
		}
	}
	root := t.TempDir()
	runtime := filepath.Join(root, "run")
	data := filepath.Join(root, "data")
	for _, d := range []string{runtime, data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	bus := exec.CommandContext(ctx, "dbus-daemon", "--session", "--fork", "--nopidfile",
		"--print-address=1", "--print-pid=1", "--address=unix:path="+filepath.Join(runtime, "bus"))
	bus.Env = []string{"PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + runtime}
	out, err := bus.Output()
	if err != nil {
		t.Fatalf("start dbus-daemon: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	var addr string
	var pid int
	if sc.Scan() {
		addr = strings.TrimSpace(sc.Text())
	}
	if sc.Scan() {
		pid, _ = strconv.Atoi(strings.TrimSpace(sc.Text()))
	}
	if addr == "" || pid == 0 {
		t.Fatalf("dbus-daemon printed no address/pid")
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGTERM) })

	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"DBUS_SESSION_BUS_ADDRESS=" + addr,
		"XDG_RUNTIME_DIR=" + runtime,
		"XDG_DATA_HOME=" + data,
		"HOME=" + root,
	}
	kr := exec.CommandContext(ctx, "gnome-keyring-daemon", "--unlock", "--components=secrets", "--daemonize")
	kr.Env = env
	// The login keyring's password: a fixed test value, not a fillgate secret.
	kr.Stdin = strings.NewReader("fillgate-test-keyring\n")
	kout, err := kr.Output()
	if err != nil {
		t.Fatalf("start gnome-keyring-daemon: %v", err)
	}
	for _, line := range strings.Split(string(kout), "\n") {
		if p, ok := strings.CutPrefix(line, "GNOME_KEYRING_PID="); ok {
			if kpid, err := strconv.Atoi(p); err == nil {
				t.Cleanup(func() { _ = syscall.Kill(kpid, syscall.SIGTERM) })
			}
		}
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	t.Setenv("XDG_DATA_HOME", data)
}
