// Package median is the statistic the benchmarks report of their timed
// runs: the median, which the noise of a shared machine moves least.
package median

import (
	"slices"
	"time"
)

// Of is the median of d (of an even count, the upper of the two middle
// ones), leaving d as it was; 0 when d is empty.
func Of(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// Ms is Of in milliseconds, as the benchmarks' metrics are written.
func Ms(d []time.Duration) float64 { return float64(Of(d).Microseconds()) / 1000 }
