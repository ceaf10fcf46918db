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
