package session

import (
	"context"
	"strconv"
	"time"

	"github.com/gomonty/monty/internal/satdur"
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
// async_system_sleep) without the OS handler. The delay, capped by the
// worker and again by the parent (sleepDelay), is charged to the sleep budget before waiting (the lower of
// Limits.MaxTotalSleep and the limit the worker echoed, which after a Load
// is the dump's); a sleep that would take the total past the budget is
// refused by aborting the feed with the uncatchable "TimeoutError: sleep
// limit exceeded: <total> > <limit>" (the total includes the refused
// sleep, which is not charged). A time.sleep is waited out before the
// parent resumes with None (a done context aborts the feed; Close and Kill
// end the wait too). An
// asyncio.sleep is charged its full delay when it is created and answered
// with a future that the parent resolves (with None, which the sandbox
// ignores) once the delay has passed, so sleeps gathered together overlap
// as they do upstream; a zero delay is answered at once.
func (r *runner) systemSleep(oc *message.OsCall) message.Request {
	s := r.s
	d := s.sleepDelay(oc)
	if abort := s.chargeSleep(d); abort != nil {
		return abort
	}
	if oc.Op == message.OpAsyncSystemSleep && d > 0 {
		r.sleepFuture(oc.CallID, d)
		return &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultFuture, Future: oc.CallID}}
	}
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.fctx.Done():
			// The caller's context ended (the feed is aborted), or Close
			// or Kill cancelled the run's host context (the session is
			// closed): either way, stop waiting.
			return nil
		}
	}
	r.g.Reset()
	root := r.g.Add(value.None())
	return &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: r.g}
}

// chargeSleep charges a system sleep of d to the sleep budget, before it
// is waited out, or returns the AbortFeed that refuses it with upstream's
// "sleep limit exceeded: <total> > <limit>" when the total would pass the
// budget (the refused sleep is not charged).
func (s *Session) chargeSleep(d time.Duration) *message.AbortFeed {
	// Saturating: a hostile delay near the largest duration must not wrap
	// the total around past the budget check.
	total := satdur.Add(s.stamps.TotalSleep, d)
	if lim := s.sleepLimit(); lim > 0 && total > lim {
		s.tel.abortFails = true // the abort returned is sent next
		return &message.AbortFeed{Exception: message.NewException("TimeoutError",
			"sleep limit exceeded: "+message.RustDuration(total)+" > "+message.RustDuration(lim))}
	}
	s.stamps.TotalSleep = total
	return nil
}

// chargeHandedSleep charges the system sleep that a turn method (Feed,
// Resume) hands its caller to wait out, as Run charges the ones it
// waits out itself: when the sleep would pass the budget, the feed is
// aborted at once and the abort's event is returned in its place.
func (s *Session) chargeHandedSleep(ctx context.Context, ev *message.ChildEvent, err error) (*message.ChildEvent, error) {
	if err != nil || ev == nil || ev != s.susp || s.cur() != StateSuspended {
		return ev, err
	}
	oc, ok := ev.Body.(*message.OsCall)
	if !ok || !oc.Op.IsSystemSleep() {
		return ev, nil
	}
	d := s.sleepDelay(oc)
	if abort := s.chargeSleep(d); abort != nil {
		return s.exchange(ctx, abort)
	}
	if d < message.SleepDuration(oc.Seconds) {
		oc.Seconds = d.Seconds() // the caller waits out what was charged
	}
	return ev, nil
}

// sleepDelay is the delay of a system sleep, capped at the per-call cap
// of the session's own OsPolicy (SleepMode.MaxMicros, or
// message.DefaultMaxSleep with no policy or no cap): an honest worker caps
// it itself, and one that does not must not make the parent charge or
// wait more. No cap is known after a Load, whose dump brings its own
// policy, nor under a sleep mode that has no system sleeps.
func (s *Session) sleepDelay(oc *message.OsCall) time.Duration {
	d := message.SleepDuration(oc.Seconds)
	if s.dumpLimits {
		return d
	}
	limit := message.DefaultMaxSleep
	if p := s.cfg.OsPolicy; p != nil && p.Sleep != nil {
		switch p.Sleep.Kind {
		case message.SleepUnset, message.SleepSystem:
			if p.Sleep.MaxMicros != nil {
				limit = satdur.Micros(*p.Sleep.MaxMicros)
			}
		default:
			return d
		}
	}
	return min(d, limit)
}

// policyInForce is the OsPolicy the worker runs under as far as the
// session knows: its Config's, or nil after a Load, whose dump brings its
// own policy (and for sessions that set none). OS handlers get it in their
// context (message.PolicyFromContext).
func (s *Session) policyInForce() *message.OsPolicy {
	if s.dumpLimits {
		return nil
	}
	return s.cfg.OsPolicy
}

// sleepFuture registers the future of an async system sleep under id and
// completes it with None once d has passed (or never, when the feed's host
// context ends first).
func (r *runner) sleepFuture(id uint32, d time.Duration) {
	f := &future{}
	r.mu.Lock()
	if r.futures == nil {
		r.futures = map[uint32]*future{}
		r.notify = make(chan struct{}, 1)
	}
	r.futures[id] = f
	notify := r.notify
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.fctx.Done():
			return
		}
		var g value.Graph
		root := g.Add(value.None())
		r.mu.Lock()
		f.g, f.res, f.done = g, message.ExtResult{Kind: message.ResultReturn, Value: root}, true
		r.mu.Unlock()
		select {
		case notify <- struct{}{}:
		default:
		}
	}()
}

