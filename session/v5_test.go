package session

import (
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// The Limits API at each version: protocol 5 carries the feed, turn and
// sleep budgets and the OS policy; 4 and 2 carry only the cumulative
// MaxDuration.
func TestLimitsWireByVersion(t *testing.T) {
	cfg := Config{Limits: Limits{MaxDuration: time.Second, MaxFeedDuration: 300 * time.Millisecond,
		MaxTurnDuration: 200 * time.Millisecond, MaxTotalSleep: 150 * time.Millisecond},
		OsPolicy: &message.OsPolicy{Clock: message.ClockFixed}}
	c5 := cfg.configure(5)
	l := c5.Limits
	if l == nil || l.MaxDurationMicros != nil || *l.MaxFeedDurationMicros != 300_000 ||
		*l.MaxTurnDurationMicros != 200_000 || *l.MaxTotalSleepMicros != 150_000 || c5.OsPolicy != cfg.OsPolicy {
		t.Fatalf("protocol 5: %+v policy %v", l, c5.OsPolicy)
	}
	for _, v := range []uint32{4, 2} {
		c := cfg.configure(v)
		l := c.Limits
		if l == nil || l.MaxDurationMicros == nil || *l.MaxDurationMicros != 1_000_000 ||
			l.MaxFeedDurationMicros != nil || l.MaxTurnDurationMicros != nil || l.MaxTotalSleepMicros != nil || c.OsPolicy != nil {
			t.Fatalf("protocol %d: %+v policy %v", v, l, c.OsPolicy)
		}
	}
	// Without MaxFeedDuration, protocol 5 takes MaxDuration as the feed budget.
	if l := (&Config{Limits: Limits{MaxDuration: time.Second}}).configure(5).Limits; *l.MaxFeedDurationMicros != 1_000_000 {
		t.Fatalf("MaxDuration at 5: %+v", l)
	}
}
