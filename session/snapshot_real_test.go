//go:build unix

package session

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"weak"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/worker"
)

// refusedLoad checks that err is the worker's refusal of a Load: a
// *PythonError RuntimeError naming the reason, which the session survives
// in the state it was in.
func refusedLoad(t *testing.T, s *Session, err error, reason string, st State) {
	t.Helper()
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Type() != "RuntimeError" || !strings.Contains(pe.Error(), reason) || !Survives(err) {
		t.Fatalf("got %T %v, want the worker's RuntimeError %q", err, err, reason)
	}
	if s.State() != st {
		t.Fatalf("a refused Load left the session %v, want %v", s.State(), st)
	}
}

// A Dump builds the interpreter, as a feed does: a fresh (or just Reset)
// session that has been dumped no longer takes a Load until it is Reset,
// at every protocol (behaviour §5; the child package models it as
// Configured → Ready on Dump). Load's doc used to promise any fresh or
// just-Reset session.
func TestRealLoadRefusedOnceDumped(t *testing.T) {
	ctx := context.Background()
	src := realSession(t, Config{})
	run(t, src, "x = 7")
	state, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}

	s := realSession(t, Config{})
	if _, err := s.Dump(ctx); err != nil {
		t.Fatalf("dump of a fresh session: %v", err)
	}
	_, err = s.Load(ctx, state)
	refusedLoad(t, s, err, "Load requires a session that has not started", StateIdle)
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Dump(ctx); err != nil {
		t.Fatalf("dump of a reset session: %v", err)
	}
	_, err = s.Load(ctx, state)
	refusedLoad(t, s, err, "Load requires a session that has not started", StateIdle)
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Load(ctx, state); err != nil || ev.Body.EventKind() != message.KindOk {
		t.Fatalf("load after Reset: %v %v", ev, err)
	}
	if got := run(t, s, "x").Repr(); got != "7" {
		t.Fatalf("x = %s after Load", got)
	}
}

// A garbage, empty or truncated dump is refused with the worker's typed
// error, and the session stays loadable: the good dump loads next.
func TestRealRefusedLoadKeepsSessionLoadable(t *testing.T) {
	ctx := context.Background()
	src := realSession(t, Config{})
	run(t, src, "x = 7")
	state, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		state []byte
	}{
		{"nil", nil},
		{"garbage", []byte("not a dump at all")},
		{"truncated", state[:len(state)-1]},
		{"half", state[:len(state)/2]},
		{"trailing byte", append(state[:len(state):len(state)], 0)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := realSession(t, Config{})
			_, err := s.Load(ctx, c.state)
			refusedLoad(t, s, err, "failed to load session", StateIdle)
			if ev, err := s.Load(ctx, state); err != nil || ev.Body.EventKind() != message.KindOk {
				t.Fatalf("good load after the refusal: %v %v", ev, err)
			}
			if got := run(t, s, "x").Repr(); got != "7" {
				t.Fatalf("x = %s", got)
			}
		})
	}
}

