package audit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

func TestRecordAndRecent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	l := Open(dir)
	if got, err := l.Recent(10); err != nil || len(got) != 0 {
		t.Fatalf("empty log: %v %v", got, err)
	}
	for i, s := range []fill.Status{fill.StatusOK, fill.StatusRefused, fill.StatusNoResponse} {
		err := l.Record(fill.AuditEntry{Time: time.Unix(int64(i), 0), Service: "github.com", Status: s,
			Agent: fill.Agent{Name: "claude", PID: 1}})
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := l.Recent(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Status != fill.StatusRefused || got[1].Status != fill.StatusNoResponse {
		t.Fatalf("recent = %+v", got)
	}
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		t.Log("file modes are Unix: on Windows the log has the ACL of the directory it is in (%LOCALAPPDATA%'s, the user's own); fillgate sets none")
		return
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o", fi.Mode().Perm())
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %o", di.Mode().Perm())
	}
}

func TestRotation(t *testing.T) {
	l := Open(t.TempDir())
	big := make([]byte, maxSize+1)
	if err := os.WriteFile(l.Path(), big, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.Record(fill.AuditEntry{Service: "a.test", Status: fill.StatusOK}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Path() + ".1"); err != nil {
		t.Fatalf("not rotated: %v", err)
	}
	got, err := l.Recent(0)
	if err != nil || len(got) != 1 || got[0].Service != "a.test" {
		t.Fatalf("recent after rotation = %+v, %v", got, err)
	}
}
