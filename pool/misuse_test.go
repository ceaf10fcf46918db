package pool

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
)

// A checkout that shuts its worker down through Do (Session has no
// Shutdown, but Do sends any request) gives back a session that is not
// reusable: Close destroys the worker instead of asking the exiting
// process for a Reset and counting a crash.
func TestDoShutdownIsDestroyNotCrash(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx := context.Background()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do(ctx, &message.Shutdown{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reusable(); err == nil {
		t.Error("Reusable says nil after the worker was shut down")
	}
	s.Close()
	if n := rec.count(EventDestroy, DestroyRequested); n != 1 {
		t.Errorf("%d destroy events, want 1", n)
	}
	if st := p.Stat(); len(st.Crashes) != 0 {
		t.Errorf("crashes %v, want none", st.Crashes)
	}
	// The pool replaces the worker and serves the next checkout.
	if _, err := p.Run(ctx, session.Config{}, "1"); err != nil {
		t.Fatal(err)
	}
}

// A checkout whose context ends with a cause (errgroup.WithContext's, the
// first failure) matches the context's error as ExhaustedError's doc says,
// as well as the cause. Before, its chain held only the cause, so
// errors.Is(err, context.Canceled) was false.
func TestExhaustedMatchesContextErrorWithCause(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	held, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	boom := errors.New("sibling failed")
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(boom)
	late, cancel2 := context.WithDeadlineCause(context.Background(), time.Unix(1, 0), boom)
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {late, context.DeadlineExceeded}} {
		_, err := p.Checkout(c.ctx, session.Config{})
		if !errors.Is(err, ErrExhausted) || !errors.Is(err, c.want) || !errors.Is(err, boom) {
			t.Errorf("got %v, want ErrExhausted, %v and the cause", err, c.want)
		}
	}
}

// A Config whose Configure cannot be encoded (a script name that is not
// UTF-8, stubs that are not) is the caller's mistake, found before
// anything reaches the worker: the checkout fails with the typed error and
// the pool keeps its worker. Before, every such checkout destroyed a
// healthy worker and started another.
func TestUnencodableConfigKeepsTheWorker(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx := context.Background()
	bad := []session.Config{
		{ScriptName: "bad\xff.py"},
		{TypeCheck: true, TypeCheckStubs: "x: int\n\xfe"},
	}
	if p.Version() >= 5 { // a policy a protocol-5 child refuses
		bad = append(bad, session.Config{OsPolicy: &message.OsPolicy{Random: message.RandomSeeded,
			Seed: message.RandomSeed{Kind: message.SeedFloat, Float: math.NaN()}}})
	}
	for i := range 3 {
		for _, cfg := range bad {
			s, err := p.Checkout(ctx, cfg)
			if err == nil {
				s.Close()
			}
			var ir *session.InvalidRequestError
			var tl *session.RequestTooLargeError
			if !errors.As(err, &ir) && !errors.As(err, &tl) {
				t.Fatalf("round %d: checkout with %.20q: %v, want an InvalidRequestError or RequestTooLargeError", i, cfg.ScriptName, err)
			}
		}
	}
	if n := rec.count(EventDestroy, DestroyRequested); n != 0 {
		t.Errorf("%d workers destroyed for the caller's bad Config, want 0", n)
	}
	if st := p.Stat(); st.Destroyed != 0 || st.Restarts != 0 || st.Idle != 1 {
		t.Errorf("stats %+v: want the first worker idle, none destroyed or restarted", st)
	}
	if _, err := p.Run(ctx, session.Config{}, "1"); err != nil {
		t.Fatal(err)
	}
}
