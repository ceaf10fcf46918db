package session

import (
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// TestFakeLoadTakesTheDumpsFeedClock: a Load brings the restored feed's
// clock, lower or not, in place of the ratchet of the feed that ran before
// it in this session. The ratchet once kept the earlier feed's clock, so
// Stamps().FeedExecution lied and the feed backstop of the loaded feed
// fired a grace after the budget the earlier feed had left.
func TestFakeLoadTakesTheDumpsFeedClock(t *testing.T) {
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxFeedDuration: time.Second}, WatchdogGrace: 100 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply {
			switch req.Body.(type) {
			case *message.Feed:
				e := completeInt(1)
				e.FeedExecutionMicros = 900_000
				return reply(e)
			case *message.Load:
				e := funcCall("f", 3)
				e.FeedExecutionMicros = 200_000
				lim := uint64(1_000_000) // the dump's limit, echoed
				e.MaxFeedDurationMicros = &lim
				return reply(e)
			}
			return reply(violation("unexpected request"))
		})
	if _, err := s.Feed(bg, "long()"); err != nil {
		t.Fatal(err)
	}
	if got := s.Stamps().FeedExecution; got != 900*time.Millisecond {
		t.Fatalf("feed clock %v, want 900ms", got)
	}
	if _, err := s.Load(bg, []byte("dump")); err != nil {
		t.Fatal(err)
	}
	if got := s.Stamps().FeedExecution; got != 200*time.Millisecond {
		t.Fatalf("feed clock %v after the Load, want the dump's 200ms", got)
	}
	if d, budget, limit, ok := s.backstop5(); !ok || d != 900*time.Millisecond || budget != time.Second || limit != LimitFeed {
		t.Fatalf("backstop %v for budget %v (%v, %v), want 900ms for 1s", d, budget, limit, ok)
	}
}

// TestFakeLoadWithoutLimitsDropsEchoes: the reply to a Load echoes the
// dump's limits, and one it leaves out is a limit the dump does not have.
// The echoes of the session before the Load were kept instead, so the
// parent reported a feed limit the worker no longer enforced and its
// watchdog killed the loaded feed a grace after it.
func TestFakeLoadWithoutLimitsDropsEchoes(t *testing.T) {
	feedLim, sleepLim := uint64(1_000_000), uint64(500_000)
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxFeedDuration: time.Second, MaxTotalSleep: 500 * time.Millisecond}},
		func(req *message.ParentRequest) fakeReply {
			switch req.Body.(type) {
			case *message.Feed:
				e := completeInt(1)
				e.MaxFeedDurationMicros, e.MaxTotalSleepMicros = &feedLim, &sleepLim
				return reply(e)
			case *message.Load:
				return reply(funcCall("f", 3)) // a dump made with no limits
			}
			return reply(violation("unexpected request"))
		})
	if _, err := s.Feed(bg, "1"); err != nil {
		t.Fatal(err)
	}
	if st := s.Stamps(); st.MaxFeedDuration != time.Second || st.MaxTotalSleep != 500*time.Millisecond {
		t.Fatalf("echoed limits %+v", st)
	}
	if _, err := s.Load(bg, []byte("dump")); err != nil {
		t.Fatal(err)
	}
	if st := s.Stamps(); st.MaxFeedDuration != 0 || st.MaxTurnDuration != 0 || st.MaxTotalSleep != 0 {
		t.Fatalf("limits after loading a dump without any: %+v", st)
	}
	if d, _, limit, ok := s.backstop5(); ok {
		t.Fatalf("backstop %v (%v) for a loaded feed with no limit", d, limit)
	}
	// The Config's sleep budget stays a ceiling (Limits.MaxTotalSleep).
	if got := s.sleepLimit(); got != 500*time.Millisecond {
		t.Fatalf("sleep limit %v after the Load, want the Config's 500ms", got)
	}
}
