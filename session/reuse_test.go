package session

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/worker"
)

// The session says whether its worker may serve another session, and why
// not, with the sentinels a pool maps to its destroy reasons.
func TestReusable(t *testing.T) {
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			if b.Code == "block()" {
				return reply(funcCall("block", 0))
			}
			return reply(completeInt(1))
		case *message.ResumeCall:
			return reply(completeInt(2))
		case *message.AbortFeed:
			return reply(stamp(ev(&message.Error{Exception: b.Exception}), 1000))
		}
		return reply(ev(&message.Ok{}))
	})
	if err := s.Reusable(); err != nil {
		t.Fatalf("fresh: %v", err)
	}
	if _, err := s.Feed(bg, "block()"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reusable(); err != ErrSuspended {
		t.Fatalf("suspended: %v", err)
	}
	if _, err := s.Resume(bg, Return(nil)); err != nil {
		t.Fatal(err)
	}
	if err := s.Reusable(); err != nil {
		t.Fatalf("idle again: %v", err)
	}

	// A Run whose context ends while it waits on the host is aborted: the
	// session survives but its worker is not handed on. The deadline
	// passes once the host call is entered: at a fixed time (20 ms, then
	// 2 s) a loaded machine had not always had the fake worker's call back,
	// and the computing worker was killed instead.
	ctx := testenv.NewReachedDeadline()
	reg := NewRegistry().MustRegister("block", func(hctx context.Context) error {
		ctx.Reached()
		<-hctx.Done()
		return hctx.Err()
	})
	_, err := s.Run(ctx, "block()", WithFunctions(reg))
	var te *TimeoutError
	if !errors.As(err, &te) || te.Killed || !Survives(err) {
		t.Fatalf("interrupted Run: %v", err)
	}
	if err := s.Reusable(); err != ErrInterrupted {
		t.Fatalf("after the interrupted Run: %v", err)
	}
	if r, err := s.Run(bg, "1"); err != nil || r.Repr() != "1" {
		t.Fatalf("the session itself survives: %v %v", r, err)
	}

	s.Close()
	if err := s.Reusable(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}

// Cause may be read from any goroutine while a turn runs, without the turn
// lock: it never makes the turn fail with ErrBusy, and it reports the loss
// once the session is closed.
func TestCauseWithoutTurnLock(t *testing.T) {
	release := make(chan struct{})
	s, f := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		<-release
		return fakeReply{exit: 9} // hang up without an answer
	})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.Cause(); err != nil {
				var ce *worker.CrashError
				if !errors.As(err, &ce) {
					t.Errorf("Cause %v", err)
				}
				return
			}
		}
	})
	done := make(chan error, 1)
	go func() {
		_, err := s.Feed(bg, "1")
		done <- err
	}()
	for len(f.requests()) < 2 { // Configure, then the Feed
		time.Sleep(time.Millisecond)
	}
	close(release)
	err := <-done
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Exit.Code != 9 {
		t.Fatalf("Feed: %v", err)
	}
	if c := s.Cause(); !errors.As(c, &ce) {
		t.Fatalf("Cause after the loss: %v", c)
	}
	close(stop)
	wg.Wait()
}
