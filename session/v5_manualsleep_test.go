package session

import (
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// TestFakeManualSleepBudget: the turn methods (Feed, Resume) hand a
// protocol-5 system sleep to their caller to wait out, and charge it to
// the sleep budget first, as Run does: the sleep that would pass
// MaxTotalSleep is refused with AbortFeed and upstream's text, and its
// Error is what the caller gets. They once returned every sleep uncharged,
// so Limits.MaxTotalSleep bound nothing outside Run.
func TestFakeManualSleepBudget(t *testing.T) {
	var abort *message.AbortFeed
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{Limits: Limits{MaxTotalSleep: 150 * time.Millisecond}},
		func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(sleepCall(1, 0.1))
			case *message.ResumeCall:
				if b.CallID == 1 {
					return reply(sleepCall(2, 0.04))
				}
				return reply(sleepCall(3, 0.525))
			case *message.AbortFeed:
				abort = b
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		})
	e, err := s.Feed(bg, "time.sleep(0.1); time.sleep(0.04); time.sleep(0.525)")
	if oc, ok := e.Body.(*message.OsCall); err != nil || !ok || oc.CallID != 1 {
		t.Fatalf("Feed: %#v, %v", e, err)
	}
	if got := s.Stamps().TotalSleep; got != 100*time.Millisecond {
		t.Fatalf("TotalSleep %v after the first sleep, want 100ms", got)
	}
	e, err = s.Resume(bg, Return(nil))
	if oc, ok := e.Body.(*message.OsCall); err != nil || !ok || oc.CallID != 2 {
		t.Fatalf("Resume: %#v, %v", e, err)
	}
	e, err = s.Resume(bg, Return(nil))
	if err != nil {
		t.Fatal(err)
	}
	pe, ok := e.Body.(*message.Error)
	if !ok || pe.Exception.Type != "TimeoutError" || pe.Exception.Msg() != "sleep limit exceeded: 665ms > 150ms" {
		t.Fatalf("got %#v, want Error TimeoutError: sleep limit exceeded: 665ms > 150ms", e.Body)
	}
	if abort == nil {
		t.Fatal("no AbortFeed was sent")
	}
	if got := s.Stamps().TotalSleep; got != 140*time.Millisecond {
		t.Fatalf("TotalSleep %v, want 140ms (the refused sleep is not charged)", got)
	}
	if st := s.State(); st != StateIdle {
		t.Fatalf("state %v, want idle", st)
	}
}
