package session_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
)

// An endpoint that answers every re-sent request with another ShutdownDump
// (every replica draining, or a hostile one) cannot keep a turn resuming
// for ever: the turn gives up after 8 resumes with the ShutdownError. Before, each resume re-sent the request one stack frame
// deeper, for as long as the endpoint kept draining and the context
// allowed (here: until the endpoint gave in after 200 feeds).
func TestRemoteResumeLoopIsBounded(t *testing.T) {
	const giveIn = 200
	var feeds atomic.Int32
	sc := newScripted(t, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure, *message.Load:
			return []message.Event{&message.Ok{}}
		case *message.Feed:
			if feeds.Add(1) > giveIn {
				return []message.Event{&message.Error{Exception: message.NewException("ValueError", "gave in")}}
			}
		}
		dump := []byte("opaque dump")
		return []message.Event{&message.ShutdownDump{Dump: &dump}}
	})
	// Take the connection ends the endpoint reports, many more than its
	// channel holds.
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for {
			select {
			case <-sc.closed:
			case <-stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-drained })
	s := startRemote(t, session.RemoteLauncher{URL: sc.url}, session.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := s.Run(ctx, "1")
	if !errors.Is(err, session.ErrShutdown) {
		t.Fatalf("Run: %v after %d feeds, want an error matching ErrShutdown", err, feeds.Load())
	}
	if n := feeds.Load(); n != 9 {
		t.Fatalf("the turn was sent %d times, want 9 (the first and 8 resumes)", n)
	}
	if n := s.Resumed(); n != 8 {
		t.Fatalf("Resumed() = %d, want 8", n)
	}
	if s.State() != session.StateClosed {
		t.Fatalf("state %v, want closed", s.State())
	}
}
