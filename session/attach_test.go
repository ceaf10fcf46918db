//go:build unix

package session

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/worker"
)

// negotiated returns a detached real worker and its version.
func negotiated(t *testing.T) (*worker.Process, uint32) {
	t.Helper()
	requireWorker(t)
	peer, neg, err := Negotiate(context.Background(), Launch{}, Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	p := peer.(*worker.Process)
	t.Cleanup(func() { p.Close(context.Background()) })
	if neg.Version == 0 || neg.Attempts == 0 {
		t.Fatalf("negotiation %+v", neg)
	}
	return p, neg.Version
}

func attach(t *testing.T, p *worker.Process, v uint32) *Session {
	t.Helper()
	s, err := Attach(context.Background(), p, v, Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func alive(p *worker.Process) bool {
	select {
	case <-p.Exited():
		return false
	default:
		return true
	}
}

func TestAttachDetachReusesTheProcessWithFreshGlobals(t *testing.T) {
	p, v := negotiated(t)
	pid := p.Pid()
	for round := range 3 {
		s := attach(t, p, v)
		if s.Pid() != pid || s.Version() != v || !s.Negotiation().Pinned {
			t.Fatalf("round %d: pid %d version %d negotiation %+v", round, s.Pid(), s.Version(), s.Negotiation())
		}
		if round > 0 {
			// The previous round's global is gone.
			_, err := s.Run(context.Background(), "x")
			pyErr(t, err, "NameError")
		}
		if r := run(t, s, "x = 41\nx + 1"); r.Repr() != "42" {
			t.Fatalf("got %s", r.Repr())
		}
		got, err := s.Detach(context.Background())
		if err != nil || got != p {
			t.Fatalf("Detach: %v, %v", got, err)
		}
		// The detached session is closed, and Close/Kill leave the worker
		// alone.
		if _, err := s.Run(context.Background(), "1"); !errors.Is(err, ErrClosed) {
			t.Fatalf("Run after Detach: %v", err)
		}
		if err := s.Cause(); err == nil {
			t.Fatal("Cause after Detach is nil")
		}
		s.Kill()
		s.Close()
		time.Sleep(5 * time.Millisecond)
		if !alive(p) {
			t.Fatal("Close after Detach stopped the worker")
		}
	}
}

func TestDetachRefusesSuspendedAndBusy(t *testing.T) {
	p, v := negotiated(t)
	s := attach(t, p, v)
	defer s.Close()
	ev, err := s.Feed(context.Background(), "f(1)")
	if err != nil || ev.Body.EventKind() != message.KindFunctionCall {
		t.Fatalf("Feed: %v %v", ev, err)
	}
	if _, err := s.Detach(context.Background()); !errors.Is(err, ErrSuspended) {
		t.Fatalf("Detach while suspended: %v", err)
	}
	// The session is untouched: answer the call and carry on.
	if ev, err := s.Resume(context.Background(), Return(5)); err != nil || ev.Body.EventKind() != message.KindComplete {
		t.Fatalf("Resume: %v %v", ev, err)
	}
	s.busy.Store(true) // as if a turn were in flight on another goroutine
	_, err = s.Detach(context.Background())
	s.busy.Store(false)
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("Detach while busy: %v", err)
	}
	if _, err := s.Detach(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestDetachAfterCrashReportsTheCause(t *testing.T) {
	p, v := negotiated(t)
	s := attach(t, p, v)
	defer s.Close()
	if err := s.Cause(); err != nil {
		t.Fatalf("Cause of an open session: %v", err)
	}
	syscall.Kill(p.Pid(), syscall.SIGKILL)
	<-p.Exited()
	_, err := s.Detach(context.Background())
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Vanished {
		t.Fatalf("Detach of a killed worker: %v", err)
	}
	_, err = s.Detach(context.Background())
	if !errors.Is(err, ErrClosed) || !errors.As(err, &ce) {
		t.Fatalf("second Detach: %v", err)
	}
	if c := s.Cause(); !errors.As(c, &ce) {
		t.Fatalf("Cause: %v", c)
	}
}

func TestCauseIsNilAfterClose(t *testing.T) {
	p, v := negotiated(t)
	s := attach(t, p, v)
	s.Close()
	if err := s.Cause(); err != nil {
		t.Fatalf("Cause after Close: %v", err)
	}
	if _, err := s.Detach(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Detach after Close: %v", err)
	}
}

// Close racing with Detach: exactly one gets the worker. Either Detach
// returns it alive, or the worker is stopped and Detach fails.
func TestDetachRacingClose(t *testing.T) {
	p, v := negotiated(t)
	detached, closed := 0, 0
	for range 30 {
		s := attach(t, p, v)
		var wg sync.WaitGroup
		var got Peer
		var err error
		wg.Go(func() { got, err = s.Detach(context.Background()) })
		wg.Go(func() { s.Close() })
		wg.Wait()
		if err == nil {
			detached++
			if got != p || !alive(p) {
				t.Fatal("Detach won but the worker is gone")
			}
			continue
		}
		closed++
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Detach lost with %v", err)
		}
		select {
		case <-p.Exited():
		case <-time.After(5 * time.Second):
			t.Fatal("Close won but the worker still runs")
		}
		p, v = negotiated(t)
	}
	t.Logf("detached %d, closed %d", detached, closed)
}

func TestAttachRefusedVersionStopsTheWorker(t *testing.T) {
	requireWorker(t)
	p, err := worker.Start(context.Background(), worker.Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Attach(context.Background(), p, 99, Config{Logger: quietLogger}); err == nil {
		t.Fatal("Attach with an unknown version succeeded")
	}
	<-p.Exited()

	// A version we have a codec for but the released worker refuses.
	p, err = worker.Start(context.Background(), worker.Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	// A relay may speak every version we have: a version it accepts is
	// not the case under test, so try the next one on a fresh worker.
	for _, v := range []uint32{4, 3} {
		if _, ok := codec.ForVersion(v); !ok {
			continue
		}
		s, err := Attach(context.Background(), p, v, Config{Logger: quietLogger})
		if err == nil {
			s.Close()
			if p, err = worker.Start(context.Background(), worker.Config{Logger: quietLogger}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var ce *worker.CrashError
		if !errors.As(err, &ce) || ce.Reason != worker.Announced {
			t.Fatalf("Attach with version %d: %v", v, err)
		}
		<-p.Exited()
		return
	}
	p.Close(context.Background())
	t.Skip("the worker speaks every linked-in version newer than its own")
}

func TestAttachNil(t *testing.T) {
	if _, err := Attach(context.Background(), nil, 2, Config{}); err == nil {
		t.Fatal("Attach(nil) succeeded")
	}
}
