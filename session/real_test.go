//go:build unix

package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// These tests run the real worker installed by scripts/install-worker.sh.
// Without it they are skipped, except under CI=true, where a missing
// worker fails them.

func requireWorker(t testing.TB) string {
	t.Helper()
	bin, err := worker.ResolveBinary("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the real worker is required under CI: %v", err)
		}
		t.Skipf("no worker binary: %v", err)
	}
	return bin
}

func realSession(t testing.TB, cfg Config) *Session {
	t.Helper()
	requireWorker(t)
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	s, err := Start(context.Background(), realLaunch, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func run(t *testing.T, s *Session, code string, opts ...RunOption) *Result {
	t.Helper()
	r, err := s.Run(context.Background(), code, opts...)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return r
}

func pyErr(t *testing.T, err error, typ string) *PythonError {
	t.Helper()
	var pe *PythonError
	if !errors.As(err, &pe) || pe.Type() != typ {
		t.Fatalf("got %v, want a Python %s", err, typ)
	}
	if !Survives(err) {
		t.Fatal("a Python error must leave the session usable")
	}
	return pe
}

func TestRealOnePlusTwo(t *testing.T) {
	s := realSession(t, Config{})
	r := run(t, s, "1 + 2")
	var n int
	if err := r.Decode(&n); err != nil || n != 3 || r.Repr() != "3" {
		t.Fatalf("got %d (%v), repr %q", n, err, r.Repr())
	}
	if s.State() != StateIdle || s.Pid() <= 0 {
		t.Fatalf("state %v pid %d", s.State(), s.Pid())
	}
}

func TestRealGlobalsPersistAndInputs(t *testing.T) {
	s := realSession(t, Config{})
	run(t, s, "x = 40")
	if got := run(t, s, "x + 2").Repr(); got != "42" {
		t.Fatalf("x + 2 = %s", got)
	}
	_, err := s.Run(context.Background(), "1 / 0")
	pe := pyErr(t, err, "ZeroDivisionError")
	if !strings.Contains(pe.Traceback(), "1 / 0") {
		t.Fatalf("traceback %q", pe.Traceback())
	}
	// Globals survive the error; inputs bind new ones.
	r := run(t, s, "[x, a + b]", WithInputs(Input{"a", 1}, Input{"b", 2}))
	var got []int
	if err := r.Decode(&got); err != nil || fmt.Sprint(got) != "[40 3]" {
		t.Fatalf("got %v %v", got, err)
	}
}

func TestRealPrintStreamingInOrder(t *testing.T) {
	var out bytes.Buffer
	s := realSession(t, Config{LineBufferedPrint: true, Print: Writers(&out, nil)})
	var seenAtCall string
	reg := NewRegistry().MustRegister("mark", func() { seenAtCall = out.String() })
	run(t, s, "print('a')\nprint('b', end='')\nmark()\nprint('c')\nfor i in range(3): print(i)",
		WithFunctions(reg))
	if out.String() != "a\nbc\n0\n1\n2\n" {
		t.Fatalf("stdout %q", out.String())
	}
	if seenAtCall != "a\nb" {
		t.Fatalf("output before the host call: %q", seenAtCall)
	}
}

func TestRealHostFunctions(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry()
	reg.MustRegister("repeat", func(ctx context.Context, text string, n int) (string, error) {
		return strings.Repeat(text, n), nil
	})
	reg.MustRegister("total", func(xs ...float64) float64 {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		return sum
	})
	reg.MustRegister("fail", func() error { return errors.New("disk on fire") })
	reg.MustRegister("picky", func() error { return message.NewException("ValueError", "bad value") })
	reg.MustRegister("raw", func(ctx context.Context, c *Call) (any, error) {
		v, ok := c.Kwarg("k")
		if !ok {
			return nil, message.NewException("KeyError", "k")
		}
		return map[string]any{"n": c.NumArgs(), "k": v}, nil
	})
	reg.SetValue("limit", 10)
	with := WithFunctions(reg)

	if got := run(t, s, "repeat('ab', 3)", with).Repr(); got != "'ababab'" {
		t.Fatalf("repeat: %s", got)
	}
	if got := run(t, s, "total(1, 2.5, 3)", with).Repr(); got != "6.5" {
		t.Fatalf("total: %s", got)
	}
	if got := run(t, s, "raw(1, 2, k=[3])", with).Repr(); got != "{'k': [3], 'n': 2}" {
		t.Fatalf("raw: %s", got)
	}
	// Bad arguments are a TypeError the sandbox can catch.
	got := run(t, s, "try:\n    repeat(1, 2)\nexcept TypeError as e:\n    r = str(e)\nr", with).Str()
	if !strings.Contains(got, "repeat() argument 1") {
		t.Fatalf("bad argument: %q", got)
	}
	_, err := s.Run(context.Background(), "repeat('a')", with)
	if pe := pyErr(t, err, "TypeError"); !strings.Contains(pe.Exception.Msg(), "takes 2 positional arguments but 1 was given") {
		t.Fatalf("arity: %v", err)
	}
	_, err = s.Run(context.Background(), "repeat('a', n=2)", with)
	pyErr(t, err, "TypeError")
	// Go errors raise RuntimeError; a RaisedException raises its own type.
	_, err = s.Run(context.Background(), "fail()", with)
	if pe := pyErr(t, err, "RuntimeError"); pe.Exception.Msg() != "disk on fire" {
		t.Fatalf("go error: %v", err)
	}
	if got := run(t, s, "try:\n    picky()\nexcept ValueError as e:\n    r = 'caught ' + str(e)\nr", with).Str(); got != "caught bad value" {
		t.Fatalf("raised exception: %q", got)
	}
	// Unknown names are NameErrors, for calls and for reads.
	_, err = s.Run(context.Background(), "nosuch(1)", with)
	pyErr(t, err, "NameError")
	_, err = s.Run(context.Background(), "y = nosuch_value", with)
	pyErr(t, err, "NameError")
	// Registered values and functions resolve by name lookup.
	if got := run(t, s, "limit * 2", with).Repr(); got != "20" {
		t.Fatalf("value lookup: %s", got)
	}
	if got := run(t, s, "g = repeat\ng('z', limit // 5)", with).Repr(); got != "'zz'" {
		t.Fatalf("function lookup: %s", got)
	}
}

func TestRealAsyncGatherRunsConcurrently(t *testing.T) {
	s := realSession(t, Config{})
	// Barriers instead of timing: every call waits until all three have
	// started (impossible unless they overlap), then they finish in the
	// order 1, 2, 3 (not the call order 3, 1, 2), each after the previous.
	var (
		mu      sync.Mutex
		order   []int
		started sync.WaitGroup
	)
	started.Add(3)
	all := make(chan struct{})
	go func() { started.Wait(); close(all) }()
	finished := map[int]chan struct{}{0: make(chan struct{}), 1: make(chan struct{}), 2: make(chan struct{}), 3: make(chan struct{})}
	close(finished[0])
	reg := NewRegistry().MustRegister("slow", func(ctx context.Context, n int) (int, error) {
		started.Done()
		for _, wait := range []chan struct{}{all, finished[n-1]} {
			select {
			case <-wait:
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(10 * time.Second):
				return 0, fmt.Errorf("call %d: the calls did not overlap", n)
			}
		}
		mu.Lock()
		order = append(order, n)
		mu.Unlock()
		close(finished[n])
		return n * 10, nil
	}, Async())
	r := run(t, s, "import asyncio\nawait asyncio.gather(slow(3), slow(1), slow(2))", WithFunctions(reg))
	if r.Repr() != "[30, 10, 20]" {
		t.Fatalf("gather: %s", r.Repr())
	}
	if fmt.Sprint(order) != "[1 2 3]" {
		t.Fatalf("completion order %v, want out of call order", order)
	}
}

func TestRealAsyncErrorsAndUnawaitedFutures(t *testing.T) {
	s := realSession(t, Config{})
	started := make(chan struct{})
	reg := NewRegistry().
		MustRegister("boom", func(ctx context.Context) (int, error) {
			return 0, message.NewException("ValueError", "async boom")
		}, Async()).
		MustRegister("forever", func(ctx context.Context) (int, error) {
			close(started)
			<-ctx.Done() // joined when the feed ends
			return 0, ctx.Err()
		}, Async())
	got := run(t, s, "import asyncio\ntry:\n    await asyncio.gather(boom())\nexcept ValueError as e:\n    r = str(e)\nr", WithFunctions(reg))
	if got.Str() != "async boom" {
		t.Fatalf("got %q", got.Str())
	}
	// A future that is never awaited: the feed completes and its goroutine
	// is cancelled and joined (goleak checks).
	r := run(t, s, "c = forever()\n'done'", WithFunctions(reg))
	if r.Str() != "done" {
		t.Fatal(r.Repr())
	}
	<-started
}

func TestRealOSCalls(t *testing.T) {
	s := realSession(t, Config{})
	_, err := s.Run(context.Background(), "from pathlib import Path\nPath('/etc/passwd').read_text()")
	if pe := pyErr(t, err, "PermissionError"); !strings.Contains(pe.Exception.Msg(), "/etc/passwd") {
		t.Fatalf("refused read: %v", err)
	}
	h := OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
		switch c.Op {
		case message.OpExists:
			rc := &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultReturn}}
			rc.Result.Value = rc.Values.Add(value.Bool(c.Path == "/data"))
			return rc, nil
		case message.OpReadText:
			return nil, os.ErrNotExist
		}
		return nil, ErrNotHandled
	})
	r := run(t, s, "from pathlib import Path\n[Path('/data').exists(), Path('/x').exists()]", WithOS(h))
	if r.Repr() != "[True, False]" {
		t.Fatalf("exists: %s", r.Repr())
	}
	_, err = s.Run(context.Background(), "from pathlib import Path\nPath('/data').read_text()", WithOS(h))
	pyErr(t, err, "FileNotFoundError")
	_, err = s.Run(context.Background(), "from pathlib import Path\nPath('/data').unlink()", WithOS(h))
	pyErr(t, err, "PermissionError")
}

