package nativeprompt

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// program writes an executable file at dir/name (a stand-in pinentry
// that is never run).
func program(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// link makes dir/name a symbolic link to target.
func link(t *testing.T, dir, name, target string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// envOf is a getenv over m.
func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// trustAll stands in for trusted over temporary directories (which are
// not root's alone).
func trustAll(string, string) error { return nil }

// chosen is the program unixPlatform picks, or its error.
func chosen(t *testing.T, cfg Config, dirs []string, trust func(string, string) error) (string, error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	b, err := unixPlatform(cfg, dirs, trust)
	if err != nil {
		return "", err
	}
	return b.(*pinentryBackend).program, nil
}

func TestSearch(t *testing.T) {
	x11 := map[string]string{"DISPLAY": ":1"}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		env   map[string]string
		want  string // the file name chosen; "" for an error
	}{
		{"gtk2", func(t *testing.T, d string) { program(t, d, "pinentry-gtk-2") }, x11, "pinentry-gtk-2"},
		{"the default when it is graphical", func(t *testing.T, d string) {
			program(t, d, "pinentry-gtk-2")
			link(t, d, "pinentry", program(t, d, "pinentry-qt"))
		}, x11, "pinentry-qt"},
		{"never curses", func(t *testing.T, d string) {
			link(t, d, "pinentry", program(t, d, "pinentry-curses"))
			program(t, d, "pinentry-tty")
		}, x11, ""},
		{"the default is curses: the next graphical one", func(t *testing.T, d string) {
			link(t, d, "pinentry", program(t, d, "pinentry-curses"))
			program(t, d, "pinentry-fltk")
		}, x11, "pinentry-fltk"},
		{"gnome3 without a session bus", func(t *testing.T, d string) { program(t, d, "pinentry-gnome3") }, x11, ""},
		{"gnome3 with a session bus, outside GNOME", func(t *testing.T, d string) { program(t, d, "pinentry-gnome3") },
			map[string]string{"DISPLAY": ":1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "XDG_CURRENT_DESKTOP": "XFCE"}, ""},
		{"gnome3 in a GNOME session", func(t *testing.T, d string) { program(t, d, "pinentry-gnome3") },
			map[string]string{"DISPLAY": ":1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus", "XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}, "pinentry-gnome3"},
		{"gnome3 is the default, gtk2 is there too", func(t *testing.T, d string) {
			link(t, d, "pinentry", program(t, d, "pinentry-gnome3"))
			program(t, d, "pinentry-gtk-2")
		}, map[string]string{"DISPLAY": ":1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus"}, "pinentry-gtk-2"},
		{"x11 is judged by what it links to", func(t *testing.T, d string) {
			link(t, d, "pinentry-x11", program(t, d, "pinentry-gnome3"))
		}, x11, ""},
		{"gtk2 needs X", func(t *testing.T, d string) { program(t, d, "pinentry-gtk-2") },
			map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, ""},
		{"qt on Wayland", func(t *testing.T, d string) { program(t, d, "pinentry-gtk-2"); program(t, d, "pinentry-qt") },
			map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, "pinentry-qt"},
		{"not executable", func(t *testing.T, d string) {
			if err := os.WriteFile(filepath.Join(d, "pinentry-gtk-2"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}, x11, ""},
		{"no display", func(t *testing.T, d string) { program(t, d, "pinentry-gtk-2") }, map[string]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			got, err := chosen(t, Config{Env: envOf(tc.env)}, []string{dir}, trustAll)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("chose %s, want none", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(got) != tc.want {
				t.Errorf("chose %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSearchNeverPATH: a pinentry on $PATH, or in a directory that is
// not root's alone, is never used.
func TestSearchNeverPATH(t *testing.T) {
	dir := t.TempDir()
	program(t, dir, "pinentry-gtk-2")
	env := map[string]string{"DISPLAY": ":1", "PATH": dir}
	if got, err := chosen(t, Config{Env: envOf(env)}, []string{t.TempDir()}, trusted); err == nil {
		t.Errorf("chose %s from PATH", got)
	}
	if got, err := chosen(t, Config{Env: envOf(env)}, []string{dir}, trusted); err == nil {
		t.Errorf("chose %s from a directory anybody can write to", got)
	}
}

func TestUnavailableSaysHow(t *testing.T) {
	_, err := chosen(t, Config{Env: envOf(map[string]string{"DISPLAY": ":1"})}, []string{t.TempDir()}, trustAll)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"no graphical pinentry", "apt install pinentry-gtk2", `pinentry = "/path/to/pinentry"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	_, err = chosen(t, Config{Env: envOf(nil)}, []string{t.TempDir()}, trustAll)
	if err == nil || !strings.Contains(err.Error(), "DISPLAY and WAYLAND_DISPLAY are unset") {
		t.Errorf("no display: %v", err)
	}
}

func TestPolicyProgram(t *testing.T) {
	dir := t.TempDir()
	gtk := program(t, dir, "pinentry-gtk-2")
	curses := program(t, dir, "pinentry-curses")
	link(t, dir, "pinentry", curses)
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{"DISPLAY": ":1"})
	for _, tc := range []struct {
		program string
		ok      bool
	}{
		{gtk, true},
		{"pinentry-gtk-2", false},
		{filepath.Join(dir, "missing"), false},
		{plain, false},
		{curses, false},
		{filepath.Join(dir, "pinentry"), false},
		{dir, false},
	} {
		got, err := chosen(t, Config{Program: tc.program, Env: env}, nil, trustAll)
		switch {
		case tc.ok && err != nil:
			t.Errorf("pinentry = %q: %v", tc.program, err)
		case tc.ok && got != gtk:
			t.Errorf("pinentry = %q: chose %s", tc.program, got)
		case !tc.ok && err == nil:
			t.Errorf("pinentry = %q was taken", tc.program)
		case !tc.ok && !strings.Contains(err.Error(), "the policy's pinentry"):
			t.Errorf("pinentry = %q: the error %q does not name the policy key", tc.program, err)
		}
	}
	// A program the person's account could replace is still the
	// person's choice, with a warning in the log.
	var log strings.Builder
	cfg := Config{Program: gtk, Env: env, Logger: slog.New(slog.NewTextHandler(&log, nil))}
	if _, err := chosen(t, cfg, nil, trusted); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "not root's alone") {
		t.Errorf("no warning in the log: %q", log.String())
	}
}

// TestTrusted on the system's own files: Debian's pinentry is root's, a
// temporary file is not.
func TestTrusted(t *testing.T) {
	if err := trusted("/usr/bin/pinentry-gtk-2", "/usr/bin/pinentry-gtk-2"); err != nil {
		t.Errorf("/usr/bin/pinentry-gtk-2: %v (run tests/setup if it is missing)", err)
	}
	p := program(t, t.TempDir(), "pinentry-gtk-2")
	if err := trusted(p, p); err == nil {
		t.Errorf("%s is trusted", p)
	}
}

// TestThisSystem: on this machine, with a display, a graphical pinentry
// of the system's own is found.
func TestThisSystem(t *testing.T) {
	d := New(Config{Env: envOf(map[string]string{"DISPLAY": ":1"})})
	if err := d.Available(); err != nil {
		t.Fatalf("Available: %v (run tests/setup: it installs pinentry-gtk2)", err)
	}
	b, _ := d.platform(d.cfg)
	p := b.(*pinentryBackend)
	if !strings.HasPrefix(p.program, "/usr/bin/pinentry-") || isTerminal(p.program) {
		t.Errorf("chose %s", p.program)
	}
	if strings.Join(p.env, " ") != "DISPLAY=:1" {
		t.Errorf("env %q", p.env)
	}
	if err := New(Config{Env: envOf(nil)}).Available(); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("Available with no display = %v", err)
	}
}
