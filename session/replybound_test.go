//go:build unix

package session

import (
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// within runs call and returns its error, failing the test when it is
// still waiting after hangBound: before turns that run no code had a
// bound of their own, a silent worker held them for ever under a context
// that never ends. The session is closed then, which ends the call.
func within(t *testing.T, s *Session, what string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangBound):
		s.Close()
		<-done
		t.Fatalf("%s was still waiting for the silent worker after %v", what, hangBound)
		return nil
	}
}

// A worker that never answers a Dump, a Load or a Reset (turns that run
// no code, which the max_duration watchdog does not cover) is killed at
// the reply bound: the duration budget in force or Config.StartTimeout,
// whichever is longer, plus the watchdog grace. The call ends with the
// watchdog's *TimeoutError (Limit LimitReply) and the session is closed.
func TestFakeSilentNonDriveTurnsEndAtTheReplyBound(t *testing.T) {
	const (
		maxDur = 30 * time.Millisecond
		start  = 300 * time.Millisecond
		grace  = 50 * time.Millisecond
	)
	for name, call := range map[string]func(*Session) error{
		"dump":  func(s *Session) error { _, err := s.Dump(bg); return err },
		"load":  func(s *Session) error { _, err := s.Load(bg, []byte("dump")); return err },
		"reset": func(s *Session) error { return s.Reset(bg) },
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := startFake(t, Config{Limits: Limits{MaxDuration: maxDur}, WatchdogGrace: grace, StartTimeout: start},
				func(*message.ParentRequest) fakeReply { return fakeReply{hang: true} })
			t0 := time.Now()
			err := within(t, s, name, func() error { return call(s) })
			d := time.Since(t0)
			var te *TimeoutError
			if !errors.As(err, &te) || !te.Watchdog || !te.Killed || te.Limit != LimitReply || te.Budget != start+grace ||
				!errors.Is(err, ErrTimeout) {
				t.Fatalf("%s = %#v, want the watchdog's *TimeoutError for the reply bound", name, err)
			}
			if d < start+grace {
				t.Fatalf("%s ended after %v, before the reply bound of %v", name, d, start+grace)
			}
			if s.State() != StateClosed || Survives(err) {
				t.Fatalf("state %v after the reply bound", s.State())
			}
		})
	}
}

// The reply bound follows the duration budget when that is the longer:
// a healthy worker dumping a large session within it is never killed.
// Here the worker answers a Dump after the StartTimeout and the grace
// have passed, well within its max_duration.
func TestFakeReplyBoundFollowsTheDurationBudget(t *testing.T) {
	const start = 50 * time.Millisecond
	s, _ := startFake(t, Config{Limits: Limits{MaxDuration: time.Minute}, StartTimeout: start, WatchdogGrace: 10 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply {
			time.Sleep(2 * start)
			return reply(ev(&message.DumpResult{State: []byte("state")}))
		})
	if err := within(t, s, "dump", func() error { _, err := s.Dump(bg); return err }); err != nil {
		t.Fatalf("a dump answered within the duration budget failed: %v", err)
	}
}
