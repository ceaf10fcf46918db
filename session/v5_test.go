package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
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

func sleepCall(id uint32, seconds float64) *message.ChildEvent {
	return stamp(ev(&message.OsCall{CallID: id, Op: message.OpSystemSleep, Seconds: seconds}), protocol.DefaultMaxSuspensions)
}

// System sleeps at protocol 5 are waited out by the parent without the OS
// handler and charged to MaxTotalSleep before waiting; the sleep that
// would pass the budget is refused with AbortFeed and upstream's exact
// "sleep limit exceeded: <total> > <limit>" text.
func TestFakeSystemSleepChargedAndRefused(t *testing.T) {
	var abort *message.AbortFeed
	var resumed []message.ResultKind
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxTotalSleep: 150 * time.Millisecond}},
		func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(sleepCall(1, 0.1))
			case *message.ResumeCall:
				resumed = append(resumed, b.Result.Kind)
				return reply(sleepCall(2, 0.525))
			case *message.AbortFeed:
				abort = b
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
	osCalls := 0
	start := time.Now()
	_, err := s.Run(bg, "time.sleep(0.1); time.sleep(0.525)", WithOS(OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
		osCalls++
		return nil, ErrNotHandled
	})))
	if waited := time.Since(start); waited < 100*time.Millisecond {
		t.Errorf("the parent waited %v for a 100ms sleep", waited)
	}
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Type() != "TimeoutError" || pe.Exception.Msg() != "sleep limit exceeded: 625ms > 150ms" {
		t.Fatalf("got %v, want TimeoutError: sleep limit exceeded: 625ms > 150ms", err)
	}
	if abort == nil || len(resumed) != 1 || resumed[0] != message.ResultReturn || osCalls != 0 {
		t.Fatalf("abort %v resumed %v OS handler calls %d", abort, resumed, osCalls)
	}
	if got := s.Stamps().TotalSleep; got != 100*time.Millisecond {
		t.Errorf("TotalSleep %v, want 100ms (the refused sleep is not slept)", got)
	}
}

// A worker asking for a sleep near the largest duration after one already
// charged cannot wrap the sleep total around: the charge saturates and
// the sleep is refused, where the sum once overflowed to a negative total
// that passed the budget check, was waited on (until the context ended)
// and left the budget rewound for every later sleep.
func TestFakeHugeSleepCannotRewindTheBudget(t *testing.T) {
	var abort *message.AbortFeed
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxTotalSleep: 150 * time.Millisecond}},
		func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(sleepCall(1, 0.1))
			case *message.ResumeCall:
				return reply(sleepCall(2, 9.22337203685e9)) // valid: under int64 nanoseconds
			case *message.AbortFeed:
				abort = b
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	_, err := s.Run(ctx, "time.sleep(0.1); time.sleep(9.22337203685e9)")
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Type() != "TimeoutError" || !strings.HasPrefix(pe.Exception.Msg(), "sleep limit exceeded: ") {
		t.Fatalf("got %v, want TimeoutError: sleep limit exceeded", err)
	}
	if abort == nil {
		t.Fatal("the huge sleep was not refused with AbortFeed")
	}
	if got := s.Stamps().TotalSleep; got != 100*time.Millisecond {
		t.Errorf("TotalSleep %v, want 100ms (the refused sleep is not charged)", got)
	}
}

// A host function sees the call's source position at protocol 5, and the
// empty range at 0 when the child sends none.
func TestFakeCallPosition(t *testing.T) {
	pos := &message.SourceRange{Filename: "<python-input-0>", Start: 4, End: 9}
	send := pos
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Feed:
			e := funcCall("f", 0, 1)
			e.Body.(*message.FunctionCall).Position = send
			return reply(e)
		case *message.ResumeCall:
			return reply(completeInt(1))
		}
		return reply(violation("unexpected request"))
	})
	var got []message.SourceRange
	reg := NewRegistry().MustRegister("f", func(ctx context.Context, c *Call) (any, error) {
		got = append(got, c.Position)
		return 1, nil
	})
	for range 2 {
		if _, err := s.Run(bg, "x = f(1)", WithFunctions(reg)); err != nil {
			t.Fatal(err)
		}
		send = nil
	}
	if len(got) != 2 || got[0] != *pos || got[1] != (message.SourceRange{}) {
		t.Fatalf("positions %+v", got)
	}
}

