package relay

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"time"
	// The child's own tz database for named zones, as upstream's children
	// embed theirs: without it a host with no /usr/share/zoneinfo (and no
	// Go installation) refused every named zone.
	_ "time/tzdata"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/internal/satdur"
	"github.com/gomonty/monty/internal/unsent"
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
//     execution time plus the pipe's round trip; a Dump or a Load, which
//     runs no sandbox code, is not timed) and, when a budget runs
//     out (or, checked again as the turn returns, the inner worker's
//     execution clock ran past it), kills the inner worker and answers
//     the turn with upstream's
//     TimeoutError("feed time limit exceeded: <elapsed> > <limit>", or
//     "turn time limit exceeded: …"), the feed limit reported when both
//     ran out. A trip discards the session (as upstream says a parent
//     must): until a Reset and a new Configure, every turn is answered
//     with a RuntimeError.
//   - dumps: a dump carries the protocol-5 limits and the OS policy, as
//     upstream's do (max_feed_duration travels in dumps, Load restores the
//     dump's policy), in a relay envelope around the inner worker's dump
//     (at 5 the dump payload is at the remote's discretion); Load restores
//     them and echoes the dump's limits. The inner worker's dump alone
//     (from a relay at 4 or 2, or the worker itself) loads with the
//     Configure's settings, and a relay at 4 or 2 loads the inner dump of
//     an envelope, whose settings it cannot express. The feed clock
//     travels in the envelope too (upstream serializes the feed budget in
//     dumps, so a session restored mid-feed resumes it); a bare inner
//     dump loads with the feed clock at zero.
//   - the clock: the inner worker's date_today and date_time_now OS calls
//     are answered by the relay from the policy's clock (system or fixed)
//     and timezone; under datetime=call_host they go to the outer parent.
//     An answer that cannot be sent (it echoes the call's timezone name,
//     so it can be over the frame cap when the call was not) raises, at
//     the call, the ValueError of a host answer that cannot be sent.
//   - sleeps, time-module clocks and random: the 0.0.23 worker has no time
//     or random module and no asyncio.sleep, so nothing sleeps, reads a
//     time-module clock or draws; every sleep mode, random source and
//     process-time mode is honoured trivially, and max_total_sleep never
//     charges.
//
// A named timezone is resolved from the host's tz database, or from the
// copy embedded in the relay (time/tzdata) when the host has none; one
// neither holds is refused on Configure with a recoverable Error.
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
	policy   *message.OsPolicy
	loaded   bool          // the limits and policy came from a dump
	total    time.Duration // execution time stamped after a trip
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
		if d, ok := satdur.MicrosOpt(l.MaxFeedDurationMicros); ok {
			x.feedLim, x.hasFeed = d, true
		}
		if d, ok := satdur.MicrosOpt(l.MaxTurnDurationMicros); ok {
			x.turnLim, x.hasTurn = d, true
		}
		x.limits = [3]*uint64{l.MaxFeedDurationMicros, l.MaxTurnDurationMicros, l.MaxTotalSleepMicros}
		lim.MaxFeedDurationMicros, lim.MaxTurnDurationMicros, lim.MaxTotalSleepMicros = nil, nil, nil
		inner.Limits = &lim
	}
	clock, err := clock5(c.OsPolicy)
	if err != nil {
		return nil, err
	}
	x.clock, x.policy = clock, c.OsPolicy
	e.v5 = x
	e.eagerInner(&inner)
	return &inner, nil
}

// clock5 builds the table that answers the inner worker's date calls from
// policy p; nil when the policy hands the clock to the outer parent.
func clock5(p *message.OsPolicy) (*mount.Table, error) {
	if p != nil && p.Clock == message.ClockCallHost {
		return nil, nil
	}
	opts := mount.Options{Location: time.UTC}
	if p != nil && p.Clock == message.ClockFixed {
		opts.Clock = mount.FixedClock(time.Unix(p.Fixed.UnixSeconds, int64(p.Fixed.Microsecond)*1000))
	}
	if p != nil && p.TimeZone != nil {
		loc, err := mount.ZoneLocation(p.TimeZone)
		if err != nil {
			if p.TimeZone.Kind == message.ZoneNamed {
				return nil, &child.Violation{Text: "unsupported os_policy: timezone " + p.TimeZone.Name + " is not in the child's tz database"}
			}
			return nil, &child.Violation{Text: "unsupported os_policy: " + err.Error()}
		}
		opts.Location = loc
	}
	t, err := mount.New(nil, opts)
	if err != nil {
		return nil, &child.Violation{Text: "unsupported os_policy: " + err.Error()}
	}
	return t, nil
}

