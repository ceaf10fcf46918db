//go:build unix

package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Regression: pool.Session used to embed *session.Session, which promoted
// Detach and Shutdown. Detach handed the pool's worker out: the pool
// counted it destroyed, started a replacement (two live children under
// MaxWorkers 1) and Close left the escaped one running.
func TestSessionHasNoDetachOrShutdown(t *testing.T) {
	var s any = (*Session)(nil)
	if _, ok := s.(interface {
		Detach(context.Context) (*worker.Process, error)
	}); ok {
		t.Fatal("pool.Session has Detach")
	}
	if _, ok := s.(interface{ Detach(context.Context) error }); ok {
		t.Fatal("pool.Session has Detach")
	}
	if _, ok := s.(interface{ Shutdown(context.Context) error }); ok {
		t.Fatal("pool.Session has Shutdown")
	}
}

// Every forwarded turn leaves the worker with the pool: after using them
// all on a pool of one, the same worker is the only one alive, and Close
// stops it.
func TestForwardedTurnsKeepTheWorkerInThePool(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s := checkout(t, p)
	id, pid := s.WorkerID(), s.Pid()
	ctx := context.Background()
	if _, err := s.Feed(ctx, "x = 1"); err != nil {
		t.Fatal(err)
	}
	dump, err := s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx, dump); err != nil {
		t.Fatal(err)
	}
	if got := runRepr(t, s, "x + 1"); got != "2" {
		t.Fatalf("x + 1 = %s", got)
	}
	s.Close()
	if st := p.Stat(); st.Live != 1 || st.Idle != 1 || st.Spawning != 0 || st.Destroyed != 0 {
		t.Fatalf("after Close: %+v", st)
	}
	s = checkout(t, p)
	if s.WorkerID() != id || s.Pid() != pid {
		t.Fatalf("worker %d/%d, want %d/%d", s.WorkerID(), s.Pid(), id, pid)
	}
	s.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := p.Close(cctx); err != nil {
		t.Fatal(err)
	}
	testenv.WaitReaped(t, pid, 2*time.Second)
	if c := testenv.Children(); len(c) != 0 {
		t.Fatalf("children left after pool Close: %v", c)
	}
}

func TestDestroyReasons(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want Reason
	}{
		{"busy", session.ErrBusy, DestroyBusy},
		{"suspended", session.ErrSuspended, DestroySuspended},
		{"interrupted", session.ErrInterrupted, DestroyInterrupted},
		{"other", errors.New("reset failed"), DestroyRequested},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := destroyReason(c.err); got != c.want {
				t.Fatalf("destroyReason(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}