func TestRealDumpLoadIdleAndSuspended(t *testing.T) {
	ctx := context.Background()
	s := realSession(t, Config{ScriptName: "job.py"})
	run(t, s, "x = 5")
	state, err := s.Dump(ctx)
	if err != nil || len(state) == 0 {
		t.Fatalf("dump: %v", err)
	}
	fresh := realSession(t, Config{})
	ok, err := fresh.Load(ctx, state)
	if err != nil || ok.Body.EventKind() != message.KindOk || ok.RestoredScriptName == nil || *ok.RestoredScriptName != "job.py" {
		t.Fatalf("load idle: %v %v", ok, err)
	}
	if got := run(t, fresh, "x + 1").Repr(); got != "6" {
		t.Fatalf("after load: %s", got)
	}

	// Suspended: dump while waiting on f, resume in another worker.
	ev, err := s.Feed(ctx, "y = 10\nr = f(2)\nr * y")
	if err != nil || ev.Body.EventKind() != message.KindFunctionCall {
		t.Fatalf("feed: %v %v", ev, err)
	}
	state, err = s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.State() != StateSuspended {
		t.Fatal("Dump changed the state")
	}
	other := realSession(t, Config{})
	re, err := other.Load(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	fc, ok2 := re.Body.(*message.FunctionCall)
	if !ok2 || fc.FunctionName != "f" || other.State() != StateSuspended {
		t.Fatalf("re-announced %v", re.Body)
	}
	done, err := other.Resume(ctx, Return(7))
	if err != nil {
		t.Fatal(err)
	}
	c := done.Body.(*message.Complete)
	if got := c.Values.Repr(c.Value); got != "70" {
		t.Fatalf("resumed after load: %s", got)
	}
	// And the high-level way: Continue with a registry.
	third := realSession(t, Config{})
	if _, err := third.Load(ctx, state); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry().MustRegister("f", func(n int) int { return n * 100 })
	r, err := third.Continue(ctx, WithFunctions(reg))
	if err != nil || r.Repr() != "2000" {
		t.Fatalf("continue: %v %v", r, err)
	}
	// Load is refused once a feed has run, and the session carries on.
	_, err = fresh.Load(ctx, state)
	pyErr(t, err, "RuntimeError")
	if got := run(t, fresh, "x").Repr(); got != "5" {
		t.Fatal(got)
	}
}

func TestRealResetReuse(t *testing.T) {
	s := realSession(t, Config{})
	run(t, s, "x = 1")
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err := s.Run(context.Background(), "x")
	pyErr(t, err, "NameError")
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatal(got)
	}
}

