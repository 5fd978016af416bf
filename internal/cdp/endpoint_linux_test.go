package cdp

import (
	"context"
	"errors"
	"testing"
	"time"
)

// squatAddr is the loopback address without a port of its own that the
// squatter below takes: the default HTTP port on an address of 127/8 no
// other test uses.
const squatAddr = "127.77.13.9:80"

// TestOtherUsersListenerWithoutAPortRefused has uid nobody (allowed to
// bind port 80 by an ambient capability, as a service could be) listen on
// 127.77.13.9:80, and checks that an endpoint naming no port, in each
// form, is refused before anything is sent to it: the owner check covers
// the scheme's default port too.
func TestOtherUsersListenerWithoutAPortRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if got := squatAsNobody(t, ctx, squatAddr, "--inh-caps=+net_bind_service", "--ambient-caps=+net_bind_service"); got != squatAddr {
		t.Fatalf("the squatter listens on %s, not %s", got, squatAddr)
	}
	for _, raw := range []string{"http://127.77.13.9", "ws://127.77.13.9", "ws://127.77.13.9/devtools/browser/x", "http://127.77.13.9:80"} {
		_, err := webSocketURL(ctx, Endpoint{URL: raw, Source: SourceDefault}, nil)
		var ce *Error
		if !errors.As(err, &ce) || ce.Reason != ReasonOtherUser || ce.Status() != "refused" {
			t.Errorf("%s: %v, want refused as another user's", raw, err)
		}
	}
}
