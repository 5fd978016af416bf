package hostcore

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/audit"
	"github.com/fillgate/fillgate/internal/fill"
	"github.com/fillgate/fillgate/tests/kit/tmpfs"
)

// padAudit appends to the audit log, as another fillgate process would,
// one entry long enough that the log then ends exactly at size.
func padAudit(t *testing.T, path string, size int) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	e := fill.AuditEntry{Time: time.Now().UTC(), Service: "pad.test", Status: fill.StatusRefused, Detail: "p"}
	line, _ := json.Marshal(e)
	e.Detail = strings.Repeat("p", size-int(fi.Size())-len(line)-1+len(e.Detail))
	if err := audit.Open(filepath.Dir(path)).Record(e); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Size() != int64(size) {
		t.Fatalf("padded the audit log to %d bytes, want %d", fi.Size(), size)
	}
}

// TestDiskFullWhileAuditing: the disk under the host's state (its log and
// the audit log) fills up between two fills, so the next audit entry
// breaks off in the middle. The fill's outcome does not depend on it: the
// value is in the page and the agent gets ok; the audit log holds every
// entry whole or not at all, and the entries after the disk has room again
// are recorded. The host lets go of everything.
//
// It mounts a tiny tmpfs, which needs root (CI runs as root); as another
// user it runs the same scenario with the audit log on /dev/full, a
// device that takes nothing (no entry breaks off mid-line there).
func TestDiskFullWhileAuditing(t *testing.T) {
	t.Parallel()
	root := shortTempDir(t)
	tr := newTree(t, root)
	asRoot := os.Geteuid() == 0
	if asRoot {
		tmpfs.Mount(t, tr.state, 32*tmpfs.Page)
	}
	r := newRig(t, setup{root: root, page: loginPage("https://github.com"), budget: 2 * time.Minute})
	r.behave(answers(r.secret))
	first := r.fill("github.com")
	r.expect(first, fill.StatusOK, "inserted")
	base := r.baseline()

	auditPath := filepath.Join(r.dirs.stateDir(t), audit.FileName)
	var free func()
	if asRoot {
		fi, err := os.Stat(auditPath)
		if err != nil {
			t.Fatal(err)
		}
		// The next entry starts 100 bytes before a page the disk no
		// longer has.
		padAudit(t, auditPath, int(fi.Size()/tmpfs.Page+1)*tmpfs.Page-100)
		filler := tmpfs.Fill(t, tr.state)
		free = func() {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		}
	} else {
		t.Log("not root: the audit log is /dev/full instead of a file on a full tmpfs")
		saved := auditPath + ".saved"
		if err := os.Rename(auditPath, saved); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/full", auditPath); err != nil {
			t.Fatal(err)
		}
		free = func() {
			if err := os.Rename(saved, auditPath); err != nil { // replaces the link
				t.Fatal(err)
			}
		}
	}
	before, err := audit.Open(r.dirs.stateDir(t)).Recent(100)
	if err != nil {
		t.Fatal(err)
	}
	if !asRoot {
		before = nil // read through the link: /dev/full has nothing
	}

	r.behave(answers(r.newSecret()))
	full := r.fill("github.com")
	r.expect(full, fill.StatusOK, "inserted")
	if asRoot {
		data, err := os.ReadFile(auditPath)
		if err != nil || !bytes.HasSuffix(data, []byte("\n")) {
			t.Errorf("on the full disk the audit log ends with half an entry (%v)", err)
		}
	}
	free()
	r.behave(answers(r.secret))
	last := r.fill("github.com")
	r.expect(last, fill.StatusOK, "inserted")
	r.expectInsertedTimes(r.secret, 3)

	es := r.auditEntries()
	if asRoot {
		if len(es) != len(before)+1 {
			t.Fatalf("the audit log holds %d entries, want the %d from before the disk filled up and the last one", len(es), len(before))
		}
	} else if len(es) != 2 {
		t.Fatalf("the audit log holds %d entries, want the first and the last", len(es))
	}
	for _, e := range es {
		if e.Status == "" || e.Service == "" {
			t.Errorf("a broken audit entry: %+v", e)
		}
	}
	if e := es[len(es)-1]; e.Status != last.res.Status || e.Detail != last.res.Detail || e.Service != "github.com" {
		t.Errorf("the last audit entry says %s %q, the last result %s %q", e.Status, e.Detail, last.res.Status, last.res.Detail)
	}
	r.expectSettled(base)
}
