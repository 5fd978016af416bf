package agentsock

import (
	"os"
	"testing"

	"github.com/fillgate/fillgate/tests/kit/testctx"
)

// TestStatusDebugCountsGoroutines: a status request that asks for debug
// gets the answering host's goroutine count; one that does not, none.
func TestStatusDebugCountsGoroutines(t *testing.T) {
	dir := sockDir(t)
	h := startHost(t, dir, os.Getpid(), &fakeHandler{status: HostStatus{PID: 7}})
	for _, debug := range []bool{false, true} {
		m, err := call(testctx.New(t), h.l.Path(), Request{Op: OpStatus, Debug: debug}, TypeStatus)
		if err != nil {
			t.Fatalf("status (debug %v): %v", debug, err)
		}
		if got := m.Status.Goroutines; (got > 0) != debug {
			t.Errorf("status (debug %v) reports %d goroutines", debug, got)
		}
	}
}