func TestRealSuspensionLimit(t *testing.T) {
	s := realSession(t, Config{Limits: Limits{MaxSuspensions: 3}})
	calls := 0
	reg := NewRegistry().MustRegister("f", func(i int) int { calls++; return i })
	_, err := s.Run(context.Background(), "for i in range(10): f(i)", WithFunctions(reg))
	var sl *SuspensionLimitError
	if !errors.As(err, &sl) || sl.Limit != 3 || calls != 3 || !Survives(err) {
		t.Fatalf("got %v after %d calls", err, calls)
	}
	if sl.Exception.Type != "RuntimeError" || sl.Exception.Msg() != "suspension limit 3 exceeded" || len(sl.Exception.Traceback) == 0 {
		t.Fatalf("abort exception %+v", sl.Exception)
	}
	if got := run(t, s, "1 + 2").Repr(); got != "3" {
		t.Fatal(got)
	}
	if got := run(t, s, "f(1) + f(2)", WithFunctions(reg)).Repr(); got != "3" {
		t.Fatal(got)
	}
}

func TestRealContextEndsWhileComputing(t *testing.T) {
	s := realSession(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := s.Run(ctx, "while True: pass")
	var te *TimeoutError
	if !errors.As(err, &te) || !te.Killed || !errors.Is(err, context.DeadlineExceeded) || Survives(err) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("took %v", d)
	}
	if s.State() != StateClosed {
		t.Fatal(s.State())
	}

	s2 := realSession(t, Config{})
	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel2)
	_, err = s2.Run(ctx2, "while True: pass")
	var ce *CanceledError
	if !errors.As(err, &ce) || !ce.Killed || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestRealContextEndsWhileSuspendedAbortsFeed(t *testing.T) {
	s := realSession(t, Config{})
	entered := make(chan struct{})
	reg := NewRegistry().MustRegister("wait", func(ctx context.Context) (int, error) {
		close(entered)
		<-ctx.Done()
		return 0, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-entered; cancel() }()
	t0 := time.Now()
	_, err := s.Run(ctx, "before = 1\nwait()\nafter = 2", WithFunctions(reg))
	var ce *CanceledError
	if !errors.As(err, &ce) || ce.Killed || !errors.Is(err, context.Canceled) || !Survives(err) {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("took %v", d)
	}
	if s.State() != StateIdle {
		t.Fatal(s.State())
	}
	// The session is kept, with what ran before the suspension.
	if got := run(t, s, "before").Repr(); got != "1" {
		t.Fatal(got)
	}
	_, err = s.Run(context.Background(), "after")
	pyErr(t, err, "NameError")

	// A deadline while a synchronous host call runs. It passes once the
	// call is entered: a fixed 300 ms could pass before a loaded machine
	// had the worker's call back, and the computing worker would be killed.
	s2 := realSession(t, Config{})
	ctx2 := testenv.NewReachedDeadline()
	_, err = s2.Run(ctx2, "wait2()", WithFunctions(NewRegistry().MustRegister("wait2",
		func(ctx context.Context) error { ctx2.Reached(); <-ctx.Done(); return ctx.Err() })))
	var te *TimeoutError
	if !errors.As(err, &te) || te.Killed || !errors.Is(err, context.DeadlineExceeded) || !Survives(err) {
		t.Fatalf("got %v", err)
	}
	if got := run(t, s2, "3").Repr(); got != "3" {
		t.Fatal(got)
	}

	// A cancellation while the feed waits for futures.
	s3 := realSession(t, Config{})
	started := make(chan struct{}, 2)
	reg3 := NewRegistry().MustRegister("never", func(ctx context.Context) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		return 0, ctx.Err()
	}, Async())
	ctx3, cancel3 := context.WithCancel(context.Background())
	// Barrier: the Run waits for the futures (the worker is suspended on
	// ResolveFutures) once both calls have started.
	var waits sync.Once
	s3.waitingHook = func() {
		waits.Do(func() {
			go func() {
				<-started
				<-started
				cancel3()
			}()
		})
	}
	_, err = s3.Run(ctx3, "import asyncio\nawait asyncio.gather(never(), never())", WithFunctions(reg3))
	if !errors.As(err, &ce) || ce.Killed || !Survives(err) {
		t.Fatalf("got %v", err)
	}
	if got := run(t, s3, "4").Repr(); got != "4" {
		t.Fatal(got)
	}
}

