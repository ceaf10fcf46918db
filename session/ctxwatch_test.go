package session

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
)

// One context over many turns: its watch is registered once and still
// kills the turn that is running when it is canceled.
func TestFakeContextWatchKeptAcrossTurns(t *testing.T) {
	var feeds atomic.Int32
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	s, _ := startFake(t, Config{}, func(r *message.ParentRequest) fakeReply {
		if r.Body.RequestKind() == message.KindFeed && feeds.Add(1) == 4 {
			// Canceled once the turn is under way, not on a timer: a
			// context already done when the turn begins is refused
			// before anything is sent (notDone), with no kill.
			cancel()
			return fakeReply{hang: true}
		}
		return reply(completeInt(1))
	})
	for range 3 {
		if _, err := s.Feed(ctx, "1"); err != nil {
			t.Fatal(err)
		}
	}
	if s.watch.stop == nil || s.watch.done != ctx.Done() {
		t.Fatal("no watch registered for the turns' context")
	}
	_, err := s.Feed(ctx, "while True: pass")
	var ce *CanceledError
	if !errors.As(err, &ce) || !ce.Killed || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// A context canceled between turns, or one an earlier turn used, never
// kills a later turn; a turn that comes with a context already done is
// refused before anything is sent and the session survives.
func TestFakeContextWatchOfEarlierTurnsIsInert(t *testing.T) {
	release := make(chan struct{})
	var feeds atomic.Int32
	s, f := startFake(t, Config{}, func(r *message.ParentRequest) fakeReply {
		if r.Body.RequestKind() == message.KindFeed && feeds.Add(1) == 2 {
			<-release // the second feed answers only when the test says so
		}
		return reply(completeInt(1))
	})
	a, cancelA := context.WithCancel(bg)
	if _, err := s.Feed(a, "1"); err != nil {
		t.Fatal(err)
	}
	b, cancelB := context.WithCancel(bg)
	defer cancelB()
	go func() {
		// A is canceled while the turn under B runs: it must go on.
		time.Sleep(20 * time.Millisecond)
		cancelA()
		time.Sleep(20 * time.Millisecond)
		close(release)
	}()
	if _, err := s.Feed(b, "1"); err != nil {
		t.Fatalf("the turn under B: %v", err)
	}
	// B canceled between turns: nothing happens to the idle session.
	cancelB()
	time.Sleep(10 * time.Millisecond)
	if s.State() != StateIdle {
		t.Fatalf("state %v after a context ended between turns", s.State())
	}
	n := f.count(message.KindFeed)
	if _, err := s.Feed(b, "1"); !errors.Is(err, context.Canceled) || !Survives(err) {
		t.Fatalf("a feed under a done context: %v", err)
	}
	if f.count(message.KindFeed) != n {
		t.Fatal("a feed under a done context was sent")
	}
	if _, err := s.Feed(bg, "1"); err != nil {
		t.Fatalf("after the done contexts: %v", err)
	}
	if s.watch.done != nil || s.watch.stop != nil {
		t.Fatal("a turn without a cancelable context kept the old watch")
	}
}

// A turn under the same cancelable context allocates no more than one
// under a context that is never canceled: the watch is not registered
// per turn. Close retires it.
func TestFakeContextWatchAllocatesNothingPerTurn(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	feed := func(ctx context.Context) func() {
		return func() {
			if _, err := s.Feed(ctx, "1"); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed(ctx)()
	with := testing.AllocsPerRun(50, feed(ctx))
	feed(bg)()
	without := testing.AllocsPerRun(50, feed(bg))
	if with > without {
		t.Errorf("a feed allocates %.1f times under a cancelable context, %.1f under Background", with, without)
	}
	feed(ctx)()
	s.Close()
	if s.watch.done != nil || s.watch.stop != nil {
		t.Fatal("Close kept the watch")
	}
}

// uncomparableCtx is a context of a type == cannot compare.
type uncomparableCtx struct {
	context.Context
	tags []string
}

type ctxKey struct{}

// Contexts are told apart by their Done channel: one of an uncomparable
// type works (== would panic), and contexts derived by value from one
// context (a run's span context, say) share one registration.
func TestFakeContextWatchByDone(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	base, cancel := context.WithCancel(bg)
	defer cancel()
	watch := func() (uint64, bool) {
		s.watch.mu.Lock()
		defer s.watch.mu.Unlock()
		return s.watch.gen, s.watch.done == base.Done()
	}
	if _, err := s.Feed(base, "1"); err != nil {
		t.Fatal(err)
	}
	first, _ := watch()
	for i := range 3 {
		if _, err := s.Feed(uncomparableCtx{Context: base, tags: []string{"a"}}, "1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Feed(context.WithValue(base, ctxKey{}, i), "1"); err != nil {
			t.Fatal(err)
		}
	}
	if gen, onBase := watch(); gen != first || !onBase {
		t.Fatalf("watch generation %d after %d, watching base %v: want one registration for all seven turns", gen, first, onBase)
	}
}
