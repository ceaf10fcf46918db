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
