//go:build unix

package session

import (
	"context"
	"errors"
	"testing"

	"github.com/gomonty/monty/message"
)

// An external future made by one feed and awaited by a later one is not
// pending in the worker any more: the released worker then sends a
// ResolveFutures listing nothing, and answers the empty ResumeFutures by
// ending the feed with a RuntimeError (the asyncio scheduler stalled). That
// is sandbox code, not a broken worker: the feed fails, the session and its
// globals survive. The parent used to call the empty list a protocol
// violation and kill the worker.
func TestRealAwaitFutureOfEarlierFeedKeepsSession(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry().MustRegister("af", func(x int) int { return 2 * x }, Async())
	run(t, s, "g = 7\nx = af(3)", WithFunctions(reg))
	_, err := s.Run(context.Background(), "await x", WithFunctions(reg))
	pyErr(t, err, "RuntimeError")
	var n int
	if err := run(t, s, "g", WithFunctions(reg)).Decode(&n); err != nil || n != 7 {
		t.Fatalf("globals after the failed await: %d, %v", n, err)
	}
	// The low-level API sees the empty list and may answer it.
	run(t, s, "x2 = af(4)", WithFunctions(reg))
	ev, err := s.Feed(context.Background(), "await x2")
	if err != nil {
		t.Fatal(err)
	}
	rf, ok := ev.Body.(*message.ResolveFutures)
	if !ok || len(rf.PendingCallIDs) != 0 {
		t.Fatalf("got %+v", ev.Body)
	}
	ev, err = s.Resume(context.Background(), Resolve())
	if err != nil {
		t.Fatal(err)
	}
	if err := EventError(ev); err == nil || s.State() != StateIdle {
		t.Fatalf("got %+v, state %v", ev.Body, s.State())
	}
}

// A ResolveFutures listing nothing is answered at once, with nothing, even
// while a future of the run is still computing: the list names what the
// worker waits for, and waiting for a future it does not list would hold
// the run until that one finished, or for ever.
func TestFakeEmptyResolveFuturesIsAnsweredAtOnce(t *testing.T) {
	var answered []message.FutureResult
	gotAnswer := false
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			return reply(funcCall("slow", 0))
		case *message.ResumeCall:
			return reply(ev(&message.ResolveFutures{}))
		case *message.ResumeFutures:
			gotAnswer, answered = true, b.Results
			return reply(pyError("RuntimeError", "asyncio scheduler stalled"))
		case *message.AbortFeed:
			return reply(pyError(b.Exception.Type, b.Exception.Msg()))
		}
		return reply(violation("unexpected"))
	})
	release := make(chan struct{})
	defer close(release)
	reg := NewRegistry().MustRegister("slow", func(ctx context.Context) (int, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return 1, nil
	}, Async())
	// A Run that starts waiting for its futures cancels itself instead of
	// hanging: the test sees it as waited.
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	waited := false
	s.waitingHook = func() { waited = true; cancel() }
	_, err := s.Run(ctx, "x = slow()\nawait y", WithFunctions(reg))
	if waited {
		t.Fatalf("Run waited for a future the worker did not list: %v", err)
	}
	if !gotAnswer || len(answered) != 0 {
		t.Fatalf("answered %v (sent: %v)", answered, gotAnswer)
	}
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Type() != "RuntimeError" || !Survives(err) || s.State() != StateIdle {
		t.Fatalf("got %v, state %v", err, s.State())
	}
}