// sleepLimit is the sleep budget in force: the lower of ours and the
// echoed one; 0 for none.
func (s *Session) sleepLimit() time.Duration {
	return limit5(s.cfg.Limits.MaxTotalSleep, s.stamps.MaxTotalSleep)
}

// own5 is l, a protocol-5 duration limit of the Config, while the watchdog
// backstops it: 0 once a loaded dump's limits have replaced the Config's
// in the worker (see Load). The backstop stands behind the worker's own
// TimeoutError, so it follows the limits the worker enforces. The sleep
// budget, which the parent enforces itself, keeps the Config's as a
// ceiling (see Limits.MaxTotalSleep).
func (s *Session) own5(l time.Duration) time.Duration {
	if s.dumpLimits {
		return 0
	}
	return l
}

// sleepFutureRefused is the answer that replaces an OS handler's future
// for a call_host time.sleep: the sleep is a wait with nothing to resume
// into, so upstream's worker raises this RuntimeError at the call, and the
// parent raises it for every worker.
func sleepFutureRefused(oc *message.OsCall, rc *message.ResumeCall) *message.ResumeCall {
	if oc.Op != message.OpSleep || rc.Result == nil || rc.Result.Kind != message.ResultFuture {
		return rc
	}
	return &message.ResumeCall{CallID: oc.CallID, Result: &message.ExtResult{Kind: message.ResultError,
		Error: message.NewException("RuntimeError", "time.sleep cannot be answered with a future")}}
}

// DurationLimit names a duration limit the parent's watchdog enforces.
//
// A DurationLimit is a plain value, safe for concurrent use.
type DurationLimit uint8

// The duration limits.
const (
	// LimitNone: no duration limit (the error was not the watchdog's).
	LimitNone DurationLimit = iota
	// LimitDuration: the cumulative max_duration (protocols 4 and 2; at 5
	// the parent still backstops Limits.MaxDuration against
	// total_execution_micros).
	LimitDuration
	// LimitFeed: max_feed_duration, one feed's execution time (protocol 5).
	LimitFeed
	// LimitTurn: max_turn_duration, the execution time between two host
	// round trips (protocol 5).
	LimitTurn
	// LimitReply: the parent's own bound on a turn that runs no code (a
	// Dump, a Load, a Reset; see Config.WatchdogGrace). It has no wire
	// name: no worker enforces it.
	LimitReply
)

// String returns the limit's wire name ("max_feed_duration", ...), or
// "reply bound" for LimitReply.
func (l DurationLimit) String() string {
	switch l {
	case LimitDuration:
		return "max_duration"
	case LimitFeed:
		return "max_feed_duration"
	case LimitTurn:
		return "max_turn_duration"
	case LimitReply:
		return "reply bound"
	}
	return "no limit"
}

// suspensionPosition returns the source position of a suspension event,
// nil when it has none.
func suspensionPosition(ev *message.ChildEvent) *message.SourceRange {
	switch b := ev.Body.(type) {
	case *message.FunctionCall:
		return b.Position
	case *message.OsCall:
		return b.Position
	case *message.NameLookup:
		return b.Position
	case *message.ResolveFutures:
		return b.Position
	}
	return nil
}

// positionSuffix renders a known source position as " at FILE:START-END"
// (UTF-8 byte offsets, end exclusive), and the empty range as "".
func positionSuffix(p message.SourceRange) string {
	if p == (message.SourceRange{}) {
		return ""
	}
	return " at " + p.Filename + ":" + strconv.FormatUint(uint64(p.Start), 10) + "-" + strconv.FormatUint(uint64(p.End), 10)
}

// noteStamps5 records a protocol-5 event's feed clock (ratcheted, so a
// worker cannot rewind the feed backstop within a feed) and echoed limits.
func (s *Session) noteStamps5(ev *message.ChildEvent) {
	if s.codec == nil || s.codec.Version() < protocol.Version5 {
		return
	}
	s.stamps.FeedExecution = max(s.stamps.FeedExecution, satdur.Micros(ev.FeedExecutionMicros))
	if p := ev.MaxFeedDurationMicros; p != nil {
		s.stamps.MaxFeedDuration = satdur.Micros(*p)
	}
	if p := ev.MaxTurnDurationMicros; p != nil {
		s.stamps.MaxTurnDuration = satdur.Micros(*p)
	}
	if p := ev.MaxTotalSleepMicros; p != nil {
		s.stamps.MaxTotalSleep = satdur.Micros(*p)
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
// watchdog grace; the budget it enforces and which limit that is. When
// both end together the feed limit is named, as the worker reports it.
func (s *Session) backstop5() (d, budget time.Duration, limit DurationLimit, ok bool) {
	if s.codec == nil || s.codec.Version() < protocol.Version5 {
		return 0, 0, LimitNone, false
	}
	feed := s.cfg.Limits.MaxFeedDuration
	if feed <= 0 {
		feed = s.cfg.Limits.maxDuration()
	}
	feed = limit5(s.own5(feed), s.stamps.MaxFeedDuration)
	turn := limit5(s.own5(s.cfg.Limits.MaxTurnDuration), s.stamps.MaxTurnDuration)
	if feed > 0 {
		d, budget, limit, ok = satdur.Add(max(feed-s.stamps.FeedExecution, 0), s.cfg.WatchdogGrace), feed, LimitFeed, true
	}
	if turn > 0 {
		if t := satdur.Add(turn, s.cfg.WatchdogGrace); !ok || t < d {
			d, budget, limit, ok = t, turn, LimitTurn, true
		}
	}
	return d, budget, limit, ok
}
