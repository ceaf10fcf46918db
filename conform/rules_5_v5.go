//go:build unix

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
			lim := limits5{feed: 5_000_000, turn: 4_000_000, sleep: 3_000_000}
			s := lim.session(t)
			ev := s.Expect(s.Feed("1 + 1"), "Feed 1 + 1", completes("2")).Event
			if !lim.echoedBy(ev) || ev.MaxDurationMicros != nil {
				t.Failf("expected the limits echoed (%s) and no max_duration, got %s", lim, describeLimits5(ev))
			}
		})

	for _, c := range []struct {
		id, scope, text string
		lim             limits5
	}{
		{"v5.feed-limit-timeout", "feed", "time limit exceeded", limits5{feed: 300_000}},
		{"v5.turn-limit-timeout", "turn", "turn time limit exceeded", limits5{turn: 300_000}},
	} {
		rule(c.id, "delta-v5 Time; resource-limits.md", only5, 0,
			fmt.Sprintf("A %s running past max_%s_duration ends with TimeoutError(%q)", c.scope, c.scope, c.text+": <elapsed> > <limit>"),
			func(t *rt) {
				s := c.lim.session(t)
				s.Expect(s.Feed("while True:\n    pass"), "Feed an endless loop",
					raisesLike("TimeoutError", c.text+": "), raisesLike("TimeoutError", " > 300ms"))
			})
	}

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

	rule("v5.load-echoes-dump-limits", "delta-v5 ChildEvent 25–27; Configure (Load restores the dump's)", only5, 0,
		"Load restores the dump's feed, turn and sleep limits over the Configure's and echoes them on its reply",
		func(t *rt) {
			lim := limits5{feed: 7_000_000, turn: 6_000_000, sleep: 2_000_000}
			a := lim.session(t)
			a.Expect(a.Feed("x = 41"), "Feed x = 41", isComplete)
			st := dumpOf(t, a, "Dump")
			b := limits5{feed: 9_000_000, turn: 8_000_000, sleep: 1_000_000}.session(t)
			ev := b.Expect(b.Turn(&message.Load{State: st}), "Load the dump into a session configured with other limits", isOk).Event
			if !lim.echoedBy(ev) {
				t.Failf("expected the dump's limits echoed (%s), got %s", lim, describeLimits5(ev))
				return
			}
			b.Expect(b.Feed("x + 1"), "Feed x + 1", completes("42"))
		})
}

// limits5 are protocol 5's feed, turn and sleep limits, in microseconds.
type limits5 struct{ feed, turn, sleep uint64 }

// session opens a fresh session configured with the limits (0: absent).
func (l limits5) session(t *rt) *sess {
	opt := func(us uint64) *uint64 {
		if us == 0 {
			return nil
		}
		return &us
	}
	cfg := t.Config()
	cfg.Limits = &message.ResourceLimits{MaxFeedDurationMicros: opt(l.feed), MaxTurnDurationMicros: opt(l.turn), MaxTotalSleepMicros: opt(l.sleep)}
	return t.FreshWith(cfg)
}

// echoedBy reports whether ev echoes exactly these limits.
func (l limits5) echoedBy(ev *message.ChildEvent) bool {
	eq := func(p *uint64, v uint64) bool { return p != nil && *p == v }
	return eq(ev.MaxFeedDurationMicros, l.feed) && eq(ev.MaxTurnDurationMicros, l.turn) && eq(ev.MaxTotalSleepMicros, l.sleep)
}

func (l limits5) String() string {
	return fmt.Sprintf("feed %d, turn %d, sleep %d", l.feed, l.turn, l.sleep)
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