// Misusing the state machine from Go is a typed error that leaves the
// session as it was: answering when idle, feeding or loading while
// suspended, aborting when nothing runs.
func TestRealStateMachineMisuseKeepsSession(t *testing.T) {
	ctx := context.Background()
	s := realSession(t, Config{})
	if _, err := s.Resume(ctx, Return(1)); err != ErrNotSuspended || !Survives(err) {
		t.Fatalf("Resume when idle: %v", err)
	}
	if _, err := s.AbortFeed(ctx, message.NewException("ValueError", "x")); err != ErrNotSuspended {
		t.Fatalf("AbortFeed when idle: %v", err)
	}
	if _, err := s.Continue(ctx); err != ErrNotSuspended {
		t.Fatalf("Continue when idle: %v", err)
	}
	run(t, s, "x = 1")
	ev, err := s.Feed(ctx, "y = f(2)")
	if err != nil || ev.Body.EventKind() != message.KindFunctionCall {
		t.Fatalf("feed: %v %v", ev, err)
	}
	if _, err := s.Feed(ctx, "1"); err != ErrSuspended || !Survives(err) {
		t.Fatalf("Feed while suspended: %v", err)
	}
	if _, err := s.Detach(ctx); err != ErrSuspended {
		t.Fatalf("Detach while suspended: %v", err)
	}
	if _, err := s.Resume(ctx, NotHandled()); err != ErrNotSuspended {
		t.Fatalf("NotHandled for a FunctionCall: %v", err)
	}
	state, err := s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Load(ctx, state)
	refusedLoad(t, s, err, "Load requires a session that has not started", StateSuspended)
	if s.Suspension() == nil || s.Suspension().Body.EventKind() != message.KindFunctionCall {
		t.Fatalf("suspension after the refused Load: %v", s.Suspension())
	}
	done, err := s.Resume(ctx, Return(5))
	if err != nil || done.Body.EventKind() != message.KindComplete {
		t.Fatalf("resume after the misuse: %v %v", done, err)
	}
	if got := run(t, s, "x + y").Repr(); got != "6" {
		t.Fatalf("x + y = %s", got)
	}
	// Reset while suspended discards the suspension; repeated, it is
	// still a fresh session that takes the suspended dump.
	if _, err := s.Feed(ctx, "f(3)"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.Reset(ctx); err != nil || s.State() != StateIdle || s.Suspension() != nil {
			t.Fatalf("Reset: %v, %v", err, s.State())
		}
	}
	if _, err := s.Resume(ctx, Return(1)); err != ErrNotSuspended {
		t.Fatalf("Resume after Reset: %v", err)
	}
	ev, err = s.Load(ctx, state)
	if err != nil || ev.Body.EventKind() != message.KindFunctionCall || s.State() != StateSuspended {
		t.Fatalf("load of the suspended dump after Reset: %v %v", ev, err)
	}
}

