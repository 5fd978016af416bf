package hostwait

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
)

func TestOne(t *testing.T) {
	on := agentsock.HostStatus{PID: 1}
	on.Extension.Connected = true
	off := agentsock.HostStatus{PID: 2}
	for _, c := range []struct {
		name string
		hs   []agentsock.HostStatus
		want bool
	}{
		{"none", nil, false},
		{"one connected", []agentsock.HostStatus{on}, true},
		{"one not connected", []agentsock.HostStatus{off}, false},
		{"two", []agentsock.HostStatus{on, on}, false},
	} {
		if got := One(Connected)(c.hs); got != c.want {
			t.Errorf("%s: One(Connected) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUntilEndsWithTheContext: when ok never holds, Until waits until
// ctx ends and says so.
func TestUntilEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	hs, err := Until(ctx, t.TempDir(), func([]agentsock.HostStatus) bool { return false })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Until = %v, %v; want the deadline", hs, err)
	}
}
