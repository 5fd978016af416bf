package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/tmpfs"
)

// padTo appends to the log at path one entry whose detail makes the file
// end exactly at size.
func padTo(t *testing.T, l *Log, size int) fill.AuditEntry {
	t.Helper()
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	e := fill.AuditEntry{Time: time.Unix(2, 0).UTC(), Service: "pad.test", Status: fill.StatusRefused, Detail: "p"}
	line, _ := json.Marshal(e)
	n := size - int(fi.Size()) - len(line) - 1 + len(e.Detail)
	if n <= 0 {
		t.Fatalf("the log is already %d bytes", fi.Size())
	}
	e.Detail = strings.Repeat("p", n)
	if err := l.Record(e); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(l.Path()); fi.Size() != int64(size) {
		t.Fatalf("padded to %d bytes, want %d", fi.Size(), size)
	}
	return e
}

// TestFullDiskLeavesNoHalfEntry: when the disk fills up in the middle of
// an entry, Record fails and takes back the part that went in, so the log
// never holds half an entry, which would also spoil the entry after it.
// (Root only: it mounts a tiny tmpfs. TestFullDeviceRefusesTheEntry is the
// case any user can run.)
func TestFullDiskLeavesNoHalfEntry(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("not root: no tmpfs to fill; TestFullDeviceRefusesTheEntry runs the full-disk case as this user")
		return
	}
	dir := filepath.Join(t.TempDir(), "state")
	tmpfs.Mount(t, dir, 16*tmpfs.Page)
	l := Open(dir)
	first := fill.AuditEntry{Time: time.Unix(1, 0).UTC(), Service: "github.com", Status: fill.StatusOK}
	if err := l.Record(first); err != nil {
		t.Fatal(err)
	}
	pad := padTo(t, l, 2*tmpfs.Page-100) // the next entry crosses into a page the disk no longer has
	filler := tmpfs.Fill(t, dir)

	lost := fill.AuditEntry{Time: time.Unix(3, 0).UTC(), Service: "lost.test", Status: fill.StatusOK, Detail: strings.Repeat("d", 200)}
	err := l.Record(lost)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Record on a full disk = %v, want ENOSPC", err)
	}
	data, _ := os.ReadFile(l.Path())
	if len(data) != 2*tmpfs.Page-100 || !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("after the failed Record the log is %d bytes (ends in a newline: %v), want the %d it was", len(data), bytes.HasSuffix(data, []byte("\n")), 2*tmpfs.Page-100)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	last := fill.AuditEntry{Time: time.Unix(4, 0).UTC(), Service: "last.test", Status: fill.StatusCancelled}
	if err := l.Record(last); err != nil {
		t.Fatal(err)
	}
	got, err := l.Recent(10)
	if err != nil {
		t.Fatal(err)
	}
	want := []fill.AuditEntry{first, pad, last}
	if len(got) != len(want) {
		t.Fatalf("the log holds %d entries, want %d (%v)", len(got), len(want), services(got))
	}
	for i := range want {
		if got[i].Service != want[i].Service || got[i].Detail != want[i].Detail {
			t.Errorf("entry %d is %s, want %s", i, got[i].Service, want[i].Service)
		}
	}
}

// TestFullDeviceRefusesTheEntry: an audit log on a device that takes
// nothing (/dev/full, as a disk already full would) fails Record with the
// device's error.
func TestFullDeviceRefusesTheEntry(t *testing.T) {
	dir := t.TempDir()
	l := Open(dir)
	if err := os.Symlink("/dev/full", l.Path()); err != nil {
		t.Fatal(err)
	}
	err := l.Record(fill.AuditEntry{Time: time.Unix(1, 0), Service: "github.com", Status: fill.StatusOK})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Record on /dev/full = %v, want ENOSPC", err)
	}
}

func services(es []fill.AuditEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Service)
	}
	return out
}
