// Package poll waits, in a test, for something only a repeated look can
// see: a browser target that appears, a page that comes back, a process
// that has gone.
package poll

import (
	"context"
	"fmt"
	"time"
)

// Until calls check every interval until it reports true, and returns
// nil then. A check that fails (an error, or false) is tried again; when
// ctx ends first, Until returns ctx's error with check's last error, if
// any. A check that must stop the wait at once fails its test itself.
func Until(ctx context.Context, every time.Duration, check func() (bool, error)) error {
	for {
		ok, err := check()
		if err == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
			}
			return ctx.Err()
		case <-time.After(every):
		}
	}
}
