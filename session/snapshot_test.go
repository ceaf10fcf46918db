package session

import (
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// At protocol 5 too, the watchdog follows a loaded dump's duration limits
// until the next Configure, as Load's doc says and as it does for
// max_duration at 2 and 4: it backstops the limits the worker enforces,
// looser or absent, not the lower of those and the Config's. Before, a
// session configured with a tighter feed limit than a dump it loaded had
// its watchdog kill a worker still inside the dump's limit, reporting that
// the worker ran past a limit it did not have. The sleep budget, which
// the parent enforces itself, stays the lower of the two.
func TestFakeV5LoadedDumpLimitsMoveTheBackstop(t *testing.T) {
	us := func(d time.Duration) *uint64 { return value.Ptr(uint64(d / time.Microsecond)) }
	cfg := Config{Limits: Limits{MaxFeedDuration: time.Second, MaxTurnDuration: 2 * time.Second,
		MaxTotalSleep: 10 * time.Millisecond}, WatchdogGrace: 100 * time.Millisecond}
	for _, c := range []struct {
		name              string
		feed, turn, sleep time.Duration // the dump's; 0 for none
	}{
		{"looser", 10 * time.Second, 20 * time.Second, 5 * time.Second},
		{"none", 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var abort *message.AbortFeed
			s, _ := startFakeOpts(t, fakeOpts{version: 5}, cfg, func(req *message.ParentRequest) fakeReply {
				switch b := req.Body.(type) {
				case *message.Load:
					e := stamp(ev(&message.Ok{}), protocol.DefaultMaxSuspensions)
					if c.feed > 0 {
						e.MaxFeedDurationMicros, e.MaxTurnDurationMicros, e.MaxTotalSleepMicros = us(c.feed), us(c.turn), us(c.sleep)
					}
					return reply(e)
				case *message.Feed:
					return reply(sleepCall(1, 0.02))
				case *message.AbortFeed:
					abort = b
					return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
				case *message.Reset:
					return reply(ev(&message.Ok{}))
				}
				return reply(violation("unexpected request"))
			})
			if _, err := s.Load(bg, []byte("dump")); err != nil {
				t.Fatal(err)
			}
			_, budget, limit, ok := s.backstop5()
			switch {
			case c.feed == 0 && ok:
				t.Fatalf("backstop for %v (%v) after loading a dump without limits", budget, limit)
			case c.feed > 0 && (!ok || budget != c.feed || limit != LimitFeed):
				t.Fatalf("backstop for %v (%v, %v), want the dump's feed limit %v", budget, limit, ok, c.feed)
			}
			// The sleep budget keeps the Config's 10 ms as a ceiling.
			var pe *PythonError
			if _, err := s.Run(bg, "time.sleep(0.02)"); !errors.As(err, &pe) || abort == nil ||
				pe.Exception.Msg() != "sleep limit exceeded: 20ms > 10ms" {
				t.Fatalf("sleep over the Config's budget after Load: %v (abort %v)", err, abort)
			}
			// Reset configures the Config's limits again.
			if err := s.Reset(bg); err != nil {
				t.Fatal(err)
			}
			if _, budget, limit, ok := s.backstop5(); !ok || budget != time.Second || limit != LimitFeed {
				t.Fatalf("backstop for %v (%v, %v) after Reset, want the Config's 1s", budget, limit, ok)
			}
		})
	}
}
