package session

import (
	"time"

	"github.com/gomonty/monty/message"
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
