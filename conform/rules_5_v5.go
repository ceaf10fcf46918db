package conform

import (
	"fmt"

	"github.com/gomonty/monty/message"
)

// Rules defined only at protocol 5: the per-feed and per-turn limits, their
// echo on stamped events and after a Load, the feed clock, and the
// OsPolicy refusal on Configure.

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

	rule("v5.feed-execution-restarts", "delta-v5 ChildEvent 24", only5, 0,
		"feed_execution_micros is the execution clock restarted at each feed: a feed after a long one stamps less than the long one did, while total_execution_micros keeps counting",
		func(t *rt) {
			s := t.Fresh()
			long := s.Expect(s.Feed("n = 0\nfor i in range(200000):\n    n += i\nn"), "Feed a loop", isComplete).Event
			if long.FeedExecutionMicros == 0 || long.FeedExecutionMicros > long.TotalExecutionMicros {
				t.Failf("expected 0 < feed_execution_micros <= total_execution_micros after a loop, got feed %d, total %d",
					long.FeedExecutionMicros, long.TotalExecutionMicros)
				return
			}
			short := s.Expect(s.Feed("1"), "Feed 1", completes("1")).Event
			if short.FeedExecutionMicros >= long.FeedExecutionMicros || short.TotalExecutionMicros < long.TotalExecutionMicros {
				t.Failf("expected the short feed's clock below the loop's (%d µs) and the total not below %d µs, got feed %d, total %d",
					long.FeedExecutionMicros, long.TotalExecutionMicros, short.FeedExecutionMicros, short.TotalExecutionMicros)
			}
		})

	rule("v5.turn-limit-timeout", "delta-v5 Time; resource-limits.md", only5, 0,
		"A turn running past max_turn_duration ends with TimeoutError(\"turn time limit exceeded: <elapsed> > <limit>\")",
		func(t *rt) {
			cfg := t.Config()
			turn := uint64(300_000)
			cfg.Limits = &message.ResourceLimits{MaxTurnDurationMicros: &turn}
			s := t.FreshWith(cfg)
			s.Expect(s.Feed("while True:\n    pass"), "Feed an endless loop",
				raisesLike("TimeoutError", "turn time limit exceeded: "), raisesLike("TimeoutError", " > 300ms"))
		})

	rule("v5.load-echoes-dump-limits", "delta-v5 ChildEvent 25–27; Configure (Load restores the dump's)", only5, 0,
		"Load restores the dump's feed, turn and sleep limits over the Configure's and echoes them on its reply",
		func(t *rt) {
			cfg := t.Config()
			feed, turn, sleep := uint64(7_000_000), uint64(6_000_000), uint64(2_000_000)
			cfg.Limits = &message.ResourceLimits{MaxFeedDurationMicros: &feed, MaxTurnDurationMicros: &turn, MaxTotalSleepMicros: &sleep}
			a := t.FreshWith(cfg)
			a.Expect(a.Feed("x = 41"), "Feed x = 41", isComplete)
			st := dumpOf(t, a, "Dump")
			other := t.Config()
			of, ot, os := uint64(9_000_000), uint64(8_000_000), uint64(1_000_000)
			other.Limits = &message.ResourceLimits{MaxFeedDurationMicros: &of, MaxTurnDurationMicros: &ot, MaxTotalSleepMicros: &os}
			b := t.FreshWith(other)
			ev := b.Expect(b.Turn(&message.Load{State: st}), "Load the dump into a session configured with other limits", isOk).Event
			eq := func(p *uint64, v uint64) bool { return p != nil && *p == v }
			if !eq(ev.MaxFeedDurationMicros, feed) || !eq(ev.MaxTurnDurationMicros, turn) || !eq(ev.MaxTotalSleepMicros, sleep) {
				t.Failf("expected the dump's limits echoed (feed %d, turn %d, sleep %d), got %s", feed, turn, sleep, describeLimits5(ev))
				return
			}
			b.Expect(b.Feed("x + 1"), "Feed x + 1", completes("42"))
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
