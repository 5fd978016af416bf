package fillstate

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/fill"
)

// lease is a live lease on service for the saved value of item, granted
// to the process key agent, for a page that shows that account.
func lease(id, agent, service, item string, until time.Time) fill.Lease {
	return fill.Lease{ID: id, AgentKey: agent, Agent: "sh (pid 1)", Service: service, Field: fill.FieldPassword,
		Account: item, Item: item, Stamp: "s-" + id, Origin: "https://" + service, Until: until}
}

// TestLeasedByProcessKey: a lease covers the process key it was granted
// to and no other, not even another process of the same executable; no
// key is covered by nothing; its stamp survives the state file.
func TestLeasedByProcessKey(t *testing.T) {
	d := open(t, stateDir(t))
	now := time.Now()
	first := fill.Agent{Name: "sh", Exe: "/usr/bin/dash", PID: 100, Start: 5000}
	second := fill.Agent{Name: "sh", Exe: "/usr/bin/dash", PID: 101, Start: 5001}
	reused := fill.Agent{Name: "sh", Exe: "/usr/bin/dash", PID: 100, Start: 9000} // the pid, later
	if err := d.Grant(lease("l1", first.ProcessKey(), "a.test", "", now.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	covered := func(a fill.Agent) bool {
		_, ok := d.Leased(a.ProcessKey(), "a.test", fill.FieldPassword, "", "https://a.test", now)
		return ok
	}
	if !covered(first) {
		t.Fatal("the process the lease was granted to is not covered")
	}
	if covered(second) || covered(reused) || covered(fill.Agent{Name: "sh", Exe: "/usr/bin/dash", PID: 100}) {
		t.Error("another process of the same executable (or one with no start time) is covered")
	}
	if _, ok := d.Leased(first.Key(), "a.test", fill.FieldPassword, "", "https://a.test", now); ok {
		t.Error("the executable's key is covered by a lease granted to one process")
	}
	if l, _ := d.Leased(first.ProcessKey(), "a.test", fill.FieldPassword, "", "https://a.test", now); l.Stamp != "s-l1" {
		t.Errorf("the lease read back has stamp %q", l.Stamp)
	}
}

// TestEndLeases: leases end by service and by the saved value's account,
// in this process and as another process sees them; what ended already
// does not count.
func TestEndLeases(t *testing.T) {
	dir := stateDir(t)
	d := open(t, dir)
	now := time.Now()
	for _, l := range []fill.Lease{
		lease("a1", "p1", "a.test", "alice", now.Add(time.Hour)),
		lease("a2", "p2", "a.test", "alice", now.Add(time.Hour)),
		lease("a3", "p1", "a.test", "bob", now.Add(time.Hour)),
		lease("a4", "p1", "a.test", "", now.Add(time.Hour)),
		lease("b1", "p1", "b.test", "alice", now.Add(time.Hour)),
		lease("c1", "p1", "c.test", "", now.Add(time.Hour)),
	} {
		if err := d.Grant(l); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() string {
		live, err := d.LiveLeases(now)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range live {
			out = append(out, l.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		service, account string
		n                int
		left             string
	}{
		{"a.test", "alice", 2, "a3 a4 b1 c1"},
		{"a.test", "alice", 0, "a3 a4 b1 c1"},
		{"nothing.test", "", 0, "a3 a4 b1 c1"},
		{"a.test", "", 2, "b1 c1"},
		{"", "", 2, ""},
	} {
		n, err := d.EndLeases(c.service, c.account)
		if err != nil || n != c.n {
			t.Errorf("EndLeases(%q, %q) = %d, %v; want %d", c.service, c.account, n, err, c.n)
		}
		if got := ids(); !sameSet(got, c.left) {
			t.Errorf("after EndLeases(%q, %q): %q live; want %q", c.service, c.account, got, c.left)
		}
	}

	// A lease granted by another process ends here, and an expired one
	// is not counted.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FILLSTATE_HELPER=grant", "FILLSTATE_DIR="+dir)
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "granted" {
		t.Fatalf("helper: %v %s", err, out)
	}
	if err := d.Grant(lease("old", "p1", "example.com", "", now.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if n, err := d.EndLeases("example.com", ""); err != nil || n != 1 {
		t.Errorf("EndLeases(example.com) = %d, %v; want the other process's one", n, err)
	}
	if got := ids(); got != "" {
		t.Errorf("left %q", got)
	}
}

// sameSet compares two space-separated lists as sets.
func sameSet(a, b string) bool {
	x, y := strings.Fields(a), strings.Fields(b)
	if len(x) != len(y) {
		return false
	}
	seen := map[string]bool{}
	for _, s := range x {
		seen[s] = true
	}
	for _, s := range y {
		if !seen[s] {
			return false
		}
	}
	return true
}
