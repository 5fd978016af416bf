// Package testctx bounds a test's waits: a context that ends after a
// limit, so that a wait that hangs fails the test instead of holding the
// suite until its timeout. Reaching the limit is a failure, not a timing
// assertion. The context outlives t.Context(): the test's cleanups may
// still use it.
package testctx

import (
	"context"
	"testing"
	"time"
)

// New returns a context that ends a minute from now, or when the test's
// cleanups have run.
func New(t testing.TB) context.Context { return Within(t, time.Minute) }

// Within returns a context that ends after d, or when the test's
// cleanups have run.
func Within(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
