//go:build unix

package pool

import (
	"context"
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
