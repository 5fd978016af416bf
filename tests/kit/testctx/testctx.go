// Package testctx bounds a test's waits: a context that ends after a
// limit, so that a wait that hangs fails the test instead of holding the
// suite until its timeout. Reaching the limit is a failure, not a timing
// assertion. Unlike t.Context(), it is not cancelled before the test's
// cleanups run: those registered after it (run before its own) may still
// use it.
package testctx

import (
	"context"
	"testing"
	"time"
)

// New returns a context that ends a minute from now, or at the latest
// when its cleanup, registered now, runs.
func New(t testing.TB) context.Context { return Within(t, time.Minute) }

// Within returns a context that ends after d, or at the latest when its
// cleanup, registered now, runs.
func Within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