// The protocol-5 feed backstop kills a worker that runs past
// max_feed_duration by more than the grace.
func TestFakeFeedBackstop(t *testing.T) {
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxFeedDuration: 30 * time.Millisecond}, WatchdogGrace: 50 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	t0 := time.Now()
	_, err := s.Feed(bg, "while True: pass")
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Watchdog || !te.Killed || te.Budget != 30*time.Millisecond || te.Limit != LimitFeed {
		t.Fatalf("got %#v", err)
	}
	if want := "monty session: worker ran past its max_feed_duration of 30ms and was killed"; err.Error() != want {
		t.Fatalf("text %q, want %q", err, want)
	}
	if d := time.Since(t0); d < 70*time.Millisecond {
		t.Fatalf("backstop fired after %v, before the budget plus the grace", d)
	}
}

// The feed clock is ratcheted within a feed (a worker cannot rewind the
// backstop) and restarts at the next Feed; the backstop of a resume is the
// feed budget left, or the whole turn budget when that ends first.
func TestFeedClockRatchet(t *testing.T) {
	stamps := []uint64{400_000, 100 /* rewound */, 500_000, 7}
	step := 0
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxFeedDuration: time.Second, MaxTurnDuration: 2 * time.Second}, WatchdogGrace: 100 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply {
			var e *message.ChildEvent
			if step < 2 {
				e = funcCall("f", uint32(step))
			} else {
				e = completeInt(1)
			}
			e.FeedExecutionMicros = stamps[min(step, len(stamps)-1)]
			step++
			return reply(e)
		})
	resume := func(id uint32) {
		t.Helper()
		if _, err := s.Do(bg, &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "f"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Do(bg, &message.Feed{Code: "f(); f()"}); err != nil {
		t.Fatal(err)
	}
	resume(0)
	if got := s.Stamps().FeedExecution; got != 400*time.Millisecond {
		t.Fatalf("feed clock %v after a rewound stamp, want 400ms", got)
	}
	if d, budget, limit, ok := s.backstop5(); !ok || d != 700*time.Millisecond || budget != time.Second || limit != LimitFeed {
		t.Fatalf("backstop %v for budget %v (%v), want 700ms for 1s", d, budget, ok)
	}
	resume(1)
	if got := s.Stamps().FeedExecution; got != 500*time.Millisecond {
		t.Fatalf("feed clock %v, want 500ms", got)
	}
	if _, err := s.Do(bg, &message.Feed{Code: "1"}); err != nil {
		t.Fatal(err)
	}
	if got := s.Stamps().FeedExecution; got != 7*time.Microsecond {
		t.Fatalf("feed clock %v after the next Feed, want 7µs", got)
	}
}

// The turn backstop names the turn limit when it ends first: its budget
// restarts at every request, the feed's does not.
func TestFakeTurnBackstopNamesTurn(t *testing.T) {
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxFeedDuration: 10 * time.Second,
		MaxTurnDuration: 30 * time.Millisecond}, WatchdogGrace: 50 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	_, err := s.Feed(bg, "while True: pass")
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Watchdog || te.Limit != LimitTurn || te.Budget != 30*time.Millisecond {
		t.Fatalf("got %#v", err)
	}
	if want := "monty session: worker ran past its max_turn_duration of 30ms and was killed"; err.Error() != want {
		t.Fatalf("text %q, want %q", err, want)
	}
	// At 4 and 2 the same watchdog names the cumulative limit.
	s4, _ := startFakeOpts(t, fakeOpts{version: 4}, Config{Limits: Limits{MaxDuration: 30 * time.Millisecond}, WatchdogGrace: 50 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	_, err = s4.Feed(bg, "while True: pass")
	if !errors.As(err, &te) || te.Limit != LimitDuration || !strings.Contains(err.Error(), "its max_duration of 30ms") {
		t.Fatalf("protocol 4: %v", err)
	}
}

// An asyncio.sleep under the system policy is charged its full delay when
// created and answered with a future the parent resolves once the delay has
// passed: sleeps gathered together overlap (one suspension each, plus the
// ResolveFutures), and the OS handler is never called.
//
// Overlapping sleeps of delay end about delay after the start; waited one
// after another they could not end before sleeps×delay. With six sleeps the
// bound between the two leaves five delays for a loaded machine to be late
// (867 ms was once seen for two overlapping 400 ms sleeps, and with two
// 1 s sleeps a second of lateness was all it took to fail).
func TestFakeAsyncSystemSleepFutures(t *testing.T) {
	const delay = time.Second
	const sleeps = 6
	var answers []message.ResultKind
	var resolved []message.FutureResult
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxTotalSleep: sleeps * delay}},
		func(req *message.ParentRequest) fakeReply {
			asleep := func(id uint32) *message.ChildEvent {
				return stamp(ev(&message.OsCall{CallID: id, Op: message.OpAsyncSystemSleep, Seconds: delay.Seconds()}), protocol.DefaultMaxSuspensions)
			}
			// pending lists the sleeps not yet resolved.
			pending := func() []uint32 {
				var ids []uint32
				for id := uint32(1); id <= sleeps; id++ {
					if !slices.ContainsFunc(resolved, func(r message.FutureResult) bool { return r.CallID == id }) {
						ids = append(ids, id)
					}
				}
				return ids
			}
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(asleep(1))
			case *message.ResumeCall:
				answers = append(answers, b.Result.Kind)
				if b.CallID < sleeps {
					return reply(asleep(b.CallID + 1))
				}
				return reply(stamp(ev(&message.ResolveFutures{PendingCallIDs: pending()}), protocol.DefaultMaxSuspensions))
			case *message.ResumeFutures:
				resolved = append(resolved, b.Results...)
				if ids := pending(); len(ids) > 0 {
					return reply(stamp(ev(&message.ResolveFutures{PendingCallIDs: ids}), protocol.DefaultMaxSuspensions))
				}
				return reply(completeInt(2))
			}
			return reply(violation("unexpected request"))
		})
	handled := 0
	code := "await asyncio.gather(" + strings.TrimSuffix(strings.Repeat("asyncio.sleep(1), ", sleeps), ", ") + ")"
	start := time.Now()
	_, err := s.Run(bg, code,
		WithOS(OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
			handled++
			return nil, ErrNotHandled
		})))
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != sleeps || slices.ContainsFunc(answers, func(k message.ResultKind) bool { return k != message.ResultFuture }) || handled != 0 {
		t.Fatalf("answers %v, OS handler calls %d", answers, handled)
	}
	if len(resolved) != sleeps {
		t.Fatalf("resolved %+v", resolved)
	}
	for _, r := range resolved {
		if r.Result.Kind != message.ResultReturn {
			t.Fatalf("future %d answered %v", r.CallID, r.Result.Kind)
		}
	}
	if took < delay || took >= sleeps*delay {
		t.Fatalf("%d gathered %v sleeps took %v: they must overlap", sleeps, delay, took)
	}
	if got := s.Stamps().TotalSleep; got != sleeps*delay {
		t.Fatalf("TotalSleep %v, want %v (all charged when created)", got, sleeps*delay)
	}
}