// The session's own frame cap (worker.Config.MaxFrameLen) is the parent's
// alone: a Load over it is refused before anything is sent, but a dump
// over it is a frame the worker, which knows only the protocol's cap, has
// already sent: the worker is discarded with a *ProtocolError. So is a
// dump over the decode budget. Dump's doc used to promise a *PythonError.
func TestRealDumpOverParentCapsDiscardsWorker(t *testing.T) {
	ctx := context.Background()
	bin := requireWorker(t)
	start := func(cfg Config, frameLen int) *Session {
		cfg.Logger = quietLogger
		s, err := Start(ctx, Launch{Launcher: ProcessLauncher{Worker: worker.Config{Binary: bin, MaxFrameLen: frameLen}}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	const big = "x = 'a' * (3 * 1024 * 1024)"
	src := start(Config{}, 0)
	run(t, src, big)
	state, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}

	capped := start(Config{}, 1<<20)
	var tl *RequestTooLargeError
	if _, err := capped.Load(ctx, state); !errors.As(err, &tl) || !Survives(err) || capped.State() != StateIdle {
		t.Fatalf("Load over the cap: %T %v", err, err)
	}
	run(t, capped, big)
	var pe *ProtocolError
	if _, err := capped.Dump(ctx); !errors.As(err, &pe) || Survives(err) || capped.State() != StateClosed {
		t.Fatalf("Dump over the cap: %T %v", err, err)
	}

	budget := start(Config{MaxDecodeBytes: 1 << 20}, 0)
	run(t, budget, big)
	if _, err := budget.Dump(ctx); !errors.As(err, &pe) || Survives(err) || budget.State() != StateClosed {
		t.Fatalf("Dump over the decode budget: %T %v", err, err)
	}
}

// Kill or Close from another goroutine while a Load of a large dump is in
// flight ends it with an error matching ErrClosed (or lets it finish, when
// it comes second); the session is closed either way, and nothing hangs.
func TestRealKillOrCloseMidLoad(t *testing.T) {
	ctx := context.Background()
	src := realSession(t, Config{Limits: Limits{MaxMemory: NoMemoryLimit}})
	run(t, src, "x = [i for i in range(1000000)]")
	state, err := src.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, stop := range []func(*Session){(*Session).Kill, func(s *Session) { s.Close() }} {
		s := realSession(t, Config{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); stop(s) }()
		_, err := s.Load(ctx, state)
		wg.Wait()
		if err != nil && (!errors.Is(err, ErrClosed) || Survives(err)) {
			t.Fatalf("Load racing a stop: %T %v", err, err)
		}
		if _, err := s.Dump(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Dump after the stop: %v", err)
		}
		if s.State() != StateClosed || s.Cause() != nil {
			t.Fatalf("state %v cause %v", s.State(), s.Cause())
		}
	}
}

// A request the worker refuses with a protocol violation while suspended
// changes nothing on its side, so it must change nothing in the session's
// call bookkeeping either. A refused raw ResumeFutures used to un-register
// the futures it named, and a refused raw Feed forgot every future of the
// suspended feed: the next, correct answer drew a ResolveFutures listing
// a future the session had forgotten, and the honest worker was discarded
// with a *ProtocolError.
func TestRealRefusedRequestKeepsFutures(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		req  func(pending []uint32) message.Request
	}{
		{"resume futures without a kind", func(pending []uint32) message.Request {
			return &message.ResumeFutures{Results: []message.FutureResult{{CallID: pending[0], Result: &message.ExtResult{}}}}
		}},
		{"resume futures with not-handled", func(pending []uint32) message.Request {
			return &message.ResumeFutures{Results: []message.FutureResult{{CallID: pending[0], Result: &message.ExtResult{Kind: message.ResultNotHandled}}}}
		}},
		{"feed while suspended", func([]uint32) message.Request { return &message.Feed{Code: "1"} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := realSession(t, Config{})
			ev, err := s.Feed(ctx, "import asyncio\nasync def main():\n    return await asyncio.gather(f(1), f(2))\nawait main()")
			for err == nil && ev.Body.EventKind() == message.KindFunctionCall {
				ev, err = s.Resume(ctx, AsFuture())
			}
			if err != nil {
				t.Fatal(err)
			}
			rf, ok := ev.Body.(*message.ResolveFutures)
			if !ok || len(rf.PendingCallIDs) != 2 {
				t.Fatalf("want a ResolveFutures for two calls, got %v", ev.Body)
			}
			pending := slices.Clone(rf.PendingCallIDs)
			ev, err = s.Do(ctx, c.req(pending))
			if err != nil {
				t.Fatalf("raw request: %v", err)
			}
			if e, ok := ev.Body.(*message.Error); !ok || !isProtocolViolation(e.Exception) || s.State() != StateSuspended {
				t.Fatalf("want the worker's refusal with the session still suspended, got %v (%v)", ev.Body, s.State())
			}
			// The worker still waits for both futures. Settle them one at a
			// time: it asks again for the one left.
			ev, err = s.Resume(ctx, Resolve(FutureOutcome{CallID: pending[1], Value: 20}))
			if err != nil {
				t.Fatalf("resolving %d after the refusal: %v", pending[1], err)
			}
			again, ok := ev.Body.(*message.ResolveFutures)
			if !ok || !slices.Equal(again.PendingCallIDs, pending[:1]) {
				t.Fatalf("want a ResolveFutures for %d, got %v", pending[0], ev.Body)
			}
			ev, err = s.Resume(ctx, Resolve(FutureOutcome{CallID: pending[0], Value: 10}))
			if err != nil {
				t.Fatal(err)
			}
			done, ok := ev.Body.(*message.Complete)
			if !ok {
				t.Fatalf("want Complete, got %v", ev.Body)
			}
			want := "[10, 20]"
			if pending[0] > pending[1] {
				want = "[20, 10]"
			}
			if got := done.Values.Repr(done.Value); got != want {
				t.Fatalf("gather = %s, want %s", got, want)
			}
		})
	}
}

// Once the session is closed, every call says so, even while the turn lock
// is still held (here by the Run whose host function closed the session;
// Close itself holds it for a moment too): Do and Reusable used to answer
// ErrBusy, which claims the session survives, where the turn methods
// answered ErrClosed.
func TestRealClosedWhileBusyIsClosed(t *testing.T) {
	ctx := context.Background()
	s := realSession(t, Config{})
	errs := map[string]error{}
	reg := NewRegistry().MustRegister("f", func() int {
		s.Close()
		_, errs["Dump"] = s.Dump(ctx)
		_, errs["Do"] = s.Do(ctx, &message.Dump{})
		errs["Reusable"] = s.Reusable()
		return 1
	})
	if _, err := s.Run(ctx, "f()", WithFunctions(reg)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run: %v", err)
	}
	for name, err := range errs {
		if !errors.Is(err, ErrClosed) || Survives(err) {
			t.Errorf("%s on a closed session with its turn lock held: %v", name, err)
		}
	}
}

// Building a dump allocates several times the session's heap in the
// worker, under its memory limit (Session.Dump's doc): a heap of a fifth
// of the limit dumps, one of half of it ends the worker, and the session
// says so truthfully (closed, the cause a *worker.MemoryLimitError).
func TestRealDumpOfALargeHeapEndsTheWorker(t *testing.T) {
	ctx := context.Background()
	cfg := Config{Limits: Limits{MaxMemory: 20 << 20}}
	small := realSession(t, cfg)
	run(t, small, "x = 'a' * (4 << 20)")
	if _, err := small.Dump(ctx); err != nil {
		t.Fatalf("dump of 4 MiB at 20 MiB: %v", err)
	}
	big := realSession(t, cfg)
	run(t, big, "x = 'a' * (10 << 20)")
	_, err := big.Dump(ctx)
	var me *worker.MemoryLimitError
	if !errors.As(err, &me) || Survives(err) || big.State() != StateClosed || big.Cause() != err {
		t.Fatalf("dump of 10 MiB at 20 MiB: %T %v (state %v)", err, err, big.State())
	}
	if _, err := big.Run(ctx, "1"); !errors.Is(err, ErrClosed) || !errors.Is(err, worker.ErrMemoryLimit) {
		t.Fatalf("run after: %v", err)
	}
}

// A session that ends without Close (Shutdown, which closes it, or a lost
// worker) must not stay reachable from the context of its last turn: the
// context's cancellation watch is retired as the session closes, as Close
// and Detach retire it. It used to stay registered on the caller's
// context until that ended, holding the whole Session.
func TestEndedSessionIsNotHeldByItsContext(t *testing.T) {
	requireWorker(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, end := range []string{"shutdown", "lost"} {
		t.Run(end, func(t *testing.T) {
			s, err := Start(ctx, realLaunch, Config{Logger: quietLogger})
			if err != nil {
				t.Fatal(err)
			}
			pid := s.Pid()
			if _, err := s.Run(ctx, "1"); err != nil {
				t.Fatal(err)
			}
			switch end {
			case "shutdown":
				if err := s.Shutdown(ctx); err != nil {
					t.Fatal(err)
				}
			case "lost":
				syscall.Kill(pid, syscall.SIGKILL)
				if _, err := s.Run(ctx, "2"); Survives(err) {
					t.Fatalf("run on a killed worker: %v", err)
				}
			}
			if s.State() != StateClosed {
				t.Fatalf("state %v", s.State())
			}
			w := weak.Make(s)
			s = nil
			for range 100 {
				runtime.GC()
				if w.Value() == nil {
					break
				}
			}
			if w.Value() != nil {
				t.Fatal("the ended session is still reachable (from its context's watch)")
			}
		})
	}
}
