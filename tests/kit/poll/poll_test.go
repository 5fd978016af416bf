package poll

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	n := 0
	err := Until(context.Background(), time.Millisecond, func() (bool, error) {
		n++
		switch n {
		case 1:
			return false, errors.New("not yet")
		case 2:
			return false, nil
		}
		return true, nil
	})
	if err != nil || n != 3 {
		t.Fatalf("Until = %v after %d checks; want nil after 3", err, n)
	}
}

func TestUntilDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := Until(ctx, time.Millisecond, func() (bool, error) { return false, errors.New("still closed") })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "still closed") {
		t.Fatalf("Until = %v; want the deadline with the last error", err)
	}
	err = Until(ctx, time.Millisecond, func() (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "last") {
		t.Fatalf("Until = %v; want the deadline alone", err)
	}
}
