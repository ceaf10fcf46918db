package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// hangsOnAbort suspends every feed on block() and never answers an
// AbortFeed; reply, when set, answers the ResumeCall.
func hangsOnAbort(reply func() fakeReply) fakeHandler {
	return func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Feed:
			return fakeReply{events: []*message.ChildEvent{funcCall("block", 0)}, exit: -1}
		case *message.ResumeCall:
			if reply != nil {
				return reply()
			}
		}
		return fakeReply{hang: true}
	}
}

// A context that ends while a feed waits on the host aborts the feed; a
// worker that does not answer that AbortFeed within AbortTimeout is
// killed. The error is still the one the caller's context caused: a
// cancellation matches context.Canceled (and its cause), not
// context.DeadlineExceeded, which only the AbortTimeout had expired.
// Before, both came back as a *TimeoutError of the AbortTimeout.
func TestFakeUnansweredAbortKeepsTheCallersError(t *testing.T) {
	t.Run("cancel", func(t *testing.T) {
		s, f := startFake(t, Config{AbortTimeout: 50 * time.Millisecond}, hangsOnAbort(nil))
		stop := errors.New("user hit stop")
		ctx, cancel := context.WithCancelCause(bg)
		defer cancel(nil)
		reg := NewRegistry().MustRegister("block", func(fctx context.Context) (int, error) {
			cancel(stop)
			<-fctx.Done()
			return 0, fctx.Err()
		})
		_, err := s.Run(ctx, "block()", WithFunctions(reg))
		var ce *CanceledError
		if !errors.As(err, &ce) || !ce.Killed || !errors.Is(err, context.Canceled) || !errors.Is(err, stop) ||
			errors.Is(err, context.DeadlineExceeded) || Survives(err) {
			t.Fatalf("Run = %v (%T), want a killed *CanceledError matching context.Canceled and its cause only", err, err)
		}
		if f.count(message.KindAbortFeed) != 1 {
			t.Fatalf("%d AbortFeeds sent", f.count(message.KindAbortFeed))
		}
		if c := s.Cause(); c != err {
			t.Fatalf("Cause() = %v, want the error Run returned", c)
		}
		if _, err := s.Run(bg, "1"); !errors.Is(err, ErrClosed) || !errors.Is(err, context.Canceled) {
			t.Fatalf("later run: %v", err)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		s, _ := startFake(t, Config{AbortTimeout: 50 * time.Millisecond}, hangsOnAbort(nil))
		late := errors.New("request deadline")
		ctx, cancel := context.WithTimeoutCause(bg, 20*time.Millisecond, late)
		defer cancel()
		reg := NewRegistry().MustRegister("block", func(fctx context.Context) (int, error) {
			<-fctx.Done()
			return 0, fctx.Err()
		})
		_, err := s.Run(ctx, "block()", WithFunctions(reg))
		var te *TimeoutError
		if !errors.As(err, &te) || !te.Killed || te.Watchdog || !errors.Is(err, context.DeadlineExceeded) ||
			!errors.Is(err, late) || errors.Is(err, context.Canceled) || Survives(err) {
			t.Fatalf("Run = %v (%T), want a killed *TimeoutError of the caller's deadline", err, err)
		}
	})
}

// A reply Run cannot send, or one the worker rejects, is followed by an
// AbortFeed too. A worker that does not answer it within AbortTimeout is
// killed with a *TimeoutError (ErrTimeout), but no context of the
// caller's ended: the error must not match context.DeadlineExceeded or
// context.Canceled, as a caller's deadline would. Before, it matched
// context.DeadlineExceeded and could not be told from one.
func TestFakeUnansweredAbortOfARefusedReplyIsNoContextError(t *testing.T) {
	for _, c := range []struct {
		name  string
		frame int
		fn    any
		reply func() fakeReply
	}{
		// The frame cap is below even the ValueError that replaces the result.
		{"unsendable", 128, func() string { return strings.Repeat("x", 4096) }, nil},
		{"rejected", 0, func() int { return 1 }, func() fakeReply { return reply(violation("not now")) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, f := startFakeOpts(t, fakeOpts{maxFrameLen: c.frame}, Config{AbortTimeout: 50 * time.Millisecond},
				hangsOnAbort(c.reply))
			reg := NewRegistry().MustRegister("block", c.fn)
			_, err := s.Run(bg, "block()", WithFunctions(reg))
			var te *TimeoutError
			if !errors.As(err, &te) || !te.Killed || !errors.Is(err, ErrTimeout) || Survives(err) {
				t.Fatalf("Run = %v (%T), want a killed *TimeoutError", err, err)
			}
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				t.Fatalf("Run = %v matches a context error; no context ended", err)
			}
			if !strings.Contains(err.Error(), "AbortFeed") {
				t.Fatalf("Run = %q does not say what timed out", err)
			}
			if f.count(message.KindAbortFeed) != 1 {
				t.Fatalf("%d AbortFeeds sent", f.count(message.KindAbortFeed))
			}
		})
	}
}
