//go:build unix

package pool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomonty/monty/session"
)

// After Close the queries of a pool Session still answer: State is
// closed, WorkerID, Pid and Endpoint name the worker it ran on (which
// the next checkout may be handed: hence the doc's warning never to
// signal that pid), and Cause is nil for a Close that gave the worker
// back. Before, Cause said "worker detached from the session", an error
// for a checkout that ended as it should.
func TestQueriesAfterClose(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx := context.Background()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	id, pid, v := s.WorkerID(), s.Pid(), s.Version()
	if id == 0 || pid == 0 {
		t.Fatalf("worker id %d, pid %d", id, pid)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s.Destroy() // a no-op after Close
	if s.State() != session.StateClosed || s.WorkerID() != id || s.Pid() != pid || s.Version() != v || s.Endpoint() != LocalEndpoint {
		t.Errorf("after Close: state %v, worker %d pid %d version %d endpoint %q; want closed, %d, %d, %d, local",
			s.State(), s.WorkerID(), s.Pid(), s.Version(), s.Endpoint(), id, pid, v)
	}
	if err := s.Cause(); err != nil {
		t.Errorf("Cause after a clean Close: %v, want nil", err)
	}
	// A turn after Close says the checkout was closed: "worker detached
	// from the session" alone named a step the caller never took.
	if _, err := s.Run(ctx, "1"); !errors.Is(err, session.ErrClosed) || !strings.Contains(err.Error(), "Close") {
		t.Errorf("Run after Close: %v, want ErrClosed, naming Close", err)
	}
	next, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if next.WorkerID() != id || next.Pid() != pid {
		t.Errorf("next checkout on worker %d (pid %d), want the one given back, %d (pid %d)", next.WorkerID(), next.Pid(), id, pid)
	}
	// The closed Session still names that worker, now another checkout's.
	if s.Pid() != next.Pid() || s.State() != session.StateClosed || next.State() != session.StateIdle {
		t.Errorf("closed session: pid %d state %v; next: pid %d state %v", s.Pid(), s.State(), next.Pid(), next.State())
	}
}
