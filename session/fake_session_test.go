package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/worker"
)

var bg = context.Background()

// hangBound is the upper bound of the tests whose wrong behaviour never
// ends: a turn on a worker that hangs or runs `while True`, a Close or a
// cancellation that nothing interrupts, a watchdog that never fires. On an
// idle machine the right behaviour takes milliseconds, or a budget plus a
// grace well under a second; on two CI cores busy with other -race builds a
// timer or a process exit can come seconds late. A bound this far from both
// separates right from wrong without measuring the machine; where a test
// must also tell a short wait from a longer one, a lower bound (which load
// cannot break) or an ordering says it.
const hangBound = 20 * time.Second

func TestFakeStateTracking(t *testing.T) {
	s, f := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			if b.Code == "foo(1)" {
				return reply(funcCall("foo", 0, 1))
			}
			return reply(completeInt(7))
		case *message.ResumeCall:
			if b.CallID != 0 {
				return reply(violation("ResumeCall call_id 5 does not match 0"))
			}
			return reply(completeInt(8))
		case *message.ResumeNameLookup:
			return reply(violation("ResumeNameLookup without a suspended name lookup"))
		}
		return reply(violation("unexpected"))
	})
	if s.State() != StateIdle || s.Version() != 2 {
		t.Fatalf("state %v version %d", s.State(), s.Version())
	}
	if _, err := s.Resume(bg, Return(1)); err != ErrNotSuspended {
		t.Fatalf("resume while idle: %v", err)
	}
	got, err := s.Feed(bg, "foo(1)")
	if err != nil {
		t.Fatal(err)
	}
	fc, ok := got.Body.(*message.FunctionCall)
	if !ok || fc.FunctionName != "foo" || s.State() != StateSuspended || s.Suspension() != got {
		t.Fatalf("after feed: %v %v", got.Body, s.State())
	}
	if _, err := s.Feed(bg, "1"); err != ErrSuspended {
		t.Fatalf("feed while suspended: %v", err)
	}
	if _, err := s.Resume(bg, NotHandled()); err != ErrNotSuspended {
		t.Fatalf("OS-call answer to a function call: %v", err)
	}
	// A raw request the worker rejects leaves the suspension in place.
	rej, err := s.Do(bg, &message.ResumeNameLookup{Kind: message.LookupUndefined})
	if err != nil || !isProtocolViolation(rej.Body.(*message.Error).Exception) || s.State() != StateSuspended {
		t.Fatalf("rejected raw request: %v %v, state %v", rej, err, s.State())
	}
	rej, err = s.Do(bg, &message.ResumeCall{CallID: 5, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "x"}})
	if err != nil || s.State() != StateSuspended {
		t.Fatalf("wrong call id: %v %v", rej, err)
	}
	done, err := s.Resume(bg, Return(41))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := done.Body.(*message.Complete); !ok || s.State() != StateIdle || s.Suspension() != nil {
		t.Fatalf("after resume: %v %v", done.Body, s.State())
	}
	rc := f.requests()[len(f.requests())-1].Body.(*message.ResumeCall)
	if rc.Result.Kind != message.ResultReturn || rc.Values.Node(rc.Result.Value).Int() != 41 {
		t.Fatalf("resume sent %+v", rc.Result)
	}
	if st := s.Stamps(); !st.HasMaxSuspensions || st.MaxSuspensions != 1000 || st.TotalExecution != 10*time.Microsecond {
		t.Fatalf("stamps %+v", st)
	}
}

// suspender answers every feed and resume with another FunctionCall, and an
// AbortFeed with an Error carrying the abort's exception.
func suspender(maxSusp uint64) fakeHandler {
	var id atomic.Uint32
	return func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Feed:
			if b.Code == "1" {
				return reply(completeInt(1))
			}
			id.Store(0)
			return reply(stamp(funcCall("f", 0), maxSusp))
		case *message.ResumeCall:
			return reply(stamp(funcCall("f", id.Add(1)), maxSusp))
		case *message.AbortFeed:
			return reply(stamp(ev(&message.Error{Exception: b.Exception}), maxSusp))
		}
		return reply(violation("unexpected"))
	}
}