// stamps5 adds the protocol-5 stamps the relay keeps itself.
func (e *Engine) stamps5(st *child.Stamps) {
	if !e.v5.on {
		return
	}
	st.FeedExecutionMicros = uint64(e.v5.feedExec / time.Microsecond)
	st.TotalExecutionMicros = max(st.TotalExecutionMicros, uint64(e.v5.total/time.Microsecond))
	st.MaxDurationMicros = nil
	if e.v5.loaded {
		lim := e.v5.limits
		st.Limits5 = &lim
	}
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
	switch req.(type) {
	case *message.Feed:
		e.v5.feedExec = 0
	case *message.Dump:
		// A Dump runs no sandbox code, so no budget times it (a large
		// session can take longer to dump than a turn may run).
		return e.s.Do(ctx, req)
	case *message.Load:
		// Nor does a Load. The feed clock is not the inner worker's,
		// whose clock jumps to the dumped session's total (no feed's
		// time): it starts at zero, and restore5 sets the one a relay
		// dump carries.
		e.v5.feedExec = 0
		return e.s.Do(ctx, req)
	}
	var turn turnClock
	var own *message.OsCall // the date call req answers, when req is the relay's
	for {
		ev, err := e.timed(ctx, req, &turn)
		if why, refused := notSent(err); refused && own != nil {
			// The relay's own answer could not be sent (the date
			// echoes a timezone name, so it can be a little larger
			// than the call): the call is still waiting, and a refusal
			// would be taken for the parent's request's. Raise there
			// the ValueError of a host answer that cannot be sent.
			req, own = unsent.OS(own.Op).StandIn(req, why), nil
			continue
		}
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
		req, own = rc, call
	}
}

// turnClock is one turn's time: the wall time of its inner requests,
// which the relay's timer bounds, and the inner worker's execution clock.
type turnClock struct{ wall, exec time.Duration }

// timed runs one inner request under the remaining feed and turn budgets.
func (e *Engine) timed(ctx context.Context, req message.Request, turn *turnClock) (*message.ChildEvent, error) {
	x := &e.v5
	budget, limited := time.Duration(0), false
	if x.hasFeed {
		budget, limited = x.feedLim-x.feedExec, true
	}
	if x.hasTurn && (!limited || x.turnLim-turn.wall < budget) {
		budget, limited = x.turnLim-turn.wall, true
	}
	// A budget already spent (a limit of 0, or a feed clock at its
	// limit) still runs the request, under a timer that fires at once:
	// as upstream's worker fails "at the first instruction", the turn
	// fails with the time it ran, which is more than the limit (tripping
	// without running said "0ns > 0ns").
	spent := limited && budget <= 0
	var timer *time.Timer
	s := e.s
	if limited {
		timer = time.AfterFunc(max(budget, 0), func() { s.Close() })
	}
	base := s.Stamps().TotalExecution
	start := time.Now()
	ev, err := s.Do(ctx, req)
	elapsed := time.Since(start)
	// A timer that could not be stopped has fired (or is firing): the
	// inner worker is being killed even if it answered first.
	fired := timer != nil && !timer.Stop()
	turn.wall += elapsed
	if fired || spent {
		// The killed worker stamped nothing for this turn: count it.
		x.feedExec = satdur.Add(x.feedExec, elapsed)
		x.total = base + elapsed
		return e.trip(x.feedExec, turn.wall), nil
	}
	// The feed clock is the inner worker's execution clock restarted at
	// the feed, so it never runs ahead of total_execution_micros; the
	// relay's own timing (which includes the pipe's round trip) counts
	// only for a turn the inner worker did not answer.
	if err != nil {
		x.feedExec = satdur.Add(x.feedExec, elapsed)
		return ev, err
	}
	if used := s.Stamps().TotalExecution - base; used > 0 {
		x.feedExec = satdur.Add(x.feedExec, used)
		turn.exec = satdur.Add(turn.exec, used)
	}
	// As upstream's worker does, the budgets are checked again as the
	// turn returns: a turn whose execution ran past one (before the
	// timer fired) fails rather than returning its result.
	if x.hasFeed && x.feedExec > x.feedLim || x.hasTurn && turn.exec > x.turnLim {
		return e.trip(x.feedExec, max(turn.wall, turn.exec)), nil
	}
	return ev, nil
}

// trip discards the inner worker after a budget ran out and reports the
// TimeoutError, the feed limit first when both ran out.
func (e *Engine) trip(feed, turn time.Duration) *message.ChildEvent {
	x := &e.v5
	x.tripped = true
	if e.s != nil {
		e.s.Close()
	}
	scope, elapsed, limit := "turn", turn, x.turnLim
	if x.hasFeed && feed >= x.feedLim {
		scope, elapsed, limit = "feed", feed, x.feedLim
	}
	return &message.ChildEvent{Body: &message.Error{Exception: message.NewException("TimeoutError",
		scope+" time limit exceeded: "+message.RustDuration(elapsed)+" > "+message.RustDuration(limit))}}
}

