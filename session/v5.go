package session

import (
	"time"

	"github.com/gomonty/monty/message"
)

// wire5 adds protocol 5's own limits: the per-feed budget (overriding
// MaxDuration's translation), the per-turn budget and the sleep budget.
func (l Limits) wire5(r *message.ResourceLimits, opt func(uint64) *uint64) {
	us := func(d time.Duration) *uint64 {
		if d <= 0 {
			return nil
		}
		return opt(uint64(max(d/time.Microsecond, 1)))
	}
	if p := us(l.MaxFeedDuration); p != nil {
		r.MaxFeedDurationMicros = p
	}
	r.MaxTurnDurationMicros = us(l.MaxTurnDuration)
	r.MaxTotalSleepMicros = us(l.MaxTotalSleep)
}