func TestRealKilledMidTurnIsCrash(t *testing.T) {
	s := realSession(t, Config{})
	time.AfterFunc(100*time.Millisecond, func() { syscall.Kill(s.Pid(), syscall.SIGKILL) })
	_, err := s.Run(context.Background(), "while True: pass")
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Vanished || ce.Exit.Signal != syscall.SIGKILL || Survives(err) {
		t.Fatalf("got %#v", err)
	}
	if _, err := s.Run(context.Background(), "1"); !errors.Is(err, ErrClosed) || !errors.Is(err, worker.ErrCrashed) {
		t.Fatalf("later run: %v", err)
	}
}

func TestRealMemoryLimits(t *testing.T) {
	s := realSession(t, Config{Limits: Limits{MaxMemory: 1 << 20}})
	_, err := s.Run(context.Background(), "[0] * 10**7")
	if pe := pyErr(t, err, "MemoryError"); !strings.Contains(pe.Exception.Msg(), "memory limit exceeded") {
		t.Fatalf("checked allocation: %v", err)
	}
	if got := run(t, s, "1 + 1").Repr(); got != "2" {
		t.Fatal(got)
	}

	// The zero Limits cap memory at DefaultMaxMemory: the allocation the
	// worker would otherwise attempt (and die of, below) is a MemoryError
	// the session survives.
	s0 := realSession(t, Config{})
	_, err = s0.Run(context.Background(), "'x' * 10**13")
	if pe := pyErr(t, err, "MemoryError"); !strings.HasSuffix(pe.Exception.Msg(), fmt.Sprintf(" > %d bytes", DefaultMaxMemory)) {
		t.Fatalf("default limit: %v", err)
	}
	if got := run(t, s0, "len('x' * 10**7)").Repr(); got != "10000000" {
		t.Fatal(got)
	}

	s2 := realSession(t, Config{Limits: Limits{MaxMemory: NoMemoryLimit}})
	_, err = s2.Run(context.Background(), "'x' * 10**13")
	var me *worker.MemoryLimitError
	if !errors.As(err, &me) || !errors.Is(err, worker.ErrMemoryLimit) || me.Exit.Code != 65 || Survives(err) {
		t.Fatalf("allocator ceiling: %#v", err)
	}
	if err.Error() != "the worker exceeded its memory limit and was terminated" {
		t.Fatal(err)
	}
}