// serves5 reports whether the relay translates protocol 5 for this session.
func (e *Engine) serves5(outer uint32) bool {
	return outer >= protocol.Version5 && e.s != nil && e.s.Version() < protocol.Version5
}

// dumpMagic5 opens a relay protocol-5 dump: the magic, a uvarint length
// and a protocol-5 Configure holding the dump's limits and policy, the
// feed clock in microseconds (a uvarint), then the inner worker's dump.
// dumpMagic5Old opens the same without the feed clock (the relay wrote it
// before the clock travelled); such a dump loads with the clock at zero.
var (
	dumpMagic5    = []byte("gomonty relay dump v5\x01")
	dumpMagic5Old = []byte("gomonty relay dump v5\x00")
)

// dump5 wraps the inner worker's dump with the protocol-5 settings and the
// feed clock: upstream serializes max_feed_duration into dumps, so a
// session restored mid-feed resumes the feed budget where it was.
func (e *Engine) dump5(ev message.Event, err error) (message.Event, error) {
	d, ok := ev.(*message.DumpResult)
	if err != nil || !ok || !e.v5.on {
		return ev, err
	}
	x := &e.v5
	saved := &message.Configure{ProtocolVersion: protocol.Version5, OsPolicy: x.policy,
		Limits: &message.ResourceLimits{MaxFeedDurationMicros: x.limits[0], MaxTurnDurationMicros: x.limits[1], MaxTotalSleepMicros: x.limits[2]}}
	b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: saved})
	if err != nil {
		return nil, &child.Violation{Text: "dump failed: " + err.Error()}
	}
	out := make([]byte, 0, len(dumpMagic5)+2*binary.MaxVarintLen64+len(b)+len(d.State))
	out = append(out, dumpMagic5...)
	out = binary.AppendUvarint(out, uint64(len(b)))
	out = append(out, b...)
	out = binary.AppendUvarint(out, uint64(x.feedExec/time.Microsecond))
	out = append(out, d.State...)
	return &message.DumpResult{State: out}, nil
}

// saved5 is what a relay protocol-5 dump carries besides the inner dump.
type saved5 struct {
	*message.Configure               // the limits and policy
	feed               time.Duration // the feed clock
}

// split5 separates a relay protocol-5 dump into the saved settings and the
// inner worker's dump; other dumps come back unchanged with nil settings.
func split5(state []byte) ([]byte, *saved5, error) {
	rest, clocked := bytes.CutPrefix(state, dumpMagic5)
	if !clocked {
		var ok bool
		if rest, ok = bytes.CutPrefix(state, dumpMagic5Old); !ok {
			return state, nil, nil
		}
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > uint64(len(rest)-k) {
		return nil, nil, &child.Violation{Text: "failed to load session: truncated relay dump"}
	}
	req, err := codecv5.DecodeRequest(rest[k:k+int(n)], codec.Limits{})
	if err != nil {
		return nil, nil, &child.Violation{Text: "failed to load session: invalid relay dump settings: " + err.Error()}
	}
	c, ok := req.Body.(*message.Configure)
	if !ok || c.Limits == nil {
		return nil, nil, &child.Violation{Text: "failed to load session: invalid relay dump settings"}
	}
	// A dump is the parent's to craft: its policy passes the checks a
	// Configure's does, or the sandbox would run under a clock no
	// Configure can set.
	if err := c.OsPolicy.Validate(); err != nil {
		return nil, nil, &child.Violation{Text: "failed to load session: invalid relay dump settings: invalid os_policy: " +
			strings.TrimPrefix(err.Error(), message.ErrInvalidPolicy.Error()+": ")}
	}
	rest = rest[k+int(n):]
	sv := &saved5{Configure: c}
	if clocked {
		us, k := binary.Uvarint(rest)
		if k <= 0 {
			return nil, nil, &child.Violation{Text: "failed to load session: truncated relay dump"}
		}
		sv.feed = satdur.Micros(us)
		rest = rest[k:]
	}
	return rest, sv, nil
}

// restore5 adopts a loaded dump's limits, policy (its clock already built
// by clock5) and feed clock, replacing the Configure's; the limits are
// echoed from now on.
func (e *Engine) restore5(c *saved5, clock *mount.Table) {
	x := &e.v5
	if !x.on {
		return
	}
	if x.clock != nil {
		x.clock.Close()
	}
	x.feedExec = c.feed
	l := c.Limits
	x.feedLim, x.hasFeed = satdur.MicrosOpt(l.MaxFeedDurationMicros)
	x.turnLim, x.hasTurn = satdur.MicrosOpt(l.MaxTurnDurationMicros)
	x.limits = [3]*uint64{l.MaxFeedDurationMicros, l.MaxTurnDurationMicros, l.MaxTotalSleepMicros}
	x.clock, x.policy, x.loaded = clock, c.OsPolicy, true
}