// A call_host time.sleep that the OS handler answers with a future is
// refused with upstream's RuntimeError at the call; an asyncio.sleep under
// call_host may be answered with one.
func TestFakeCallHostSleepFutureRefused(t *testing.T) {
	var got []*message.ExtResult
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(stamp(ev(&message.OsCall{CallID: 1, Op: message.OpSleep, Seconds: 5}), protocol.DefaultMaxSuspensions))
		case *message.ResumeCall:
			got = append(got, b.Result)
			if b.CallID == 1 {
				return reply(stamp(ev(&message.OsCall{CallID: 2, Op: message.OpAsyncSleep, Seconds: 5}), protocol.DefaultMaxSuspensions))
			}
			return reply(completeInt(1))
		}
		return reply(violation("unexpected request"))
	})
	_, err := s.Run(bg, "time.sleep(5); asyncio.sleep(5)", WithOS(OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
		return &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultFuture, Future: c.CallID}}, nil
	})))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != message.ResultError || got[0].Error.Type != "RuntimeError" ||
		got[0].Error.Msg() != "time.sleep cannot be answered with a future" || got[1].Kind != message.ResultFuture {
		t.Fatalf("answers %+v", got)
	}
}

// After a Load the sleep limit the worker echoes (the dump's) is the one
// charged against, even when the session configured none.
func TestFakeSleepLimitFromLoad(t *testing.T) {
	var abort *message.AbortFeed
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Load:
			e := stamp(ev(&message.Ok{}), protocol.DefaultMaxSuspensions)
			e.MaxTotalSleepMicros = value.Ptr(uint64(150_000))
			return reply(e)
		case *message.Feed:
			return reply(sleepCall(1, 0.2))
		case *message.AbortFeed:
			abort = b
			return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
		}
		return reply(violation("unexpected request"))
	})
	if _, err := s.Load(bg, []byte("dump")); err != nil {
		t.Fatal(err)
	}
	_, err := s.Run(bg, "time.sleep(0.2)")
	var pe *PythonError
	if !errors.As(err, &pe) || abort == nil || pe.Exception.Msg() != "sleep limit exceeded: 200ms > 150ms" {
		t.Fatalf("got %v (abort %v)", err, abort)
	}
}