func TestRealMaxDuration(t *testing.T) {
	s := realSession(t, Config{Limits: Limits{MaxDuration: 200 * time.Millisecond}})
	t0 := time.Now()
	_, err := s.Run(context.Background(), "while True: pass")
	if pe := pyErr(t, err, "TimeoutError"); !strings.Contains(pe.Exception.Msg(), "time limit exceeded") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("took %v", d)
	}
	if s.State() != StateIdle || s.Stamps().TotalExecution < 200*time.Millisecond {
		t.Fatalf("state %v stamps %+v", s.State(), s.Stamps())
	}
	if s.Version() >= 5 || os.Getenv("MONTY_REQUIRE_PROTOCOL") == "5" {
		// Protocol 5 has no cumulative budget: MaxDuration travels as
		// the per-feed limit, which the worker reports by name, and a
		// trip leaves the heap untrustworthy, so the session is Reset.
		// The same holds for a session at 4 or 2 whose worker speaks 5
		// behind a relay or server (relay-suites.sh at 5).
		if pe := pyErr(t, err, "TimeoutError"); !strings.HasPrefix(pe.Exception.Msg(), "feed time limit exceeded: ") {
			t.Fatalf("got %v", err)
		}
		if s.isRemote() {
			return // single-use: nothing to Reset
		}
		if err := s.Reset(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := run(t, s, "1").Repr(); got != "1" {
			t.Fatal(got)
		}
		return
	}
	// The budget is spent: the session survives, but later feeds fail at
	// once with the same error.
	_, err = s.Run(context.Background(), "1")
	pyErr(t, err, "TimeoutError")
}

