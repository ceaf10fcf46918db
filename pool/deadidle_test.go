//go:build unix

package pool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/session"
)

// Workers killed while idle (an operator's pkill, the OOM killer) whose
// deaths the pool has not noticed yet when a checkout takes them do not
// fail the checkout: each is found dead at its Configure (which could not
// even be sent), replaced, and the checkout goes on to a live worker.
// Here the first three workers a checkout takes are dead, one more than
// the three Configure attempts a checkout makes. Before, each counted as
// a failed attempt and the checkout failed with the third one's crash.
func TestCheckoutOutlivesWorkersKilledWhileIdle(t *testing.T) {
	const dead = checkoutAttempts
	var attaches atomic.Int32
	var p *Pool
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, CheckoutTimeout: time.Minute, attaching: func(done bool) {
		if !done && attaches.Add(1) <= dead {
			killCheckedOut(p)
		}
	}})
	s, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatalf("Checkout after %d workers were killed idle: %v (%T)", dead, err, err)
	}
	defer s.Close()
	runRepr(t, s, "1 + 1")
	if n := attaches.Load(); n != dead+1 {
		t.Errorf("%d Configures, want %d", n, dead+1)
	}
	// Each kill is a lost worker, as an idle death the pool noticed is.
	if n := rec.reach(EventCrash, ReasonVanished, dead); n != dead {
		t.Errorf("%d vanished crashes, want %d", n, dead)
	}
	if st := p.Stat(); st.Crashes[ReasonVanished] != dead || !st.Healthy || st.Checkouts != 1 {
		t.Errorf("%+v", st)
	}
}

// A worker found dead at the Configure of a checkout that had already
// given up (its context ended while the Configure was on its way) is a
// worker lost while idle too: it counts toward the restart cap. Before,
// that path counted the crash only.
func TestDeadWorkerOfAnAbandonedCheckoutCountsTowardTheCap(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var p *Pool
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, attaching: func(done bool) {
		if !done {
			killCheckedOut(p)
			cancel() // the checkout gives up before the Configure is answered
		}
	}})
	if _, err := p.Checkout(ctx, session.Config{}); !errors.Is(err, ErrExhausted) {
		t.Fatalf("Checkout: %v, want ErrExhausted", err)
	}
	if n := rec.reach(EventCrash, ReasonVanished, 1); n != 1 {
		t.Fatalf("%d vanished crashes, want 1", n)
	}
	p.mu.Lock()
	n := len(p.gate.failures)
	p.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d failures toward the restart cap, want 1 (the worker dead before its Configure)", n)
	}
}