func TestFakeSuspensionLimitAbortsAndKeepsSession(t *testing.T) {
	s, f := startFake(t, Config{Limits: Limits{MaxSuspensions: 2}}, suspender(1000))
	if _, err := s.Feed(bg, "loop()"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resume(bg, Return(nil)); err != nil {
		t.Fatal(err)
	}
	_, err := s.Resume(bg, Return(nil)) // the third suspension is over the limit
	var sl *SuspensionLimitError
	if !errors.As(err, &sl) || sl.Limit != 2 || !Survives(err) {
		t.Fatalf("got %v, want a suspension-limit error", err)
	}
	if err.Error() != "suspension limit 2 exceeded" || s.State() != StateIdle {
		t.Fatalf("text %q state %v", err, s.State())
	}
	reqs := f.requests()
	abort, ok := reqs[len(reqs)-1].Body.(*message.AbortFeed)
	if !ok || abort.Exception.Type != "RuntimeError" || abort.Exception.Msg() != "suspension limit 2 exceeded" {
		t.Fatalf("last request %#v", reqs[len(reqs)-1].Body)
	}
	if f.count(message.KindAbortFeed) != 1 {
		t.Fatal("aborted more than once")
	}
	// The session is kept, and the count restarts with the next feed.
	if got, err := s.Feed(bg, "1"); err != nil || got.Body.EventKind() != message.KindComplete {
		t.Fatalf("next feed: %v %v", got, err)
	}
	if _, err := s.Feed(bg, "loop()"); err != nil || s.SuspensionCount() != 1 {
		t.Fatalf("count after a new feed: %d, %v", s.SuspensionCount(), err)
	}
}

func TestFakeSuspensionLimitAdoptsStamp(t *testing.T) {
	s, f := startFake(t, Config{}, suspender(1))
	if _, err := s.Feed(bg, "loop()"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Resume(bg, Return(nil))
	var sl *SuspensionLimitError
	if !errors.As(err, &sl) || sl.Limit != 1 || f.count(message.KindAbortFeed) != 1 {
		t.Fatalf("got %v", err)
	}
}

func TestFakeSuspensionLimitLowerOfOwnAndStamp(t *testing.T) {
	s, _ := startFake(t, Config{Limits: Limits{MaxSuspensions: 5}}, suspender(3))
	s.Feed(bg, "loop()")
	if s.SuspensionLimit() != 3 {
		t.Fatalf("limit %d", s.SuspensionLimit())
	}
}

func TestFakeAbortAnsweredWithSuspensionIsProtocolError(t *testing.T) {
	var next uint32
	s, f := startFake(t, Config{Limits: Limits{MaxSuspensions: 1}}, func(req *message.ParentRequest) fakeReply {
		// Every request, AbortFeed included, gets another FunctionCall.
		next++
		return reply(funcCall("f", next))
	})
	s.Feed(bg, "loop()")
	_, err := s.Resume(bg, Return(nil))
	var pe *ProtocolError
	if !errors.As(err, &pe) || pe.Msg != "worker answered AbortFeed with something other than an Error" {
		t.Fatalf("got %v", err)
	}
	if Survives(err) || s.State() != StateClosed || f.count(message.KindAbortFeed) != 1 {
		t.Fatalf("survives %v state %v aborts %d", Survives(err), s.State(), f.count(message.KindAbortFeed))
	}
	if _, err := s.Feed(bg, "1"); !errors.Is(err, ErrClosed) || !errors.As(err, &pe) {
		t.Fatalf("later call: %v", err)
	}
}

func TestFakeExplicitAbortFeed(t *testing.T) {
	s, _ := startFake(t, Config{}, suspender(1000))
	s.Feed(bg, "loop()")
	got, err := s.AbortFeed(bg, message.NewException("TimeoutError", "host stopped the feed"))
	if err != nil || got.Body.(*message.Error).Exception.Type != "TimeoutError" || s.State() != StateIdle {
		t.Fatalf("abort: %v %v %v", got, err, s.State())
	}
	if _, err := s.AbortFeed(bg, message.NewException("RuntimeError", "x")); err != ErrNotSuspended {
		t.Fatalf("abort while idle: %v", err)
	}
}

func TestFakeWatchdogOwnLimit(t *testing.T) {
	s, _ := startFake(t, Config{Limits: Limits{MaxDuration: 30 * time.Millisecond}, WatchdogGrace: 50 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	t0 := time.Now()
	_, err := s.Feed(bg, "while True: pass")
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Watchdog || !te.Killed || te.Budget != 30*time.Millisecond {
		t.Fatalf("got %#v", err)
	}
	if d := time.Since(t0); d < 70*time.Millisecond || d > hangBound {
		t.Fatalf("watchdog fired after %v, want about 80ms", d)
	}
	if s.State() != StateClosed || Survives(err) {
		t.Fatalf("state %v", s.State())
	}
}

func TestFakeWatchdogAdoptsStampAndRemainingBudget(t *testing.T) {
	budget := uint64(40_000)
	s, _ := startFake(t, Config{WatchdogGrace: 50 * time.Millisecond}, func(req *message.ParentRequest) fakeReply {
		if _, ok := req.Body.(*message.Feed); ok {
			e := funcCall("f", 0)
			e.MaxDurationMicros = &budget
			e.TotalExecutionMicros = 30_000
			return reply(e)
		}
		return fakeReply{hang: true}
	})
	if _, err := s.Feed(bg, "f()"); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	_, err := s.Resume(bg, Return(1))
	d := time.Since(t0)
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Watchdog || te.Budget != 40*time.Millisecond {
		t.Fatalf("got %v", err)
	}
	// (40ms − 30ms used) + 50ms grace.
	if d < 55*time.Millisecond || d > hangBound {
		t.Fatalf("fired after %v, want about 60ms", d)
	}
}

func TestFakeWatchdogIdleBetweenTurns(t *testing.T) {
	var next uint32
	// The budget and grace leave a loaded machine room for the fake's own
	// turns; the pause is well past both.
	s, _ := startFake(t, Config{Limits: Limits{MaxDuration: 100 * time.Millisecond}, WatchdogGrace: 100 * time.Millisecond},
		func(req *message.ParentRequest) fakeReply { next++; return reply(funcCall("f", next)) })
	if _, err := s.Feed(bg, "f()"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // host time is not sandbox time
	if _, err := s.Resume(bg, Return(1)); err != nil {
		t.Fatalf("resume after a long host pause: %v", err)
	}
}

func TestFakeProtocolViolationsDiscardWorker(t *testing.T) {
	cases := []struct {
		name string
		rep  fakeReply
		want string
	}{
		{"unexpected kind", reply(ev(&message.DumpResult{State: []byte{1}})), "unexpected DumpResult event in reply to Feed"},
		{"no kind", fakeReply{raw: [][]byte{{}}, exit: -1}, "unexpected event"},
		{"shutdown dump", reply(ev(&message.ShutdownDump{})), "subprocess worker sent a ShutdownDump"},
		{"undecodable", fakeReply{raw: [][]byte{{0x32, 0x05, 0xff}}, exit: -1}, "invalid payload from worker"},
		{"ok to a feed", reply(ev(&message.Ok{})), "unexpected Ok event in reply to Feed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return c.rep })
			_, err := s.Feed(bg, "1")
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), c.want) || !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if s.State() != StateClosed {
				t.Fatalf("state %v", s.State())
			}
		})
	}
}

func TestFakeFatalErrorIsAnnouncedCrash(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply {
		return fakeReply{events: []*message.ChildEvent{ev(&message.FatalError{Message: "child panicked: boom"})}, exit: 101}
	})
	_, err := s.Feed(bg, "1")
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Announced || ce.Message != "child panicked: boom" || ce.Exit.Code != 101 {
		t.Fatalf("got %#v", err)
	}
}

func TestFakeVanishedExits(t *testing.T) {
	for _, c := range []struct {
		exit   int
		memory bool
	}{{65, true}, {3, false}} {
		t.Run("exit "+strconv.Itoa(c.exit), func(t *testing.T) {
			s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return fakeReply{exit: c.exit} })
			_, err := s.Feed(bg, "'x' * 10**13")
			if c.memory {
				if !errors.Is(err, worker.ErrMemoryLimit) {
					t.Fatalf("exit 65: %v", err)
				}
				return
			}
			var ce *worker.CrashError
			if !errors.As(err, &ce) || ce.Reason != worker.Vanished || ce.Context != worker.ContextWaiting || ce.Exit.Code != c.exit {
				t.Fatalf("exit %d: %#v", c.exit, err)
			}
		})
	}
}