func TestRealTypeCheck(t *testing.T) {
	s := realSession(t, Config{TypeCheck: true})
	_, err := s.Run(context.Background(), "x: int = 'a'")
	var tc *TypeCheckError
	if !errors.As(err, &tc) || !strings.Contains(tc.Diagnostics, "invalid-assignment") || !Survives(err) {
		t.Fatalf("got %v", err)
	}
	if got := run(t, s, "x: int = 3\nx").Repr(); got != "3" {
		t.Fatal(got)
	}
	if got := run(t, s, "y: int = 'a'\ny", WithSkipTypeCheck()).Repr(); got != "'a'" {
		t.Fatal(got)
	}
}

func TestRealNegotiationDowngradeIsCached(t *testing.T) {
	bin := requireWorker(t)
	ours, _ := ourRange()
	if ours.Max <= 2 {
		t.Skip("only protocol 2 is linked in")
	}
	key, _ := keyFor(bin)
	versionCache.Delete(key)
	s := realSession(t, Config{})
	n := s.Negotiation()
	if n.Version == ours.Max && n.Attempts == 1 && !n.FromCache {
		// A worker that speaks our highest version needs no downgrade.
		t.Skipf("the worker speaks protocol %d: no downgrade to check", n.Version)
	}
	// The released worker refuses 5 naming only 2; the relay (`montygo
	// subprocess`) refuses it naming 2 to 4. Either way the second worker
	// is configured with the highest version both sides speak.
	common, ok := ours.Intersect(n.Worker)
	hi, found := codec.Highest(common)
	if !ok || !found {
		t.Fatalf("no common version: ours %v, worker %v", ours, n.Worker)
	}
	want := hi.Version()
	if n.Version != want || s.Version() != want || n.Attempts != 2 || n.FromCache {
		t.Fatalf("first negotiation %+v, want %d on the second attempt", n, want)
	}
	if got := run(t, s, "1 + 2").Repr(); got != "3" {
		t.Fatal(got)
	}
	s2 := realSession(t, Config{})
	if n2 := s2.Negotiation(); n2.Version != want || n2.Attempts != 1 || !n2.FromCache {
		t.Fatalf("second negotiation %+v", n2)
	}
	_, err := Start(context.Background(), Launch{ProtocolVersion: ours.Max}, Config{Logger: quietLogger})
	var vm *VersionMismatchError
	if !errors.As(err, &vm) || vm.Worker != n.Worker {
		t.Fatalf("pinned %d: %v", ours.Max, err)
	}
}

func TestRealCloseNeverHangs(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	s := realSession(t, Config{LineBufferedPrint: true,
		Print: func(message.PrintStream, string) { once.Do(func() { close(started) }) }})
	errc := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "print('go')\nwhile True: pass")
		errc <- err
	}()
	<-started // barrier: the turn is in flight
	t0 := time.Now()
	s.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("interrupted run: %v", err)
	}
	if d := time.Since(t0); d > hangBound {
		t.Fatalf("Close took %v", d)
	}
}

func TestRealCwdNeedsProtocol4(t *testing.T) {
	s := realSession(t, Config{})
	if s.Version() >= 4 {
		t.Skip("worker speaks protocol 4")
	}
	_, err := s.Run(context.Background(), "1", WithCwd("/data"))
	var ir *InvalidRequestError
	if !errors.As(err, &ir) || !Survives(err) {
		t.Fatalf("got %v", err)
	}
	if got := run(t, s, "1").Repr(); got != "1" {
		t.Fatal(got)
	}
}

