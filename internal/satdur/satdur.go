// Package satdur is arithmetic on time.Duration that saturates at the
// largest Duration instead of wrapping: limits and clocks that come off the
// wire (a crafted dump, a limit of math.MaxInt64) must not turn negative.
package satdur

import (
	"math"
	"time"
)

// Add is a+b for non-negative durations, saturating at the largest
// Duration.
func Add(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Micros converts a count of microseconds (a limit or a clock off the wire)
// to a Duration, saturating at the largest Duration.
func Micros(us uint64) time.Duration {
	if us > math.MaxInt64/uint64(time.Microsecond) {
		return math.MaxInt64
	}
	return time.Duration(us) * time.Microsecond
}

// MicrosOpt is Micros of an optional count: 0 and false when p is nil.
func MicrosOpt(p *uint64) (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	return Micros(*p), true
}
