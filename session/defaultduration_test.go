//go:build unix

package session

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// configureSent returns the limits of the Configure the fake received
// first.
func configureSent(t *testing.T, f *fakeChild) *message.ResourceLimits {
	t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the worker")
	}
	c, ok := reqs[0].Body.(*message.Configure)
	if !ok {
		t.Fatalf("first request %T, want a Configure", reqs[0].Body)
	}
	return c.Limits
}

// durationState is what a session keeps of its duration limits: the
// cumulative budget and the protocol-5 backstop it arms a turn with.
type durationState struct {
	Budget    time.Duration
	HasBudget bool
	Backstop  time.Duration
	Limit     DurationLimit
	HasStop   bool
}

func durationsOf(s *Session) durationState {
	var d durationState
	d.Budget, d.HasBudget = s.durationBudget()
	d.Backstop, _, d.Limit, d.HasStop = s.backstop5()
	return d
}

// A zero Limits.MaxDuration is DefaultMaxDuration, on the wire and in the
// parent's watchdog, exactly as an explicit 60 s is: the cumulative
// max_duration at protocols 2 and 4, the per-feed limit plus the parent's
// cumulative budget at 5. NoDurationLimit sends no duration limit and
// keeps no budget. Before, a zero Limits sent none: untrusted code under
// context.Background() could compute forever.
func TestFakeZeroLimitsDefaultDuration(t *testing.T) {
	if DefaultMaxDuration != 60*time.Second {
		t.Fatalf("DefaultMaxDuration %v, want 60s", DefaultMaxDuration)
	}
	const us = uint64(60_000_000)
	ok7 := func(*message.ParentRequest) fakeReply { return reply(completeInt(7)) }
	for _, v := range []uint32{protocol.Version2, protocol.Version, protocol.Version5} {
		zero, fz := startFakeOpts(t, fakeOpts{version: v}, Config{}, ok7)
		explicit, fe := startFakeOpts(t, fakeOpts{version: v}, Config{Limits: Limits{MaxDuration: 60 * time.Second}}, ok7)
		lz, le := configureSent(t, fz), configureSent(t, fe)
		if !reflect.DeepEqual(lz, le) {
			t.Errorf("v%d: zero Limits sent %+v, an explicit 60 s %+v", v, lz, le)
		}
		if v >= protocol.Version5 {
			if lz == nil || lz.MaxDurationMicros != nil || lz.MaxFeedDurationMicros == nil || *lz.MaxFeedDurationMicros != us {
				t.Errorf("v%d: zero Limits sent %+v, want max_feed_duration_micros %d", v, lz, us)
			}
		} else if lz == nil || lz.MaxDurationMicros == nil || *lz.MaxDurationMicros != us {
			t.Errorf("v%d: zero Limits sent %+v, want max_duration_micros %d", v, lz, us)
		}
		dz, de := durationsOf(zero), durationsOf(explicit)
		if dz != de || !dz.HasBudget || dz.Budget != DefaultMaxDuration {
			t.Errorf("v%d: zero Limits keep %+v, an explicit 60 s %+v", v, dz, de)
		}
		if v >= protocol.Version5 && (!dz.HasStop || dz.Limit != LimitFeed) {
			t.Errorf("v%d: no per-feed backstop: %+v", v, dz)
		}

		none, fn := startFakeOpts(t, fakeOpts{version: v}, Config{Limits: Limits{MaxDuration: NoDurationLimit}}, ok7)
		if ln := configureSent(t, fn); ln == nil || ln.MaxDurationMicros != nil || ln.MaxFeedDurationMicros != nil {
			t.Errorf("v%d: NoDurationLimit sent %+v, want no duration limit", v, ln)
		}
		if dn := durationsOf(none); dn != (durationState{}) {
			t.Errorf("v%d: NoDurationLimit keeps %+v, want no budget", v, dn)
		}
		// The turns run the same under each.
		for _, s := range []*Session{zero, explicit, none} {
			if r, err := s.Run(bg, "7"); err != nil || r.Repr() != "7" {
				t.Errorf("v%d: run: %v %v", v, r, err)
			}
		}
	}
}

// A per-feed limit at 5 still overrides the default's translation, as it
// overrides an explicit MaxDuration's; the default's cumulative budget
// stays.
func TestFakeDefaultDurationUnderFeedLimit(t *testing.T) {
	ok7 := func(*message.ParentRequest) fakeReply { return reply(completeInt(7)) }
	s, f := startFakeOpts(t, fakeOpts{version: protocol.Version5}, Config{Limits: Limits{MaxFeedDuration: time.Second}}, ok7)
	if l := configureSent(t, f); l == nil || l.MaxFeedDurationMicros == nil || *l.MaxFeedDurationMicros != 1_000_000 || l.MaxDurationMicros != nil {
		t.Fatalf("sent %+v", l)
	}
	if d, ok := s.durationBudget(); !ok || d != DefaultMaxDuration {
		t.Fatalf("cumulative budget %v %v", d, ok)
	}
}

// A negative duration limit is refused before anything is sent: an
// *InvalidRequestError matching ErrInvalidLimits, from Validate and from
// Start alike. Before, it went as no limit at all.
func TestFakeNegativeDurationRefused(t *testing.T) {
	for _, lim := range []Limits{
		{MaxDuration: -time.Second},
		{MaxFeedDuration: -1},
		{MaxTurnDuration: -1},
		{MaxTotalSleep: -time.Millisecond},
	} {
		for _, v := range []uint32{protocol.Version2, protocol.Version, protocol.Version5} {
			cfg := Config{Limits: lim, Logger: quietLogger}
			var ir *InvalidRequestError
			if err := cfg.Validate(v); !errors.As(err, &ir) || !errors.Is(err, ErrInvalidLimits) {
				t.Errorf("v%d %+v: Validate: %v", v, lim, err)
			}
			fs := &fakeSpawner{bin: fakeBinary(t), version: v,
				handler: func(int) fakeHandler {
					return withConfigure(func(*message.ParentRequest) fakeReply { return reply(completeInt(7)) })
				}}
			s, err := Start(context.Background(), fs.launch(v), cfg)
			if err == nil {
				s.Close()
				t.Errorf("v%d %+v: Start succeeded", v, lim)
				continue
			}
			if !errors.As(err, &ir) || !errors.Is(err, ErrInvalidLimits) {
				t.Errorf("v%d %+v: Start: %v", v, lim, err)
			}
			if n := fs.last().count(message.KindConfigure); n != 0 {
				t.Errorf("v%d %+v: %d Configure sent", v, lim, n)
			}
		}
	}
}

// lowerDefaultDuration sets the default budget to d for one test.
func lowerDefaultDuration(t *testing.T, d time.Duration) {
	old := defaultMaxDuration
	defaultMaxDuration = d
	t.Cleanup(func() { defaultMaxDuration = old })
}

// With the real worker, a loop under a zero Limits ends with the worker's
// TimeoutError once the default budget is spent (lowered here so as not to
// wait a minute); under NoDurationLimit only the context stops it.
func TestRealZeroLimitsStopLoop(t *testing.T) {
	requireWorker(t)
	lowerDefaultDuration(t, 200*time.Millisecond) // registered first: restored after the sessions close
	s := realSession(t, Config{})
	_, err := s.Run(context.Background(), "while True: pass")
	pyErr(t, err, "TimeoutError")

	n := realSession(t, Config{Limits: Limits{MaxDuration: NoDurationLimit}})
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	_, err = n.Run(ctx, "while True: pass")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("NoDurationLimit: %v, want the context's deadline", err)
	}
}
