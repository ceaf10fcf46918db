package session_test

import (
	"context"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
)

// A session drained while it waits on futures resumes when the new
// replica re-announces the same pending futures in another order: the
// list is a set (its order is not stable, behaviour-v2 §9), and a resume
// that compared it in order ended a session whose restored worker was
// exactly where the old one was.
func TestRemoteResumeTakesPendingFuturesAsASet(t *testing.T) {
	calls := 0
	a := newScripted(t, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure:
			return []message.Event{&message.Ok{}}
		case *message.Feed:
			return []message.Event{&message.FunctionCall{FunctionName: "f", CallID: 1}}
		case *message.ResumeCall:
			calls++
			if calls == 1 {
				return []message.Event{&message.FunctionCall{FunctionName: "f", CallID: 2}}
			}
			return []message.Event{&message.ResolveFutures{PendingCallIDs: []uint32{1, 2}}}
		}
		dump := []byte("opaque signed dump")
		return []message.Event{&message.ShutdownDump{Dump: &dump}}
	})
	b := newScripted(t, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure:
			return []message.Event{&message.Ok{}}
		case *message.Load:
			return []message.Event{&message.ResolveFutures{PendingCallIDs: []uint32{2, 1}}}
		case *message.ResumeFutures:
			g := value.Graph{}
			return []message.Event{&message.Complete{Value: g.Add(value.Int(42)), Values: g}}
		}
		return nil
	})
	s := startRemote(t, session.RemoteLauncher{URL: a.url, Pick: func() string { return b.url }}, session.Config{})
	ctx := context.Background()
	ev, err := s.Feed(ctx, "await gather(f(), f())")
	for err == nil && ev.Body.EventKind() == message.KindFunctionCall {
		ev, err = s.Resume(ctx, session.AsFuture())
	}
	if err != nil || ev.Body.EventKind() != message.KindResolveFutures {
		t.Fatalf("want ResolveFutures, got %v %v", ev, err)
	}
	ev, err = s.Resume(ctx, session.Resolve(session.FutureOutcome{CallID: 1, Value: 1}, session.FutureOutcome{CallID: 2, Value: 2}))
	if err != nil || ev.Body.EventKind() != message.KindComplete || s.Resumed() != 1 {
		t.Fatalf("got %v %v (resumes %d)", ev, err, s.Resumed())
	}
}