func TestFakeFatalErrorLeftInPipeAfterSendFailure(t *testing.T) {
	// The worker writes a FatalError and exits before reading the request:
	// the send fails, and the crash is still reported as announced.
	fs := &fakeSpawner{bin: fakeBinary(t), handler: func(int) fakeHandler {
		return withConfigure(func(*message.ParentRequest) fakeReply {
			return fakeReply{events: []*message.ChildEvent{ev(&message.Ok{})}, exit: -1}
		})
	}}
	s, err := Start(bg, fs.launch(2), Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := fs.last()
	// The child has written a FatalError and closed its stdin: the frame
	// is waiting in the pipe when the parent's write fails.
	fatal, _ := f.codec.AppendEvent(nil, ev(&message.FatalError{Message: "malformed request frame: stream ended mid-frame"}))
	f.in.set(io.MultiReader(bytes.NewReader(frame.AppendFrame(nil, fatal)), f.evR))
	f.reqR.CloseWithError(syscall.EPIPE)
	<-f.done
	_, err = s.Feed(bg, "1")
	var ce *worker.CrashError
	if !errors.As(err, &ce) {
		t.Fatalf("got %v", err)
	}
	if ce.Reason != worker.Announced || ce.Exit.Code != 76 || !strings.Contains(ce.Message, "stream ended mid-frame") {
		t.Fatalf("crash %#v", ce)
	}
}

func TestFakeOversizeRequestKeepsSession(t *testing.T) {
	s, f := startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Feed:
			return reply(funcCall("f", 0))
		}
		return reply(completeInt(1))
	})
	big := strings.Repeat("x", 2000)
	_, err := s.Feed(bg, big)
	var tl *RequestTooLargeError
	if !errors.As(err, &tl) || tl.Max != 1024 || tl.Len < 2000 || !Survives(err) {
		t.Fatalf("got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "request frame of ") {
		t.Fatalf("text %q", err)
	}
	if _, err := s.Feed(bg, "f()"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resume(bg, Return(big)); !errors.As(err, &tl) || s.State() != StateSuspended {
		t.Fatalf("oversize resume: %v, state %v", err, s.State())
	}
	if ev, err := s.Resume(bg, Return("small")); err != nil || ev.Body.EventKind() != message.KindComplete {
		t.Fatalf("valid retry: %v %v", ev, err)
	}
	if n := f.count(message.KindFeed); n != 1 {
		t.Fatalf("%d feeds reached the worker", n)
	}
}

// An input that does not convert is refused before anything is sent, and
// the error names the input: it said only "cannot convert Go chan int",
// leaving a caller with several inputs to guess which one.
func TestFakeInvalidInputKeepsSession(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	inputs := []Input{{Name: "ok", Value: 1}, {Name: "events", Value: make(chan int)}}
	_, err := s.Feed(bg, "x", inputs...)
	var ir *InvalidRequestError
	if !errors.As(err, &ir) || !Survives(err) || !strings.Contains(err.Error(), `input "events"`) {
		t.Fatalf("Feed: got %v, want an *InvalidRequestError naming input \"events\"", err)
	}
	_, err = s.Run(bg, "x", WithInputs(inputs...))
	if !errors.As(err, &ir) || !Survives(err) || !strings.Contains(err.Error(), `input "events"`) {
		t.Fatalf("Run: got %v, want an *InvalidRequestError naming input \"events\"", err)
	}
	if _, err := s.Feed(bg, "1"); err != nil {
		t.Fatal(err)
	}
}

func TestFakeConcurrentTurnIsBusyAndCloseInterrupts(t *testing.T) {
	s, f := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	errc := make(chan error, 1)
	go func() {
		_, err := s.Feed(bg, "while True: pass")
		errc <- err
	}()
	for f.count(message.KindFeed) == 0 { // the feed is in flight
		time.Sleep(time.Millisecond)
	}
	if _, err := s.Feed(bg, "1"); err != ErrBusy || !Survives(err) {
		t.Fatalf("overlapping feed: %v", err)
	}
	t0 := time.Now()
	s.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("interrupted feed: %v", err)
		}
	case <-time.After(hangBound):
		t.Fatal("Close did not interrupt the turn")
	}
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("Close took %v", d)
	}
	if s.State() != StateClosed {
		t.Fatal(s.State())
	}
	s.Close() // idempotent
}

