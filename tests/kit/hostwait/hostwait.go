// Package hostwait waits, in a test, until the fillgate hosts of one
// set-up say what the test needs: a host with the extension connected, a
// tab with a field focused, a browser that nothing drives.
package hostwait

import (
	"context"
	"time"

	"github.com/fillgate/fillgate/internal/agentsock"
	"github.com/fillgate/fillgate/tests/kit/poll"
)

// Until asks the hosts whose sockets are under runDir for their status
// every 100 ms until ok holds for what they say, or ctx ends. It returns
// the last status it read (nil when none was read) and, when ok never
// held, ctx's error with the last error of asking.
func Until(ctx context.Context, runDir string, ok func([]agentsock.HostStatus) bool) ([]agentsock.HostStatus, error) {
	var last []agentsock.HostStatus
	err := poll.Until(ctx, 100*time.Millisecond, func() (bool, error) {
		hs, err := agentsock.Status(ctx, runDir)
		if err != nil {
			return false, err
		}
		last = hs
		return ok(hs), nil
	})
	return last, err
}

// One is the ok of exactly one host, for which ok holds.
func One(ok func(agentsock.HostStatus) bool) func([]agentsock.HostStatus) bool {
	return func(hs []agentsock.HostStatus) bool { return len(hs) == 1 && ok(hs[0]) }
}

// Connected holds for a host whose extension is connected.
func Connected(h agentsock.HostStatus) bool { return h.Extension.Connected }
