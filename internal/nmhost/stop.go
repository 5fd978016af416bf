package nmhost

import (
	"fmt"

	"github.com/fillgate/fillgate/internal/fill"
)

// ErrStopped is the cancellation cause to give the context of Run when
// the host process is told to stop (SIGTERM: Chromium sends it to its
// native hosts right after it closes their port). The requests under way
// end as failed, the browser being gone (not cancelled: their agents did
// not leave), and Run returns nil.
var ErrStopped = fmt.Errorf("the fillgate host was stopped: %w", fill.ErrBrowserGone)