func TestFakeContextCancelWhileComputingKills(t *testing.T) {
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	ctx, cancel := context.WithTimeout(bg, 40*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := s.Feed(ctx, "while True: pass")
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Killed || te.Watchdog || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("took %v", d)
	}

	s2, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return fakeReply{hang: true} })
	ctx2, cancel2 := context.WithCancelCause(bg)
	time.AfterFunc(20*time.Millisecond, func() { cancel2(errors.New("user hit stop")) })
	_, err = s2.Feed(ctx2, "while True: pass")
	var ce *CanceledError
	if !errors.As(err, &ce) || !ce.Killed || !strings.Contains(err.Error(), "user hit stop") || Survives(err) {
		t.Fatalf("got %v", err)
	}
}

func TestFakeDoneContextSendsNothing(t *testing.T) {
	s, f := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, err := s.Feed(ctx, "1")
	if !errors.Is(err, context.Canceled) || !Survives(err) || f.count(message.KindFeed) != 0 {
		t.Fatalf("got %v", err)
	}
}

func TestFakeTraceParent(t *testing.T) {
	s, f := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(bg, sc)
	if _, err := s.Feed(ctx, "1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Feed(bg, "1"); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	traced, plain := reqs[len(reqs)-2], reqs[len(reqs)-1]
	if traced.TraceParent == nil || *traced.TraceParent != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("traceparent %v", traced.TraceParent)
	}
	if plain.TraceParent != nil {
		t.Fatalf("untraced request carries %q", *plain.TraceParent)
	}
}

