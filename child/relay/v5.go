package relay

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/mount"
	"github.com/gomonty/monty/protocol"
)

// v5 is the relay's protocol-5 translation, used when the outer parent
// configured 5 and the inner worker speaks an older version (the released
// 0.0.23 worker speaks 2). What the inner worker cannot express, the relay
// does itself:
//
//   - max_feed_duration and max_turn_duration: the relay times each turn
//     (the wall time of the inner request, which is the sandbox's
//     execution time plus the pipe's round trip) and, when a budget runs
//     out, kills the inner worker and answers the turn with
//     TimeoutError("time limit exceeded: <elapsed> > <limit>"), the feed
//     limit reported when both ran out. A trip discards the session (as
//     upstream says a parent must): until a Reset and a new Configure,
//     every turn is answered with a RuntimeError.
//   - the clock: the inner worker's date_today and date_time_now OS calls
//     are answered by the relay from the policy's clock (system or fixed)
//     and timezone; under datetime=call_host they go to the outer parent.
//   - sleeps, time-module clocks and random: the 0.0.23 worker has no time
//     or random module and no asyncio.sleep, so nothing sleeps, reads a
//     time-module clock or draws; every sleep mode, random source and
//     process-time mode is honoured trivially, and max_total_sleep never
//     charges.
//
// A named timezone the child's tz database cannot resolve is refused on
// Configure with a recoverable Error.
type v5 struct {
	on       bool
	feedLim  time.Duration
	turnLim  time.Duration
	hasFeed  bool
	hasTurn  bool
	feedExec time.Duration
	tripped  bool
	clock    *mount.Table // nil: date ops go to the outer parent
	limits   [3]*uint64
}

// configure5 prepares the translation for an outer protocol-5 Configure
// over an inner worker of an older version and returns the Configure to
// send inward.
func (e *Engine) configure5(c *message.Configure) (*message.Configure, error) {
	x := v5{on: true}
	inner := *c
	inner.OsPolicy, inner.Persistence, inner.Profile = nil, message.PersistenceUnspecified, nil
	if l := c.Limits; l != nil {
		lim := *l
		if d, ok := durationMicros(l.MaxFeedDurationMicros); ok {
			x.feedLim, x.hasFeed = d, true
		}
		if d, ok := durationMicros(l.MaxTurnDurationMicros); ok {
			x.turnLim, x.hasTurn = d, true
		}
		x.limits = [3]*uint64{l.MaxFeedDurationMicros, l.MaxTurnDurationMicros, l.MaxTotalSleepMicros}
		lim.MaxFeedDurationMicros, lim.MaxTurnDurationMicros, lim.MaxTotalSleepMicros = nil, nil, nil
		inner.Limits = &lim
	}
	p := c.OsPolicy
	if p == nil || p.Clock != message.ClockCallHost {
		opts := mount.Options{Location: time.UTC}
		if p != nil && p.Clock == message.ClockFixed {
			opts.Clock = mount.FixedClock(time.Unix(p.Fixed.UnixSeconds, int64(p.Fixed.Microsecond)*1000))
		}
		if p != nil && p.TimeZone != nil {
			switch z := p.TimeZone; z.Kind {
			case message.ZoneNamed:
				loc, err := time.LoadLocation(z.Name)
				if err != nil {
					return nil, &child.Violation{Text: "unsupported os_policy: timezone " + z.Name + " is not in the child's tz database"}
				}
				opts.Location = loc
			case message.ZoneFixed:
				name := ""
				if z.Fixed.Name != nil {
					name = *z.Fixed.Name
				}
				opts.Location = time.FixedZone(name, int(z.Fixed.Offset))
			}
		}
		t, err := mount.New(nil, opts)
		if err != nil {
			return nil, &child.Violation{Text: "unsupported os_policy: " + err.Error()}
		}
		x.clock = t
	}
	e.v5 = x
	return &inner, nil
}

// durationMicros converts an optional microsecond limit.
func durationMicros(p *uint64) (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	if *p > uint64(1<<63-1)/uint64(time.Microsecond) {
		return 1<<63 - 1, true
	}
	return time.Duration(*p) * time.Microsecond, true
}

// stamps5 adds the protocol-5 stamps the relay keeps itself.
func (e *Engine) stamps5(st *child.Stamps) {
	if !e.v5.on {
		return
	}
	st.FeedExecutionMicros = uint64(e.v5.feedExec / time.Microsecond)
	st.MaxDurationMicros = nil
}

// discarded is the answer to every turn after a time-limit trip.
func discarded() *message.ChildEvent {
	return &message.ChildEvent{Body: &message.Error{Exception: message.NewException("RuntimeError",
		"session discarded after a time limit; Reset and Configure to go on")}}
}

// do5 runs one turn of a protocol-5 session over an older inner worker:
// it enforces the feed and turn budgets and answers the clock itself.
func (e *Engine) do5(ctx context.Context, req message.Request) (*message.ChildEvent, error) {
	if e.v5.tripped || e.s == nil {
		return discarded(), nil
	}
	if _, ok := req.(*message.Feed); ok {
		e.v5.feedExec = 0
	}
	var turn time.Duration
	for {
		ev, err := e.timed(ctx, req, &turn)
		if err != nil || ev == nil {
			return ev, err
		}
		call, ok := ev.Body.(*message.OsCall)
		if !ok || e.v5.clock == nil || (call.Op != message.OpDateToday && call.Op != message.OpDateTimeNow) {
			return ev, nil
		}
		rc, herr := e.v5.clock.HandleOS(ctx, call)
		if herr != nil {
			return nil, died(herr)
		}
		req = rc
	}
}

// timed runs one inner request under the remaining feed and turn budgets.
func (e *Engine) timed(ctx context.Context, req message.Request, turn *time.Duration) (*message.ChildEvent, error) {
	x := &e.v5
	budget, limited := time.Duration(0), false
	if x.hasFeed {
		budget, limited = x.feedLim-x.feedExec, true
	}
	if x.hasTurn && (!limited || x.turnLim-*turn < budget) {
		budget, limited = x.turnLim-*turn, true
	}
	if limited && budget <= 0 {
		return e.trip(x.feedExec, *turn), nil
	}
	var fired atomic.Bool
	var timer *time.Timer
	s := e.s
	if limited {
		timer = time.AfterFunc(budget, func() {
			fired.Store(true)
			s.Close()
		})
	}
	start := time.Now()
	ev, err := s.Do(ctx, req)
	elapsed := time.Since(start)
	if timer != nil {
		timer.Stop()
	}
	x.feedExec += elapsed
	*turn += elapsed
	if fired.Load() {
		return e.trip(x.feedExec, *turn), nil
	}
	return ev, err
}

// trip discards the inner worker after a budget ran out and reports the
// TimeoutError, the feed limit first when both ran out.
func (e *Engine) trip(feed, turn time.Duration) *message.ChildEvent {
	x := &e.v5
	x.tripped = true
	if e.s != nil {
		e.s.Close()
	}
	elapsed, limit := turn, x.turnLim
	if x.hasFeed && feed >= x.feedLim {
		elapsed, limit = feed, x.feedLim
	}
	return &message.ChildEvent{Body: &message.Error{Exception: message.NewException("TimeoutError",
		"time limit exceeded: "+message.RustDuration(elapsed)+" > "+message.RustDuration(limit))}}
}

// serves5 reports whether the relay translates protocol 5 for this session.
func (e *Engine) serves5(outer uint32) bool {
	return outer >= protocol.Version5 && e.s != nil && e.s.Version() < protocol.Version5
}
