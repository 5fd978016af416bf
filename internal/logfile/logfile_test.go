package logfile

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestOpenAppendsAndRotates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l, c, err := Open(dir, false, "pid", 7)
	if err != nil {
		t.Fatal(err)
	}
	l.Info("hello", "service", "github.com")
	c.Close()
	data, err := os.ReadFile(filepath.Join(dir, Name))
	if err != nil || !strings.Contains(string(data), "msg=hello") || !strings.Contains(string(data), "pid=7") {
		t.Fatalf("log = %q, %v", data, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, Name)); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		// (File modes are Unix: on Windows the log has the ACL of its
		// directory, %LOCALAPPDATA%'s; fillgate sets none.)
		t.Errorf("mode %o", fi.Mode().Perm())
	}
	if err := os.WriteFile(filepath.Join(dir, Name), make([]byte, maxSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	_, c, err = Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(dir, Name+".1")); err != nil {
		t.Fatalf("not rotated: %v", err)
	}
}

func TestDebugKeepsDebugRecordsOnlyWhenAsked(t *testing.T) {
	for _, debug := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "state")
		l, c, err := Open(dir, debug)
		if err != nil {
			t.Fatal(err)
		}
		l.Debug("timing", "step", "inspected")
		c.Close()
		data, _ := os.ReadFile(filepath.Join(dir, Name))
		if got := strings.Contains(string(data), "msg=timing"); got != debug {
			t.Errorf("debug %v: the debug record was kept: %v", debug, got)
		}
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == DebugEnv {
				return v
			}
			return ""
		}
	}
	if !Debug(env("debug")) || Debug(env("")) || Debug(env("info")) || Debug(nil) {
		t.Error("Debug does not read FILLGATE_LOG=debug")
	}
}
