package session

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// The policy's per-call cap (SleepMode.MaxMicros) bounds every system
// sleep the parent charges and waits out, whatever delay the worker asks
// for: an honest worker caps the delay itself, and one that does not must
// not make the parent wait (or charge) past the cap. Before, the parent
// took the worker's delay as it came: a 1 s sleep under a 20 ms cap was
// charged 1 s and refused against a 100 ms budget, and without a budget a
// worker could hold a Run for as long as its context allowed.
func TestFakeSystemSleepCappedByPolicy(t *testing.T) {
	capUs := uint64(20_000) // 20 ms
	cfg := Config{
		Limits:   Limits{MaxTotalSleep: 100 * time.Millisecond},
		OsPolicy: &message.OsPolicy{Sleep: &message.SleepMode{Kind: message.SleepSystem, MaxMicros: &capUs}},
	}
	t.Run("Run", func(t *testing.T) {
		s, _ := startFakeOpts(t, fakeOpts{version: 5}, cfg, func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(sleepCall(1, 1))
			case *message.ResumeCall:
				if b.CallID == 1 {
					return reply(sleepCall(2, 1))
				}
				return reply(completeInt(1))
			case *message.AbortFeed:
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		if _, err := s.Run(ctx, "time.sleep(1); time.sleep(1)"); err != nil {
			t.Fatalf("Run: %v (two sleeps capped at 20ms fit a 100ms budget)", err)
		}
		if got := s.Stamps().TotalSleep; got != 40*time.Millisecond {
			t.Errorf("TotalSleep %v, want 40ms (two sleeps at the 20ms cap)", got)
		}
	})
	t.Run("Feed", func(t *testing.T) {
		s, _ := startFakeOpts(t, fakeOpts{version: 5}, cfg, func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(sleepCall(1, 1))
			case *message.AbortFeed:
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
		e, err := s.Feed(bg, "time.sleep(1)")
		if err != nil {
			t.Fatal(err)
		}
		oc, ok := e.Body.(*message.OsCall)
		if !ok {
			t.Fatalf("Feed returned %v, want the system sleep", e.Body.EventKind())
		}
		if got := message.SleepDuration(oc.Seconds); got != 20*time.Millisecond {
			t.Errorf("the handed sleep is %v, want the 20ms cap", got)
		}
		if got := s.Stamps().TotalSleep; got != 20*time.Millisecond {
			t.Errorf("TotalSleep %v, want 20ms", got)
		}
	})
}

// Close releases a Run that waits out a system sleep, as it releases one
// waiting on its host functions: before, the Run slept on for the whole
// delay (up to the policy's cap, here an hour) after Close had ended the
// session.
func TestCloseEndsARunWaitingOutASystemSleep(t *testing.T) {
	hour := uint64(time.Hour / time.Microsecond)
	fed := make(chan struct{})
	s, _ := startFakeOpts(t, fakeOpts{version: 5},
		Config{OsPolicy: &message.OsPolicy{Sleep: &message.SleepMode{Kind: message.SleepSystem, MaxMicros: &hour}}},
		func(req *message.ParentRequest) fakeReply {
			if _, ok := req.Body.(*message.Feed); ok {
				close(fed)
				return reply(sleepCall(1, 3600))
			}
			return reply(violation("unexpected request"))
		})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(bg, "time.sleep(3600)")
		errc <- err
	}()
	<-fed
	// Suspended: the turn that brought the sleep has ended, and the Run
	// is on its way to waiting the sleep out (or already waits).
	for s.State() != StateSuspended {
		runtime.Gosched()
	}
	s.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Run: %v, want an error matching ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still waits out its hour-long sleep after Close")
	}
}

// The same for an asyncio.sleep: its future completes only when the delay
// has passed, and Close stops its timer, so a Run waiting for it must
// stop waiting too (before, it waited for a future that would never
// complete until its context ended, here never).
func TestCloseEndsARunAwaitingAnAsyncSystemSleep(t *testing.T) {
	hour := uint64(time.Hour / time.Microsecond)
	s, _ := startFakeOpts(t, fakeOpts{version: 5},
		Config{OsPolicy: &message.OsPolicy{Sleep: &message.SleepMode{Kind: message.SleepSystem, MaxMicros: &hour}}},
		func(req *message.ParentRequest) fakeReply {
			switch req.Body.(type) {
			case *message.Feed:
				return reply(stamp(ev(&message.OsCall{CallID: 1, Op: message.OpAsyncSystemSleep, Seconds: 3600}), protocol.DefaultMaxSuspensions))
			case *message.ResumeCall:
				return reply(stamp(ev(&message.ResolveFutures{PendingCallIDs: []uint32{1}}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
	waiting := make(chan struct{})
	var once sync.Once
	s.waitingHook = func() { once.Do(func() { close(waiting) }) }
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(bg, "await asyncio.sleep(3600)")
		errc <- err
	}()
	<-waiting
	s.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Run: %v, want an error matching ErrClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still waits for its hour-long asyncio.sleep after Close")
	}
}
