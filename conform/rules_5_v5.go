package conform

import (
	"fmt"

	"github.com/gomonty/monty/message"
)

// Rules defined only at protocol 5: the per-feed and per-turn limits, their
// echo on stamped events, and the OsPolicy refusal on Configure.

func init() {
	rule("v5.limits-echoed", "delta-v5 ChildEvent 24–27", only5, 0,
		"A stamped event at 5 echoes max_feed_duration, max_turn_duration and max_total_sleep, and carries no max_duration",
		func(t *rt) {
			cfg := t.Config()
			feed, turn, sleep := uint64(5_000_000), uint64(4_000_000), uint64(3_000_000)
			cfg.Limits = &message.ResourceLimits{MaxFeedDurationMicros: &feed, MaxTurnDurationMicros: &turn, MaxTotalSleepMicros: &sleep}
			s := t.FreshWith(cfg)
			r := s.Expect(s.Feed("1 + 1"), "Feed 1 + 1", completes("2"))
			ev := r.Event
			eq := func(p *uint64, v uint64) bool { return p != nil && *p == v }
			if !eq(ev.MaxFeedDurationMicros, feed) || !eq(ev.MaxTurnDurationMicros, turn) || !eq(ev.MaxTotalSleepMicros, sleep) || ev.MaxDurationMicros != nil {
				t.Failf("expected the limits echoed (feed %d, turn %d, sleep %d) and no max_duration, got %s", feed, turn, sleep, describeLimits5(ev))
			}
		})

	rule("v5.feed-limit-timeout", "delta-v5 Time; resource-limits.md", only5, 0,
		"A feed running past max_feed_duration ends with TimeoutError(\"time limit exceeded: <elapsed> > <limit>\")",
		func(t *rt) {
			cfg := t.Config()
			feed := uint64(300_000)
			cfg.Limits = &message.ResourceLimits{MaxFeedDurationMicros: &feed}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("while True:\n    pass"), "Feed an endless loop",
				raisesLike("TimeoutError", "time limit exceeded: "), raisesLike("TimeoutError", " > 300ms"))
		})

	rule("v5.os-policy-invalid-recoverable", "delta-v5 Configure", only5, 0,
		"An os_policy failing validation is refused on Configure with a recoverable protocol-violation Error, and a valid Configure then succeeds",
		func(t *rt) {
			s := t.Open()
			cfg := t.Config()
			cfg.OsPolicy = &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{Microsecond: 1_000_000}}
			s.Expect(s.Turn(cfg), "Configure with a fixed microsecond of 1000000",
				raisesLike("RuntimeError", "protocol violation: invalid "))
			s.Expect(s.Turn(t.Config()), "Configure afterwards", isOk)
			s.Expect(s.Feed("2 * 3"), "Feed 2 * 3", completes("6"))
		})
}

func describeLimits5(ev *message.ChildEvent) string {
	show := func(p *uint64) string {
		if p == nil {
			return "absent"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("feed %s, turn %s, sleep %s, max_duration %s",
		show(ev.MaxFeedDurationMicros), show(ev.MaxTurnDurationMicros), show(ev.MaxTotalSleepMicros), show(ev.MaxDurationMicros))
}