func TestFakeLoadAdoptsDumpLimitsAndRefusedLoadKeepsCount(t *testing.T) {
	s, _ := startFake(t, Config{Limits: Limits{MaxSuspensions: 50}}, func(req *message.ParentRequest) fakeReply {
		switch b := req.Body.(type) {
		case *message.Load:
			if string(b.State) == "bad" {
				return reply(violation("failed to load session: not a monty dump"))
			}
			name := "restored.py"
			e := stamp(funcCall("f", 3), 1)
			e.RestoredScriptName = &name
			return reply(e)
		case *message.ResumeCall:
			return reply(stamp(funcCall("f", 4), 1))
		case *message.AbortFeed:
			return reply(stamp(ev(&message.Error{Exception: b.Exception}), 1))
		}
		return reply(violation("unexpected"))
	})
	_, err := s.Load(bg, []byte("bad"))
	var pe *PythonError
	if !errors.As(err, &pe) || !Survives(err) || s.State() != StateIdle {
		t.Fatalf("refused load: %v", err)
	}
	got, err := s.Load(bg, []byte("good"))
	if err != nil || got.Body.(*message.FunctionCall).CallID != 3 || s.State() != StateSuspended {
		t.Fatalf("load: %v %v", got, err)
	}
	if s.SuspensionLimit() != 1 || s.SuspensionCount() != 1 {
		t.Fatalf("limit %d count %d after load", s.SuspensionLimit(), s.SuspensionCount())
	}
	_, err = s.Resume(bg, Return(nil))
	var sl *SuspensionLimitError
	if !errors.As(err, &sl) || sl.Limit != 1 {
		t.Fatalf("resume after load: %v", err)
	}
}

func TestFakeResetReconfigures(t *testing.T) {
	s, f := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Reset:
			return reply(ev(&message.Ok{}))
		case *message.Feed:
			return reply(funcCall("f", 0))
		}
		return reply(violation("unexpected"))
	})
	s.Feed(bg, "f()")
	if err := s.Reset(bg); err != nil {
		t.Fatal(err)
	}
	if s.State() != StateIdle || f.count(message.KindConfigure) != 2 {
		t.Fatalf("state %v, %d configures", s.State(), f.count(message.KindConfigure))
	}
}

func TestFakeShutdown(t *testing.T) {
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		return fakeReply{events: []*message.ChildEvent{ev(&message.Ok{})}, exit: 0}
	})
	if err := s.Shutdown(bg); err != nil {
		t.Fatal(err)
	}
	if s.State() != StateClosed {
		t.Fatal(s.State())
	}
	if _, err := s.Feed(bg, "1"); !errors.Is(err, ErrClosed) {
		t.Fatalf("after shutdown: %v", err)
	}
}

// A Shutdown sent raw through Do ends the worker as Shutdown does: the
// session is closed and not reusable. Before, it stayed idle and Reusable
// said nil, so a pool asked the exiting worker for a Reset and counted a
// crash.
func TestFakeShutdownThroughDoClosesSession(t *testing.T) {
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		return fakeReply{events: []*message.ChildEvent{ev(&message.Ok{})}, exit: 0}
	})
	if _, err := s.Do(bg, &message.Shutdown{}); err != nil {
		t.Fatal(err)
	}
	if s.State() != StateClosed {
		t.Errorf("state %v, want closed", s.State())
	}
	if err := s.Reusable(); !errors.Is(err, ErrClosed) {
		t.Errorf("Reusable: %v, want ErrClosed", err)
	}
	if s.Cause() != nil {
		t.Errorf("Cause %v, want none for a clean shutdown", s.Cause())
	}
}