// Go integer and float slices cross packed (value.Node.Ints, Node.Floats)
// as inputs, host function results and future results; the sandbox sees
// exactly the values a node per item would have given it.
func TestRealPackedValues(t *testing.T) {
	s := realSession(t, Config{})
	type row struct {
		IDs    []int
		Scores []float32
	}
	ints := []int64{math.MinInt64, -1, 0, 1, math.MaxInt64}
	big := make([]int32, 10_000)
	for i := range big {
		big[i] = int32(i*7919) - 1<<30
	}
	floats := []float64{math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e-310, 2.5}
	inputs := []Input{
		{"ints", ints}, {"big", big}, {"floats", floats},
		{"small", []uint16{65535, 0}}, {"r", row{IDs: []int{3, 2, 1}, Scores: []float32{0.5, -1.25}}},
		{"shared", [][]int8{{-128, 127}, nil}},
	}
	code := "[ints, sum(big), big[:3], big[-1], floats, small, r, shared, nan_ok]"
	reg := NewRegistry().
		MustRegister("nums", func() []uint32 { return []uint32{4000000000, 1} }).
		MustRegister("halves", func(ctx context.Context) ([]float64, error) { return []float64{0.5, math.NaN()}, nil }, Async())
	r := run(t, s, "import asyncio\nh = (await asyncio.gather(halves()))[0]\nnan_ok = [h[0], h[1] != h[1], nums()]\n"+code,
		WithInputs(inputs...), WithFunctions(reg))

	// What a graph with a node per item renders, for comparison.
	var g value.Graph
	var want []string
	var sum int64
	for _, x := range big {
		sum += int64(x)
	}
	for _, in := range inputs[:3] {
		id, err := value.FromGo(&g, in.Value)
		if err != nil {
			t.Fatal(err)
		}
		u, uid := g.Unpacked(id)
		want = append(want, u.Repr(uid))
	}
	if !g.HasPacked() {
		t.Fatal("the inputs were not packed")
	}
	got := r.Repr()
	for _, w := range []string{want[0], fmt.Sprint(sum), "[-1073741824, -1073733905, -1073725986]", want[2],
		"[65535, 0]", "{'IDs': [3, 2, 1], 'Scores': [0.5, -1.25]}", "[[-128, 127], []]", "[0.5, True, [4000000000, 1]]"} {
		if !strings.Contains(got, w) {
			t.Fatalf("result %s\nlacks %s", got, w)
		}
	}
}

// WithPrint gives one run its own output sink; the next run without it
// prints to Config.Print again.
func TestWithPrint(t *testing.T) {
	var cfgOut, runOut strings.Builder
	s := realSession(t, Config{Print: Writers(&cfgOut, &cfgOut)})
	run(t, s, "print('to config')")
	run(t, s, "print('to run')\nprint('again')", WithPrint(Writers(&runOut, &runOut)))
	_, err := s.Run(context.Background(), "print('before the error')\n1/0", WithPrint(Writers(&runOut, &runOut)))
	pyErr(t, err, "ZeroDivisionError")
	run(t, s, "print('config again')")
	run(t, s, "print('nil keeps config')", WithPrint(nil)) // as documented
	if cfgOut.String() != "to config\nconfig again\nnil keeps config\n" || runOut.String() != "to run\nagain\nbefore the error\n" {
		t.Fatalf("config got %q, run got %q", cfgOut.String(), runOut.String())
	}
}

// TestRealRegisterReplacesSameName: a name is a function, a value or a
// class, whichever was registered last: Register replaces a value (which
// would otherwise answer the sandbox's reads of the name while calls went
// to the function) and SetValue a function, as RegisterClass replaces
// both; the stubs declare the name once.
func TestRealRegisterReplacesSameName(t *testing.T) {
	s := realSession(t, Config{})
	reg := NewRegistry()
	reg.SetValue("x", 1)
	reg.MustRegister("x", func() int { return 2 })
	reg.MustRegister("y", func() int { return 2 })
	reg.SetValue("y", 3)
	with := WithFunctions(reg)
	if got := run(t, s, "g = x\n(x(), g())", with).Repr(); got != "(2, 2)" {
		t.Errorf("x after SetValue, Register: %s", got)
	}
	if got := run(t, s, "y", with).Repr(); got != "3" {
		t.Errorf("y after Register, SetValue: %s", got)
	}
	if got, want := reg.Stubs(), "def x() -> int: ...\ny: int\n"; got != want {
		t.Errorf("stubs:\n%s\nwant:\n%s", got, want)
	}
}
