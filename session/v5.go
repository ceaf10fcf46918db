package session

import (
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
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

// systemSleep answers a protocol-5 system sleep (system_sleep or
// async_system_sleep) without the OS handler: the delay, already capped by
// the worker, is charged to Limits.MaxTotalSleep before waiting; a sleep
// that would take the total past the budget is refused by aborting the
// feed with the uncatchable "TimeoutError: sleep limit exceeded: <total> >
// <limit>" (the total includes the refused sleep). Otherwise the parent
// waits the delay out (a done context aborts the feed) and resumes with
// None. The async arm is charged its full delay when the sleep is
// created, and answered the same way.
func (r *runner) systemSleep(oc *message.OsCall) message.Request {
	s := r.s
	d := time.Duration(0)
	if oc.Seconds > 0 {
		d = time.Duration(oc.Seconds * float64(time.Second))
	}
	total := s.stamps.TotalSleep + d
	if lim := s.cfg.Limits.MaxTotalSleep; lim > 0 && total > lim {
		return &message.AbortFeed{Exception: message.NewException("TimeoutError",
			"sleep limit exceeded: "+message.RustDuration(total)+" > "+message.RustDuration(lim))}
	}
	s.stamps.TotalSleep = total
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.ctx.Done():
			return nil
		}
	}
	r.g.Reset()
	root := r.g.Add(value.None())
	return &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: r.g}
}

// noteStamps5 records a protocol-5 event's feed clock (ratcheted, so a
// worker cannot rewind the feed backstop within a feed) and echoed limits.
func (s *Session) noteStamps5(ev *message.ChildEvent) {
	if s.codec == nil || s.codec.Version() < protocol.Version5 {
		return
	}
	s.stamps.FeedExecution = max(s.stamps.FeedExecution, micros(ev.FeedExecutionMicros))
	if p := ev.MaxFeedDurationMicros; p != nil {
		s.stamps.MaxFeedDuration = micros(*p)
	}
	if p := ev.MaxTurnDurationMicros; p != nil {
		s.stamps.MaxTurnDuration = micros(*p)
	}
	if p := ev.MaxTotalSleepMicros; p != nil {
		s.stamps.MaxTotalSleep = micros(*p)
	}
}

// limit5 is the lower of our own and the echoed limit; 0 for none.
func limit5(own, echoed time.Duration) time.Duration {
	switch {
	case own > 0 && echoed > 0:
		return min(own, echoed)
	case own > 0:
		return own
	}
	return echoed
}

// backstop5 returns the protocol-5 feed and turn backstop for the turn
// about to run: the feed budget left after the (ratcheted)
// feed_execution_micros, or the whole turn budget (a turn restarts at every
// resume, so it is timed from the request), whichever ends first, plus the
// watchdog grace; and the budget it enforces.
func (s *Session) backstop5() (d, budget time.Duration, ok bool) {
	if s.codec == nil || s.codec.Version() < protocol.Version5 {
		return 0, 0, false
	}
	feed := s.cfg.Limits.MaxFeedDuration
	if feed <= 0 {
		feed = s.cfg.Limits.MaxDuration
	}
	feed = limit5(feed, s.stamps.MaxFeedDuration)
	turn := limit5(s.cfg.Limits.MaxTurnDuration, s.stamps.MaxTurnDuration)
	if feed > 0 {
		d, budget, ok = max(feed-s.stamps.FeedExecution, 0)+s.cfg.WatchdogGrace, feed, true
	}
	if turn > 0 {
		if t := turn + s.cfg.WatchdogGrace; !ok || t < d {
			d, budget, ok = t, turn, true
		}
	}
	return d, budget, ok
}