func TestFakePrintSink(t *testing.T) {
	var got []string
	s, _ := startFake(t, Config{Print: func(st message.PrintStream, text string) {
		got = append(got, st.String()+":"+text)
	}}, func(*message.ParentRequest) fakeReply {
		p := func(t string) *message.ChildEvent {
			return ev(&message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: t}}})
		}
		return reply(p("a\n"), p("b\n"), completeInt(1))
	})
	if _, err := s.Feed(bg, "print('a'); print('b')"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "stdout:a\n|stdout:b\n" {
		t.Fatalf("got %q", got)
	}
}

// v2Only behaves like the released worker's version check.
func v2Only(req *message.ParentRequest) fakeReply {
	if c, ok := req.Body.(*message.Configure); ok {
		if err := protocol.CheckVersion(c.ProtocolVersion, protocol.VersionRange{Min: 2, Max: 2}); err != nil {
			return fakeReply{events: []*message.ChildEvent{ev(&message.FatalError{Message: err.Error()})}, exit: 4}
		}
		return reply(ev(&message.Ok{}))
	}
	return reply(completeInt(3))
}

func TestFakeNegotiationDowngradesAndCaches(t *testing.T) {
	ours, _ := ourRange()
	if ours.Max <= 2 {
		t.Skip("only protocol 2 is linked in")
	}
	fs := &fakeSpawner{bin: fakeBinary(t), handler: func(int) fakeHandler { return v2Only }}
	s, err := Start(bg, fs.launch(0), Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := s.Negotiation()
	if n.Version != 2 || n.Attempts != 2 || n.FromCache || n.Worker != (protocol.VersionRange{Min: 2, Max: 2}) {
		t.Fatalf("negotiation %+v", n)
	}
	first := fs.children[0].requests()[0].Body.(*message.Configure)
	if first.ProtocolVersion != ours.Max {
		t.Fatalf("first attempt used version %d", first.ProtocolVersion)
	}
	s2, err := Start(bg, fs.launch(0), Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if n := s2.Negotiation(); n.Version != 2 || n.Attempts != 1 || !n.FromCache {
		t.Fatalf("second negotiation %+v", n)
	}
	if len(fs.children) != 3 {
		t.Fatalf("%d workers started", len(fs.children))
	}
}

func TestFakeVersionMismatch(t *testing.T) {
	only9 := func(req *message.ParentRequest) fakeReply {
		c := req.Body.(*message.Configure)
		err := protocol.CheckVersion(c.ProtocolVersion, protocol.VersionRange{Min: 9, Max: 11})
		return fakeReply{events: []*message.ChildEvent{ev(&message.FatalError{Message: err.Error()})}, exit: 4}
	}
	fs := &fakeSpawner{bin: fakeBinary(t), handler: func(int) fakeHandler { return only9 }}
	_, err := Start(bg, fs.launch(0), Config{Logger: quietLogger})
	var vm *VersionMismatchError
	if !errors.As(err, &vm) || vm.Worker != (protocol.VersionRange{Min: 9, Max: 11}) || len(fs.children) != 1 {
		t.Fatalf("got %v after %d workers", err, len(fs.children))
	}
	if !strings.Contains(err.Error(), "worker "+fs.bin+" speaks versions 9 to 11") {
		t.Fatalf("text %q", err)
	}

	// A pinned version is never downgraded.
	fs2 := &fakeSpawner{bin: fakeBinary(t), handler: func(int) fakeHandler { return v2Only }}
	ours, _ := ourRange()
	if ours.Max > 2 {
		_, err = Start(bg, fs2.launch(ours.Max), Config{Logger: quietLogger})
		if !errors.As(err, &vm) || vm.Ours.Min != ours.Max || len(fs2.children) != 1 {
			t.Fatalf("pinned: %v", err)
		}
	}
}

func TestFakeCallIDsMustAdvance(t *testing.T) {
	for name, second := range map[string]*message.ChildEvent{
		"reused":    funcCall("f", 3),
		"backwards": funcCall("f", 2),
	} {
		t.Run(name, func(t *testing.T) {
			n := 0
			s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
				n++
				if n == 1 {
					return reply(funcCall("f", 3))
				}
				return reply(second)
			})
			if _, err := s.Feed(bg, "f(); f()"); err != nil {
				t.Fatal(err)
			}
			_, err := s.Resume(bg, Return(nil))
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "after call id 3 in the same feed") || Survives(err) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestFakeUnregisteredPendingFutureIsProtocolError(t *testing.T) {
	n := 0
	s, _ := startFake(t, Config{}, func(req *message.ParentRequest) fakeReply {
		n++
		if n == 1 {
			return reply(funcCall("f", 0))
		}
		// The parent registered a future under 0 only.
		return reply(ev(&message.ResolveFutures{PendingCallIDs: []uint32{0, 9}}))
	})
	if _, err := s.Feed(bg, "await f()"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Resume(bg, AsFuture())
	var pe *ProtocolError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "call id 9 as a pending future") {
		t.Fatalf("got %v", err)
	}
}

// A watchdog fire that belongs to an earlier arming (its timer expired as
// that turn ended, and the callback ran late, once the next turn had armed
// the timer again) must not kill the next turn: only a fire at or past
// the deadline of the turn in flight counts. Before, the late callback
// killed a healthy turn with a watchdog TimeoutError.
func TestFakeStaleWatchdogFireSparesNextTurn(t *testing.T) {
	var s *Session
	s, _ = startFake(t, Config{Limits: Limits{MaxDuration: time.Hour}},
		func(req *message.ParentRequest) fakeReply {
			if _, ok := req.Body.(*message.Feed); ok {
				s.watchdogFire() // the late callback, mid-turn
			}
			return reply(completeInt(7))
		})
	r, err := s.Run(bg, "7")
	if err != nil {
		t.Fatalf("a stale watchdog fire ended the turn: %v", err)
	}
	if r.Repr() != "7" || s.State() != StateIdle {
		t.Fatalf("got %s in state %v", r.Repr(), s.State())
	}
}

// A duration limit near the largest Duration (just under math.MaxInt64,
// which is NoDurationLimit and sends none) arms a watchdog that never fires, at every protocol. Before,
// the budget plus the grace overflowed to a negative delay, so the
// watchdog fired at once and killed every turn.
func TestFakeHugeDurationLimitDoesNotKill(t *testing.T) {
	cases := []struct {
		name    string
		version uint32
		lim     Limits
	}{
		{"max_duration", 2, Limits{MaxDuration: math.MaxInt64 - 1}},
		{"v5 feed", 5, Limits{MaxFeedDuration: math.MaxInt64}},
		{"v5 turn", 5, Limits{MaxTurnDuration: math.MaxInt64}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := startFakeOpts(t, fakeOpts{version: c.version}, Config{Limits: c.lim},
				func(req *message.ParentRequest) fakeReply { return reply(completeInt(7)) })
			if _, err := s.Run(bg, "7"); err != nil {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// A context ended with a cause (errgroup.WithContext cancels its context
// with the first failure as the cause) still reads as a cancellation or a
// deadline: the errors match context.Canceled or
// context.DeadlineExceeded, as well as the cause. Before, their chains
// held only the cause, so errors.Is(err, context.Canceled) was false.
func TestFakeContextCauseStillMatchesContextError(t *testing.T) {
	boom := errors.New("sibling failed")
	cases := []struct {
		name string
		ctx  func() context.Context
		want error
	}{
		{"cancel cause", func() context.Context {
			ctx, cancel := context.WithCancelCause(bg)
			cancel(boom)
			return ctx
		}, context.Canceled},
		{"timeout cause", func() context.Context {
			ctx, cancel := context.WithDeadlineCause(bg, time.Unix(1, 0), boom)
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
			_, err := s.Feed(c.ctx(), "1")
			if !errors.Is(err, c.want) || !errors.Is(err, boom) {
				t.Fatalf("got %v, want it to match %v and the cause", err, c.want)
			}
		})
	}
	// A watchdog timeout had no context: it matches neither.
	wd := &TimeoutError{Watchdog: true, Killed: true}
	if errors.Is(wd, context.DeadlineExceeded) || !errors.Is(wd, ErrTimeout) {
		t.Fatal("a watchdog TimeoutError matches context.DeadlineExceeded")
	}
}
