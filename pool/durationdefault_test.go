//go:build unix

package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/session"
)

// Each checkout's duration budget is its own: a checkout with a zero
// Limits gets session.DefaultMaxDuration (the worker stamps it at 4 and
// 2, and at 5 it is the per-feed limit), and the cumulative clock starts
// again at the next checkout of the same worker, so one checkout that spent
// its budget does not take the next one's.
func TestCheckoutDurationBudgetIsPerCheckout(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s := checkout(t, p)
	if got := runRepr(t, s, "1"); got != "1" {
		t.Fatal(got)
	}
	st := s.Stamps()
	if s.Version() >= 5 {
		if st.HasMaxDuration || st.MaxFeedDuration != session.DefaultMaxDuration {
			t.Fatalf("zero Limits at %d: stamps %+v, want max_feed_duration %v", s.Version(), st, session.DefaultMaxDuration)
		}
	} else if !st.HasMaxDuration || st.MaxDuration != session.DefaultMaxDuration {
		t.Fatalf("zero Limits at %d: stamps %+v, want max_duration %v", s.Version(), st, session.DefaultMaxDuration)
	}
	s.Close()

	// Spend a small budget in one checkout, then check out the same
	// worker again: its budget is whole.
	const budget = 300 * time.Millisecond
	cfg := session.Config{Limits: session.Limits{MaxDuration: budget}}
	s, err := p.Checkout(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	pid := s.Pid()
	_, err = s.Run(context.Background(), "while True: pass")
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Type() != "TimeoutError" {
		t.Fatalf("loop: %v", err)
	}
	spent := s.Stamps().TotalExecution
	s.Close()
	s, err = p.Checkout(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Pid() != pid {
		// A worker a time-limit trip left untrustworthy (protocol 5) is
		// replaced; the budget is then trivially whole.
		t.Logf("worker %d replaced by %d", pid, s.Pid())
	}
	if got := runRepr(t, s, "1"); got != "1" {
		t.Fatalf("next checkout: %s", got)
	}
	if tot := s.Stamps().TotalExecution; tot >= spent {
		t.Fatalf("next checkout's clock at %v, the last one spent %v", tot, spent)
	}
}