// The suspension over the limit is named with its source position.
func TestFakeSuspensionLimitPosition(t *testing.T) {
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxSuspensions: 1}}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(funcCall("f", 1))
		case *message.ResumeCall:
			e := funcCall("f", 2)
			e.Body.(*message.FunctionCall).Position = &message.SourceRange{Filename: "<python-input-0>", Start: 6, End: 9}
			return reply(e)
		case *message.AbortFeed:
			return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
		}
		return reply(violation("unexpected request"))
	})
	reg := NewRegistry().MustRegister("f", func() int { return 1 })
	_, err := s.Run(bg, "f(); f()", WithFunctions(reg))
	var sl *SuspensionLimitError
	if !errors.As(err, &sl) || sl.Position != (message.SourceRange{Filename: "<python-input-0>", Start: 6, End: 9}) ||
		err.Error() != "suspension limit 1 exceeded at <python-input-0>:6-9" {
		t.Fatalf("got %v", err)
	}
}

// LoadWith carries the sleep a dumped session was charged into the
// restored one: its sleeps are charged on top and refused past the
// budget, where a plain Load counts from zero. A refused Load keeps the
// session's own total.
func TestFakeLoadWithTotalSleep(t *testing.T) {
	for _, c := range []struct {
		name    string
		carried time.Duration
		refused bool
	}{{"plain Load", 0, false}, {"carried 100ms", 100 * time.Millisecond, true}} {
		t.Run(c.name, func(t *testing.T) {
			var abort *message.AbortFeed
			refuse := true
			s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxTotalSleep: 150 * time.Millisecond}},
				func(req *message.ParentRequest) fakeReply {
					switch b := req.Body.(type) {
					case *message.Load:
						if refuse {
							refuse = false
							return reply(violation("bad dump"))
						}
						return reply(stamp(ev(&message.Ok{}), protocol.DefaultMaxSuspensions))
					case *message.Feed:
						return reply(sleepCall(1, 0.1))
					case *message.ResumeCall:
						return reply(completeInt(1))
					case *message.AbortFeed:
						abort = b
						return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
					}
					return reply(violation("unexpected request"))
				})
			if _, err := s.LoadWith(bg, []byte("dump"), LoadOptions{TotalSleep: 40 * time.Millisecond}); err == nil {
				t.Fatal("the refused Load succeeded")
			}
			if got := s.Stamps().TotalSleep; got != 0 {
				t.Fatalf("a refused Load set TotalSleep to %v", got)
			}
			if _, err := s.LoadWith(bg, []byte("dump"), LoadOptions{TotalSleep: c.carried}); err != nil {
				t.Fatal(err)
			}
			_, err := s.Run(bg, "time.sleep(0.1)")
			if !c.refused {
				if err != nil || s.Stamps().TotalSleep != 100*time.Millisecond {
					t.Fatalf("got %v, charged %v", err, s.Stamps().TotalSleep)
				}
				return
			}
			var pe *PythonError
			if !errors.As(err, &pe) || abort == nil || pe.Exception.Msg() != "sleep limit exceeded: 200ms > 150ms" {
				t.Fatalf("got %v (abort %v), want 200ms > 150ms", err, abort)
			}
		})
	}
}

