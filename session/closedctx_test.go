package session

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
)

// A call on a closed session fails with an error matching ErrClosed that
// does not survive, whatever its context: one already done too. Before,
// a done context was checked first and the call failed with a
// *CanceledError (or *TimeoutError) whose SessionSurvives reported true
// for a session that was gone.
func TestFakeClosedSessionWithDoneContextIsClosed(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	s.Close()
	canceled, cancel := context.WithCancel(bg)
	cancel()
	late, cancel2 := context.WithTimeout(bg, 0)
	defer cancel2()
	for _, ctx := range []context.Context{canceled, late} {
		calls := map[string]func() error{
			"Run":   func() error { _, err := s.Run(ctx, "1"); return err },
			"Feed":  func() error { _, err := s.Feed(ctx, "1"); return err },
			"Do":    func() error { _, err := s.Do(ctx, &message.Feed{Code: "1"}); return err },
			"Dump":  func() error { _, err := s.Dump(ctx); return err },
			"Reset": func() error { return s.Reset(ctx) },
		}
		for name, call := range calls {
			err := call()
			if !errors.Is(err, ErrClosed) || Survives(err) {
				t.Errorf("%s on a closed session under a done context: %v (survives %v), want ErrClosed",
					name, err, Survives(err))
			}
		}
	}
}

// A Run whose session is closed while a host function runs, and whose
// context then ends, reports the closed session, not a cancellation the
// session would survive.
func TestFakeCloseDuringHostCallIsClosedEvenAfterCancel(t *testing.T) {
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		if _, ok := req.Body.(*message.Feed); ok {
			return reply(funcCall("stop", 0))
		}
		return reply(completeInt(1))
	})
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	reg := NewRegistry().MustRegister("stop", func() int {
		s.Close()
		cancel()
		return 1
	})
	_, err := s.Run(ctx, "stop()", WithFunctions(reg))
	if !errors.Is(err, ErrClosed) || Survives(err) {
		t.Fatalf("Run = %v (%T, survives %v), want ErrClosed", err, err, Survives(err))
	}
}

// The error of a call on a session its worker's loss closed names the
// package once, then the cause: "monty session: closed: worker killed:
// context deadline exceeded". Before, the cause's own prefix repeated it
// ("monty session: closed: monty session: worker killed: ...").
func TestFakeClosedErrorTextNamesThePackageOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		cancel() // once the feed is under way
		return fakeReply{hang: true}
	})
	if _, err := s.Feed(ctx, "while True: pass"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Feed: %v", err)
	}
	_, err := s.Run(bg, "1")
	const want = "monty session: closed: worker killed: context canceled"
	if !errors.Is(err, ErrClosed) || err.Error() != want {
		t.Fatalf("later run: %q, want %q", err, want)
	}
}

// A request refused because its context's deadline had already passed
// says that it was not sent; before, it said "feed aborted" for a Dump
// or Reset that never left the parent.
func TestFakeUnsentRequestUnderPastDeadlineSaysSo(t *testing.T) {
	s, f := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	late, cancel := context.WithTimeout(bg, 0)
	defer cancel()
	_, err := s.Dump(late)
	const want = "monty session: request not sent: context deadline exceeded"
	if !errors.Is(err, context.DeadlineExceeded) || !Survives(err) || err.Error() != want {
		t.Fatalf("Dump = %q (survives %v), want %q", err, Survives(err), want)
	}
	if f.count(message.KindDump) != 0 {
		t.Fatal("the Dump was sent")
	}
}
