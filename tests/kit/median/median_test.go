package median

import (
	"slices"
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		d    []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3 * ms}, 3 * ms},
		{[]time.Duration{9 * ms, 1 * ms, 5 * ms}, 5 * ms},
		{[]time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, 3 * ms},
	} {
		before := slices.Clone(c.d)
		if got := Of(c.d); got != c.want {
			t.Errorf("Of(%v) = %v, want %v", c.d, got, c.want)
		}
		if !slices.Equal(c.d, before) {
			t.Errorf("Of reordered its argument: %v, was %v", c.d, before)
		}
	}
	if got := Ms([]time.Duration{1500 * time.Microsecond}); got != 1.5 {
		t.Errorf("Ms(1.5 ms) = %v", got)
	}
}