// An exception the parent raises itself at a suspension (the sleep past
// the budget) and a host cancellation at one carry the suspension's
// source position.
func TestFakeAbortPositions(t *testing.T) {
	pos := &message.SourceRange{Filename: "<python-input-0>", Start: 3, End: 17}
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxTotalSleep: 50 * time.Millisecond}},
		func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				if strings.Contains(b.Code, "block") {
					e := funcCall("block", 1)
					e.Body.(*message.FunctionCall).Position = pos
					return reply(e)
				}
				e := sleepCall(1, 0.1)
				e.Body.(*message.OsCall).Position = pos
				return reply(e)
			case *message.AbortFeed:
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
	_, err := s.Run(bg, "x=1; time.sleep(0.1)")
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Position != *pos {
		t.Fatalf("got %v at %+v, want the sleep's position", err, pe)
	}
	ctx, cancel := context.WithCancel(bg)
	reg := NewRegistry().MustRegister("block", func(ctx context.Context) (int, error) {
		cancel()
		<-ctx.Done()
		return 0, ctx.Err()
	})
	_, err = s.Run(ctx, "x=1; block()", WithFunctions(reg))
	var ce *CanceledError
	if !errors.As(err, &ce) || ce.Position != *pos || !strings.Contains(err.Error(), "turn canceled at <python-input-0>:3-17: ") {
		t.Fatalf("got %v, want the cancellation at the call's position", err)
	}
	if _, err := s.Run(bg, "x=1; time.sleep(0.1)"); !errors.As(err, &pe) || pe.Position != *pos {
		t.Fatalf("the session did not survive: %v", err)
	}
}

// Persistence and Profile travel on Configure at 5 only; the session id a
// storing relay sends on its reply to Load (or Configure) is kept, and a
// later one replaces it.
func TestRemoteSessionIDKept(t *testing.T) {
	cfg := Config{Persistence: message.PersistenceStored, Profile: "gpu"}
	if c := cfg.configure(5); c.Persistence != message.PersistenceStored || c.Profile == nil || *c.Profile != "gpu" {
		t.Fatalf("protocol 5 Configure: persistence %v profile %v", c.Persistence, c.Profile)
	}
	for _, v := range []uint32{4, 2} {
		if c := cfg.configure(v); c.Persistence != 0 || c.Profile != nil {
			t.Fatalf("protocol %d Configure carries relay fields: %v %v", v, c.Persistence, c.Profile)
		}
	}
	ids := [][]byte{[]byte("stored-1"), nil, []byte("stored-2")}
	n := 0
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, cfg, func(req *message.ParentRequest) fakeReply {
		if _, ok := req.Body.(*message.Load); ok {
			e := stamp(ev(&message.Ok{}), protocol.DefaultMaxSuspensions)
			e.SessionID = ids[n]
			n++
			return reply(e)
		}
		if _, ok := req.Body.(*message.Reset); ok {
			return reply(ev(&message.Ok{}))
		}
		return reply(violation("unexpected request"))
	})
	if s.RemoteSessionID() != nil {
		t.Fatalf("an id before any was sent: %q", s.RemoteSessionID())
	}
	want := []string{"stored-1", "stored-1", "stored-2"}
	for i := range ids {
		if _, err := s.Load(bg, []byte("dump")); err != nil {
			t.Fatal(err)
		}
		if got := string(s.RemoteSessionID()); got != want[i] {
			t.Fatalf("after Load %d: id %q, want %q", i, got, want[i])
		}
		if err := s.Reset(bg); err != nil {
			t.Fatal(err)
		}
	}
	id := s.RemoteSessionID()
	id[0] = 'X'
	if string(s.RemoteSessionID()) != "stored-2" {
		t.Fatal("RemoteSessionID returned the session's own slice")
	}
}
