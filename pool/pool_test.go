//go:build unix

package pool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

var quiet = slog.New(slog.DiscardHandler)

// recorder collects a pool's events.
type recorder struct {
	mu  sync.Mutex
	evs []Event
	// recorded, when a reader waits for an event, is closed (and
	// cleared) by the next one recorded.
	recorded chan struct{}
}

func (r *recorder) record(e Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	if r.recorded != nil {
		close(r.recorded)
		r.recorded = nil
	}
	r.mu.Unlock()
}

// reach waits until at least want events of kind k (and reason, when
// non-empty) were recorded, for up to 30 seconds, and returns how many
// were after a short pause that lets one too many show. The pool emits
// events after its state has changed and the processes it let go of have
// stopped, so a Stat can show a change well before its events are in:
// under load, the second of two scale-down events came more than count's
// 20ms after the first.
func (r *recorder) reach(k EventKind, reason Reason, want int) int {
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		n := r.countLocked(k, reason)
		if n >= want {
			r.mu.Unlock()
			time.Sleep(20 * time.Millisecond) // one too many shows as such
			return r.countNow(k, reason)
		}
		if r.recorded == nil {
			r.recorded = make(chan struct{})
		}
		recorded := r.recorded
		r.mu.Unlock()
		select {
		case <-recorded:
		case <-deadline.C:
			return n
		}
	}
}

// count returns how many events of kind k (and reason, when non-empty)
// were recorded, waiting up to a second for a first one: for checks that
// none were (reach waits for those that must be).
func (r *recorder) count(k EventKind, reason Reason) int {
	n := 0
	for range 50 {
		n = r.countNow(k, reason)
		if n > 0 {
			time.Sleep(20 * time.Millisecond)
			return r.countNow(k, reason)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return n
}

func (r *recorder) countNow(k EventKind, reason Reason) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.countLocked(k, reason)
}

func (r *recorder) countLocked(k EventKind, reason Reason) int {
	n := 0
	for _, e := range r.evs {
		if e.Kind == k && (reason == "" || e.Reason == reason) {
			n++
		}
	}
	return n
}

func newPool(t testing.TB, cfg Config) (*Pool, *recorder) {
	t.Helper()
	return newPoolCtx(t, context.Background(), cfg)
}

// newPoolCtx is newPool with New's ctx.
func newPoolCtx(t testing.TB, ctx context.Context, cfg Config) (*Pool, *recorder) {
	t.Helper()
	testenv.Worker(t)
	rec := &recorder{}
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if cfg.Metrics == nil {
		cfg.Metrics = rec.record
	}
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
	})
	return p, rec
}

func checkout(t testing.TB, p *Pool) *Session {
	t.Helper()
	s, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// busyCheckout checks out a session whose output closes the returned
// channel at its first line: run "print('go')" first, and a receive from
// the channel is a barrier for "the turn is in flight".
func busyCheckout(t testing.TB, p *Pool) (*Session, <-chan struct{}) {
	t.Helper()
	started := make(chan struct{})
	var once sync.Once
	s, err := p.Checkout(context.Background(), session.Config{LineBufferedPrint: true,
		Print: func(message.PrintStream, string) { once.Do(func() { close(started) }) }})
	if err != nil {
		t.Fatal(err)
	}
	return s, started
}

func runRepr(t testing.TB, s *Session, code string, opts ...session.RunOption) string {
	t.Helper()
	r, err := s.Run(context.Background(), code, opts...)
	if err != nil {
		t.Fatalf("Run(%q): %v", code, err)
	}
	return r.Repr()
}

// eventually polls Stat until ok holds, failing the test after d.
func eventually(t testing.TB, p *Pool, d time.Duration, what string, ok func(Stats) bool) Stats {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		st := p.Stat()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, still not %s: %+v", d, what, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func atStrength(min int) func(Stats) bool {
	return func(st Stats) bool { return st.Live == min && st.Idle == min && st.Spawning == 0 }
}

func TestPrewarm(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 3, MaxWorkers: 4})
	st := p.Stat()
	if st.Idle != 3 || st.Live != 3 || st.Busy != 0 || !st.Healthy || st.Restarts != 0 {
		t.Fatalf("after New: %+v", st)
	}
	if n := rec.reach(EventSpawn, "", 3); n != 3 {
		t.Fatalf("%d spawn events, want 3", n)
	}
	// 2 for the released worker; 4 or 5 for a worker that speaks it (the
	// relay, which serves 5 on request).
	if v := p.Version(); (v != 2 && v != 4 && v != 5) || p.Negotiation().Version != v {
		t.Fatalf("version %d, negotiation %+v", p.Version(), p.Negotiation())
	}
	// Three distinct handshaken workers, ids 1..3, all on the pool's version.
	var ids []uint64
	pids := map[int]bool{}
	var held []*Session
	for range 3 {
		s := checkout(t, p)
		held = append(held, s)
		ids = append(ids, s.WorkerID())
		pids[s.Pid()] = true
		if s.Version() != p.Version() || s.s.Pid() != s.Pid() {
			t.Fatalf("session version %d pid %d/%d", s.Version(), s.Pid(), s.s.Pid())
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []uint64{1, 2, 3}) || len(pids) != 3 {
		t.Fatalf("ids %v pids %v", ids, pids)
	}
	if st := p.Stat(); st.Idle != 0 || st.Busy != 3 || st.CheckoutsWaited != 0 {
		t.Fatalf("all out: %+v", st)
	}
	for _, s := range held {
		s.Close()
	}
}

func TestCheckoutReusesResetWorker(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s := checkout(t, p)
	id, pid := s.WorkerID(), s.Pid()
	if got := runRepr(t, s, "x = 20\nx * 2 + 2"); got != "42" {
		t.Fatal(got)
	}
	s.Close()
	s.Close() // idempotent
	if _, err := s.Run(context.Background(), "1"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Run after Close: %v", err)
	}

	s = checkout(t, p)
	defer s.Close()
	if s.WorkerID() != id || s.Pid() != pid {
		t.Fatalf("worker %d/%d, want %d/%d", s.WorkerID(), s.Pid(), id, pid)
	}
	// The globals of the previous checkout are gone.
	_, err := s.Run(context.Background(), "x")
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Type() != "NameError" {
		t.Fatalf("previous global: %v", err)
	}
	// The checkout's own config applies.
	s2cfg := session.Config{Limits: session.Limits{MaxRecursionDepth: 20}}
	s.Close()
	s, err = p.Checkout(context.Background(), s2cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(context.Background(), "def f(n):\n    return f(n + 1)\nf(0)")
	if !errors.As(err, &pe) || pe.Type() != "RecursionError" {
		t.Fatalf("recursion limit: %v", err)
	}
	if st := p.Stat(); st.Checkouts != 3 || st.Live != 1 {
		t.Fatalf("%+v", st)
	}
	if rec.reach(EventRelease, "", 2) != 2 || rec.reach(EventCheckout, "", 3) != 3 {
		t.Fatalf("events: %d releases, %d checkouts", rec.countNow(EventRelease, ""), rec.countNow(EventCheckout, ""))
	}
}

// The caller's context bounds a checkout's wait for a worker too. The
// pool's own CheckoutTimeout is far off, and the context is cancelled only
// once the checkout is waiting: before, this ran on the pool above with a
// 150 ms CheckoutTimeout and a 20 ms cancel timer, which on a loaded
// machine fired after the timeout (the checkout then ended with
// DeadlineExceeded, not Canceled).
func TestCheckoutWaitEndsWithTheCallersContext(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, CheckoutTimeout: 10 * time.Minute})
	a := checkout(t, p)
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		s, err := p.Checkout(ctx, session.Config{})
		if err == nil {
			s.Close()
		}
		done <- err
	}()
	eventually(t, p, 30*time.Second, "waiting", func(st Stats) bool { return st.Waiting == 1 })
	cancel()
	if err := <-done; !errors.Is(err, ErrExhausted) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled checkout: %v", err)
	}
}

func TestCheckoutBeyondMaxWaitsAndTimesOut(t *testing.T) {
	// Both workers are prewarmed: a spawn on a loaded machine (or through
	// a relay worker, which starts its own inner worker) can take longer
	// than the short checkout timeout this test is about.
	p, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2, CheckoutTimeout: 150 * time.Millisecond})
	a, b := checkout(t, p), checkout(t, p)
	if st := p.Stat(); st.Live != 2 || st.Busy != 2 {
		t.Fatalf("%+v", st)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	start := time.Now()
	for i := range errs {
		wg.Go(func() {
			s, err := p.Checkout(context.Background(), session.Config{})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		var ee *ExhaustedError
		if !errors.As(err, &ee) || !errors.Is(err, ErrExhausted) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("checkout beyond max: %v", err)
		}
		if ee.Waited < 150*time.Millisecond || ee.Max != 2 || ee.Live != 2 {
			t.Fatalf("%+v", ee)
		}
	}
	// Far above the 150 ms each waits, for a loaded machine under -race;
	// a wait the timeout did not end would hang here instead.
	if time.Since(start) > 10*time.Second {
		t.Fatal("timed-out checkouts took too long")
	}
	st := p.Stat()
	if st.Exhausted != 4 || st.CheckoutsWaited < 4 || st.Live != 2 { // the four that timed out
		t.Fatalf("%+v", st)
	}
	if rec.reach(EventExhausted, "", 4) != 4 {
		t.Fatal("missing exhausted events")
	}

	// A waiting checkout gets the worker a session gives back.
	got := make(chan *Session)
	go func() {
		s, err := p.Checkout(context.Background(), session.Config{})
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	eventually(t, p, 5*time.Second, "waiting", func(st Stats) bool { return st.Waiting == 1 })
	id := a.WorkerID()
	a.Close()
	s := <-got
	if s == nil {
		t.FailNow()
	}
	if s.WorkerID() != id {
		t.Fatalf("handed worker %d, want %d", s.WorkerID(), id)
	}
	runRepr(t, s, "1 + 1")
	s.Close()
	b.Close()
}

func TestKillIdleWorkerIsReplaced(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2})
	a, b := checkout(t, p), checkout(t, p)
	victim, other := a.Pid(), b.Pid()
	a.Close()
	b.Close()
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	st := eventually(t, p, 5*time.Second, "replaced", func(st Stats) bool {
		return st.Crashes[ReasonVanished] == 1 && atStrength(2)(st)
	})
	if st.Restarts != 1 || !st.Healthy {
		t.Fatalf("%+v", st)
	}
	if rec.reach(EventCrash, ReasonVanished, 1) != 1 || rec.reach(EventReplace, "", 1) != 1 {
		t.Fatal("missing crash or replace event")
	}
	// The dead worker is never handed out.
	x, y := checkout(t, p), checkout(t, p)
	defer x.Close()
	defer y.Close()
	for _, s := range []*Session{x, y} {
		if s.Pid() == victim {
			t.Fatal("the killed worker was handed out")
		}
		runRepr(t, s, "1 + 1")
	}
	if x.Pid() != other && y.Pid() != other {
		t.Fatal("the surviving worker was lost")
	}
}

func TestKillBusyWorkerIsReplaced(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2})
	s := checkout(t, p)
	victim := s.Pid()
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Replaced while the session is still checked out.
	eventually(t, p, 5*time.Second, "replaced", atStrength(2))

	_, err := s.Run(context.Background(), "1 + 1")
	var ce *worker.CrashError
	if !errors.As(err, &ce) || ce.Reason != worker.Vanished || session.Survives(err) {
		t.Fatalf("Run on a killed worker: %v", err)
	}
	s.Close()
	st := eventually(t, p, 5*time.Second, "back at strength", func(st Stats) bool {
		return st.Crashes[ReasonVanished] == 1 && atStrength(2)(st)
	})
	if st.Restarts != 1 || rec.reach(EventCrash, ReasonVanished, 1) != 1 {
		t.Fatalf("%+v", st)
	}
	for range 2 {
		s := checkout(t, p)
		if s.Pid() == victim {
			t.Fatal("the killed worker was handed out")
		}
		defer s.Close()
	}
}

func TestRecycleAfterMaxCheckouts(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, MaxCheckoutsPerWorker: 3})
	var pids, ids []string
	for range 7 {
		s := checkout(t, p)
		runRepr(t, s, "1 + 1")
		pids = append(pids, strconv.Itoa(s.Pid()))
		ids = append(ids, strconv.FormatUint(s.WorkerID(), 10))
		s.Close()
	}
	for i := range pids {
		same := i%3 != 0
		if i > 0 && (pids[i] == pids[i-1]) != same {
			t.Fatalf("pids %v: a worker must serve exactly 3 checkouts", pids)
		}
	}
	if strings.Join(ids, ",") != "1,1,1,2,2,2,3" {
		t.Fatalf("worker ids %v", ids)
	}
	st := eventually(t, p, 5*time.Second, "at strength", atStrength(1))
	if st.Recycled != 2 || len(st.Crashes) != 0 || rec.reach(EventRecycle, "", 2) != 2 {
		t.Fatalf("%+v", st)
	}
}

func TestBrokenBinaryFailsNew(t *testing.T) {
	testenv.Worker(t)
	_, err := New(context.Background(), Config{Worker: worker.Config{Binary: "/nonexistent/monty"}, Logger: quiet})
	if !errors.Is(err, worker.ErrBinaryNotFound) {
		t.Fatalf("missing binary: %v", err)
	}
	for _, bin := range []string{"/bin/false", script(t, "exit 1")} {
		_, err = New(context.Background(), Config{Worker: worker.Config{Binary: bin}, Logger: quiet})
		if !errors.Is(err, worker.ErrCrashed) {
			t.Fatalf("%s: %v", bin, err)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for _, cfg := range []Config{
		{MinWorkers: 3, MaxWorkers: 2},
		{MaxWorkers: -1},
		{MinWorkers: -1},
		{MaxWorkers: 1, CheckoutTimeout: -1},
		{MaxWorkers: 1, MaxCheckoutsPerWorker: -1},
		{MaxWorkers: 1, RestartBackoff: Backoff{Initial: time.Second, Max: time.Millisecond}},
	} {
		if _, err := New(context.Background(), cfg); err == nil || !strings.HasPrefix(err.Error(), "monty pool: ") {
			t.Fatalf("%+v: %v", cfg, err)
		}
	}
}

// script writes an executable shell script into a temporary directory.
func script(t testing.TB, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "monty.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// flaky returns a worker config whose binary runs the real worker for its
// first n starts and exits 1 after that (the protocol version is pinned,
// so negotiation costs one start), and a function that reads (and, given a
// value, sets) its start counter.
func flaky(t testing.TB, n int) (worker.Config, uint32, func(set ...int) int) {
	real := testenv.Worker(t)
	proc, neg, err := session.Negotiate(context.Background(), session.Launch{}, session.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	proc.Close(context.Background())
	dir := t.TempDir()
	counter := filepath.Join(dir, "starts")
	os.WriteFile(counter, []byte("0\n"), 0o644)
	// Only shell builtins: the worker runs with an empty environment.
	bin := script(t, fmt.Sprintf(`read n < %[1]s || n=0
n=$((n + 1))
echo $n > %[1]s
if [ "$n" -le %[2]d ]; then exec %[3]s "$@"; fi
exit 1`, counter, n, real))
	starts := func(set ...int) int {
		if len(set) > 0 {
			os.WriteFile(counter, []byte(strconv.Itoa(set[0])+"\n"), 0o644)
		}
		b, _ := os.ReadFile(counter)
		v, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return v
	}
	return worker.Config{Binary: bin}, neg.Version, starts
}

// killIdle kills the pool's one idle worker.
func killIdle(t *testing.T, p *Pool) {
	t.Helper()
	s := checkout(t, p)
	pid := s.Pid()
	s.Close()
	syscall.Kill(pid, syscall.SIGKILL)
}

func TestRestartCapTripsInsteadOfLooping(t *testing.T) {
	wcfg, v, starts := flaky(t, 2)
	passes := make(chan struct{}, 100)
	p, rec := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, Worker: wcfg, ProtocolVersion: v,
		MaxRestarts: 3, RestartWindow: time.Minute,
		RestartBackoff: Backoff{Initial: time.Millisecond, Max: 10 * time.Millisecond},
		reconciled: func() {
			select {
			case passes <- struct{}{}:
			default:
			}
		},
	})
	killIdle(t, p) // failure 1; the replacement is start 2, the last good one
	eventually(t, p, 5*time.Second, "replaced", func(st Stats) bool { return st.Restarts == 1 && atStrength(1)(st) })
	killIdle(t, p) // failure 2; every start from now on fails
	st := eventually(t, p, 5*time.Second, "unhealthy", func(st Stats) bool { return !st.Healthy })
	if st.Crashes[ReasonVanished] != 2 || st.SpawnFailures != 2 || st.Live != 0 {
		t.Fatalf("%+v", st)
	}

	// No fork loop: the supervisor, woken again and again, starts nothing
	// while the cap is tripped.
	n := starts()
	for range 5 {
		for len(passes) > 0 {
			<-passes
		}
		p.kick()
		<-passes // barrier: a full supervisor pass has run
		if st := p.Stat(); st.Spawning != 0 {
			t.Fatalf("the supervisor started a worker while unhealthy: %+v", st)
		}
	}
	if m := starts(); m != n || m != 4 {
		t.Fatalf("starts went from %d to %d while unhealthy", n, m)
	}
	waited := p.Stat().CheckoutsWaited
	_, err := p.Checkout(context.Background(), session.Config{})
	var ue *UnhealthyError
	if !errors.Is(err, ErrUnhealthy) || !errors.As(err, &ue) || ue.Failures != 4 || !errors.Is(err, worker.ErrCrashed) {
		t.Fatalf("checkout while unhealthy: %v", err)
	}
	if p.Stat().CheckoutsWaited != waited {
		t.Fatal("the unhealthy checkout waited instead of failing at once")
	}
	if rec.reach(EventUnhealthy, "", 1) != 1 || rec.reach(EventSpawnFailed, "", 2) != 2 {
		t.Fatal("missing unhealthy or spawn_failed events")
	}
}

func TestRestartCapRecoversAfterWindow(t *testing.T) {
	wcfg, v, starts := flaky(t, 1)
	p, rec := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, Worker: wcfg, ProtocolVersion: v,
		MaxRestarts: 1, RestartWindow: 500 * time.Millisecond,
		RestartBackoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond},
	})
	killIdle(t, p)
	eventually(t, p, 5*time.Second, "unhealthy", func(st Stats) bool { return !st.Healthy })
	starts(-10) // the binary works again
	eventually(t, p, 5*time.Second, "healthy and at strength", func(st Stats) bool { return st.Healthy && atStrength(1)(st) })
	s := checkout(t, p)
	runRepr(t, s, "1 + 1")
	s.Close()
	if rec.reach(EventHealthy, "", 1) != 1 {
		t.Fatal("missing healthy event")
	}
}

// The pool's log says a routine spawn at Debug, and the restart cap
// tripping once, at Error.
func TestRestartCapLoggedOnce(t *testing.T) {
	wcfg, v, _ := flaky(t, 1)
	logs := &logRecords{}
	p, _ := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, Worker: wcfg, ProtocolVersion: v,
		MaxRestarts: 1, RestartWindow: time.Minute,
		RestartBackoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond},
		Logger:         slog.New(logs),
	})
	killIdle(t, p)
	eventually(t, p, 5*time.Second, "unhealthy", func(st Stats) bool { return !st.Healthy })
	p.Close(context.Background())
	var capped, spawned int
	for _, r := range logs.all() {
		if strings.Contains(r.Message, "restart") {
			capped++
			if r.Level != slog.LevelError {
				t.Errorf("%q at %v", r.Message, r.Level)
			}
		}
		if strings.Contains(r.Message, "spawned") {
			spawned++
			if r.Level != slog.LevelDebug {
				t.Errorf("%q at %v", r.Message, r.Level)
			}
		}
	}
	if capped != 1 || spawned == 0 {
		t.Fatalf("%d records of the tripped cap, %d of spawns; want 1 and some", capped, spawned)
	}
}

// logRecords is a slog.Handler keeping every record.
type logRecords struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r.Clone())
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }
func (l *logRecords) all() []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.recs)
}

// A waiting checkout learns at once that the cap tripped.
func TestRestartCapFailsWaiters(t *testing.T) {
	wcfg, v, _ := flaky(t, 1)
	p, _ := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, Worker: wcfg, ProtocolVersion: v,
		MaxRestarts: 2, RestartBackoff: Backoff{Initial: 200 * time.Millisecond, Max: 200 * time.Millisecond},
	})
	killIdle(t, p)
	eventually(t, p, 5*time.Second, "replacing", func(st Stats) bool { return st.Live == 0 })
	_, err := p.Checkout(context.Background(), session.Config{})
	if !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("waiting checkout: %v", err)
	}
}

func TestInterruptedRunDestroysWorker(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	// The deadline is to end the turn in the host call, so it passes once
	// the call is entered: at a fixed time (50 ms, then 2 s) a loaded
	// machine had not always reached it, and the computing worker was
	// killed instead.
	ctx := testenv.NewReachedDeadline()
	reg := session.NewRegistry()
	reg.MustRegister("block", func(hctx context.Context) error {
		ctx.Reached()
		<-hctx.Done()
		return hctx.Err()
	})
	s := checkout(t, p)
	id := s.WorkerID()
	_, err := s.Run(ctx, "block()", session.WithFunctions(reg))
	var te *session.TimeoutError
	if !errors.As(err, &te) || te.Killed || !session.Survives(err) {
		t.Fatalf("interrupted Run: %v", err)
	}
	// The session itself survived (the feed was aborted) ...
	runRepr(t, s, "1 + 1")
	// ... but its worker is not reused.
	s.Close()
	eventually(t, p, 5*time.Second, "replaced", atStrength(1))
	s = checkout(t, p)
	defer s.Close()
	if s.WorkerID() == id {
		t.Fatal("the interrupted worker was reused")
	}
	if rec.reach(EventDestroy, DestroyInterrupted, 1) != 1 {
		t.Fatal("missing destroy event")
	}
}

func TestContextKillWhileComputingIsCanceledCrash(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s := checkout(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Run(ctx, "while True:\n    pass")
	var te *session.TimeoutError
	if !errors.As(err, &te) || !te.Killed {
		t.Fatalf("Run: %v", err)
	}
	s.Close()
	st := eventually(t, p, 5*time.Second, "replaced", func(st Stats) bool { return atStrength(1)(st) && st.Crashes[ReasonTimeout] == 1 })
	if st.Restarts != 1 {
		t.Fatalf("%+v", st)
	}
}

func TestSuspendedSessionDestroysWorker(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s := checkout(t, p)
	id := s.WorkerID()
	ev, err := s.Feed(context.Background(), "f(1)")
	if err != nil || ev.Body.EventKind() != message.KindFunctionCall {
		t.Fatalf("Feed: %v %v", ev, err)
	}
	s.Close()
	eventually(t, p, 5*time.Second, "replaced", atStrength(1))
	s = checkout(t, p)
	defer s.Close()
	if s.WorkerID() == id || rec.reach(EventDestroy, DestroySuspended, 1) != 1 {
		t.Fatalf("suspended worker reused (id %d) or not reported", s.WorkerID())
	}
}

func TestDestroyAndKill(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s := checkout(t, p)
	s.Destroy()
	s.Destroy()
	s.Close()
	if _, err := s.Run(context.Background(), "1"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Run after Destroy: %v", err)
	}
	eventually(t, p, 5*time.Second, "replaced", atStrength(1))

	// Killing through the embedded session is a destroy, not a crash.
	s = checkout(t, p)
	s.Kill()
	s.Close()
	st := eventually(t, p, 5*time.Second, "replaced", atStrength(1))
	if st.Destroyed != 2 || len(st.Crashes) != 0 || rec.reach(EventDestroy, DestroyRequested, 2) != 2 {
		t.Fatalf("%+v", st)
	}
}

// Close from another goroutine interrupts a turn in flight.
func TestCloseDuringTurn(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	s, started := busyCheckout(t, p)
	done := make(chan error)
	go func() {
		_, err := s.Run(context.Background(), "print('go')\nwhile True:\n    pass")
		done <- err
	}()
	<-started // barrier: the turn is in flight
	s.Close()
	if err := <-done; !errors.Is(err, session.ErrClosed) {
		t.Fatalf("interrupted turn: %v", err)
	}
	eventually(t, p, 5*time.Second, "replaced", atStrength(1))
	if rec.reach(EventDestroy, DestroyBusy, 1) != 1 {
		t.Fatal("missing destroy event")
	}
}

func TestIdleScaleDown(t *testing.T) {
	passes := make(chan struct{}, 100)
	// The idle timeout leaves the three closes time to be seen at once:
	// at 100ms a loaded machine had scaled the first worker down already.
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 3, IdleTimeout: time.Second,
		reconciled: func() {
			select {
			case passes <- struct{}{}:
			default:
			}
		}})
	var held []*Session
	for range 3 {
		held = append(held, checkout(t, p))
	}
	for _, s := range held {
		s.Close()
	}
	if st := p.Stat(); st.Idle != 3 {
		t.Fatalf("%+v", st)
	}
	eventually(t, p, 30*time.Second, "scaled down", atStrength(1))
	if rec.reach(EventScaleDown, "", 2) != 2 {
		t.Fatal("missing scale-down events")
	}
	// Further passes of the supervisor keep MinWorkers.
	for range 3 {
		for len(passes) > 0 {
			<-passes
		}
		p.kick()
		<-passes // barrier: a supervisor pass
		if st := p.Stat(); st.Live != 1 {
			t.Fatalf("scaled below min: %+v", st)
		}
	}
}

// With IdleTimeout, a pool at MinWorkers has nothing to scale down: its
// supervisor sleeps until something happens instead of waking every
// IdleTimeout. Before, it polled for ever (an idle pool with IdleTimeout
// 1 ms used about 45 ms of CPU a second, 1 ns half a core), and a pool
// grown past MinWorkers still looks again until it is back.
func TestIdleTimeoutSupervisorSleepsAtMinWorkers(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 2, IdleTimeout: time.Hour})
	eventually(t, p, 5*time.Second, "at strength", atStrength(1))
	if next := p.reconcile(); !next.IsZero() {
		t.Fatalf("a pool at MinWorkers arms the idle timer for %v", next)
	}
	a, b := checkout(t, p), checkout(t, p) // grows to 2
	if next := p.reconcile(); next.IsZero() {
		t.Fatal("a pool past MinWorkers does not arm the idle timer")
	}
	a.Close()
	b.Close()
	if next := p.reconcile(); next.IsZero() {
		t.Fatal("a pool with an idle worker past MinWorkers does not arm the idle timer")
	}
}

func TestCloseWaitsForSessions(t *testing.T) {
	testenv.Worker(t)
	p, err := New(context.Background(), Config{MinWorkers: 2, MaxWorkers: 2, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s := checkout(t, p)
	closed := make(chan error)
	go func() { closed <- p.Close(context.Background()) }()
	eventually(t, p, 5*time.Second, "closing", func(st Stats) bool { return st.Idle == 0 })
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("checkout while closing: %v", err)
	}
	// The checked-out session still works until it is closed.
	runRepr(t, s, "1 + 1")
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v with a session out", err)
	case <-time.After(50 * time.Millisecond):
	}
	s.Close()
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := p.Stat(); st.Live != 0 || st.Busy != 0 {
		t.Fatalf("%+v", st)
	}
}

func TestCloseDeadlineKillsSessions(t *testing.T) {
	testenv.Worker(t)
	p, err := New(context.Background(), Config{MinWorkers: 1, MaxWorkers: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	s, started := busyCheckout(t, p)
	waiting := make(chan error)
	go func() {
		_, err := p.Checkout(context.Background(), session.Config{MaxDecodeBytes: 1 << 20})
		waiting <- err
	}()
	running := make(chan error)
	go func() {
		_, err := s.Run(context.Background(), "print('go')\nwhile True:\n    pass")
		running <- err
	}()
	// Barriers: the checkout is queued and the turn is in flight.
	eventually(t, p, 5*time.Second, "waiting", func(st Stats) bool { return st.Waiting == 1 })
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close: %v", err)
	}
	if err := <-running; !errors.Is(err, session.ErrClosed) {
		t.Fatalf("killed turn: %v", err)
	}
	if err := <-waiting; err == nil {
		t.Fatal("a checkout succeeded during Close")
	}
	s.Close() // after the pool is gone: no-op, no goroutines
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A worker Close's deadline kills mid-turn is reported as DestroyClosing
// (EventDestroy, Stats.Destroyed, the terminated metric), once, as
// DestroyClosing says and as a remote session's connection closed at the
// deadline is. Before, it left the pool with no event at all, and the
// session's later Close found it gone already.
func TestCloseDeadlineKillIsReportedClosing(t *testing.T) {
	testenv.Worker(t)
	var rec recorder
	p, err := New(context.Background(), Config{MinWorkers: 1, MaxWorkers: 1, Logger: quiet, Metrics: rec.record})
	if err != nil {
		t.Fatal(err)
	}
	s, started := busyCheckout(t, p)
	running := make(chan error)
	go func() {
		_, err := s.Run(context.Background(), "print('go')\nwhile True:\n    pass")
		running <- err
	}()
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the turn is in flight: Close kills its worker at once
	if err := p.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	if err := <-running; !errors.Is(err, session.ErrClosed) {
		t.Fatalf("killed turn: %v", err)
	}
	s.Close()
	rec.mu.Lock()
	var destroyed []Event
	for _, e := range rec.evs {
		if e.Kind == EventDestroy || e.Kind == EventCrash {
			destroyed = append(destroyed, e)
		}
	}
	rec.mu.Unlock()
	if len(destroyed) != 1 || destroyed[0].Kind != EventDestroy || destroyed[0].Reason != DestroyClosing || destroyed[0].WorkerID != s.WorkerID() {
		t.Errorf("events %+v, want one EventDestroy %s for worker %d", destroyed, DestroyClosing, s.WorkerID())
	}
	if st := p.Stat(); st.Destroyed != 1 || st.Live != 0 || st.Busy != 0 {
		t.Errorf("after Close: %+v, want one destroyed worker", st)
	}
}

// A checked-out worker that had died already when Close's deadline drops
// it is reported as the crash it was, not as destroyed.
func TestCloseDeadlineReportsADeadWorkerAsCrashed(t *testing.T) {
	testenv.Worker(t)
	var rec recorder
	p, err := New(context.Background(), Config{MinWorkers: 1, MaxWorkers: 1, Logger: quiet, Metrics: rec.record})
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, p, 10*time.Second, "the dead worker not busy", func(st Stats) bool { return st.Busy == 0 })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v", err)
	}
	s.Close()
	var crashed, destroyed int
	rec.mu.Lock()
	for _, e := range rec.evs {
		if e.WorkerID != s.WorkerID() {
			continue // its replacement, idle or starting at Close
		}
		switch e.Kind {
		case EventCrash:
			if e.Reason == ReasonVanished {
				crashed++
			}
		case EventDestroy:
			destroyed++
		}
	}
	rec.mu.Unlock()
	if crashed != 1 || destroyed != 0 {
		t.Errorf("%d vanished crashes and %d destroys of the dead worker, want 1 and 0", crashed, destroyed)
	}
	if st := p.Stat(); st.Crashes[ReasonVanished] != 1 {
		t.Errorf("after Close: %+v", st)
	}
}

// Close reports the idle workers it stops as DestroyClosing too, so that
// every worker that joined the pool (EventSpawn) is reported leaving it
// (MetricWorkerTerminated, Stats.Destroyed). Before, they left without
// an event, while a worker checked out at Close had its DestroyClosing.
func TestCloseReportsIdleWorkersStopped(t *testing.T) {
	testenv.Worker(t)
	var rec recorder
	p, err := New(context.Background(), Config{MinWorkers: 2, MaxWorkers: 2, Logger: quiet, Metrics: rec.record})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	spawned, stopped := map[uint64]bool{}, map[uint64]bool{}
	rec.mu.Lock()
	for _, e := range rec.evs {
		switch {
		case e.Kind == EventSpawn:
			spawned[e.WorkerID] = true
		case e.Kind == EventDestroy && e.Reason == DestroyClosing:
			stopped[e.WorkerID] = true
		}
	}
	rec.mu.Unlock()
	if len(spawned) != 2 || len(stopped) != 2 || !maps.Equal(spawned, stopped) {
		t.Errorf("spawned %v, destroyed as closing %v; want the same two workers", spawned, stopped)
	}
	if st := p.Stat(); st.Destroyed != 2 || st.Live != 0 {
		t.Errorf("after Close: %+v, want two destroyed", st)
	}
}

func TestGrowsOnDemandUpToMax(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 3})
	var wg, out sync.WaitGroup
	var mu sync.Mutex
	seen := map[uint64]bool{}
	out.Add(3)
	allOut := make(chan struct{})
	go func() { out.Wait(); close(allOut) }()
	for range 3 {
		wg.Go(func() {
			s, err := p.Checkout(context.Background(), session.Config{})
			if err != nil {
				t.Error(err)
				out.Done()
				return
			}
			mu.Lock()
			seen[s.WorkerID()] = true
			mu.Unlock()
			out.Done()
			// Hold the worker until all three are out at once, however
			// long the spawns take on a loaded machine.
			select {
			case <-allOut:
			case <-time.After(30 * time.Second):
			}
			s.Close()
		})
	}
	wg.Wait()
	if st := p.Stat(); len(seen) != 3 || st.Live != 3 || st.Restarts != 0 {
		t.Fatalf("%d workers seen, %+v", len(seen), st)
	}
}

func TestEventKindNames(t *testing.T) {
	for k := EventSpawn; k <= EventHealthy; k++ {
		if s := k.String(); s == "unknown" || s == "" {
			t.Fatalf("kind %d has no name", k)
		}
	}
	if EventKind(0).String() != "unknown" || EventKind(200).String() != "unknown" {
		t.Fatal("out-of-range kinds must be unknown")
	}
}

func TestCrashReasons(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		reason Reason
	}{
		{"announced", &worker.CrashError{Reason: worker.Announced}, ReasonAnnounced},
		{"vanished wrapped", fmt.Errorf("wrapped: %w", &worker.CrashError{Reason: worker.Vanished}), ReasonVanished},
		{"memory", &worker.MemoryLimitError{}, ReasonMemory},
		{"protocol", &session.ProtocolError{Msg: "x"}, ReasonProtocol},
		{"timeout killed", &session.TimeoutError{Killed: true}, ReasonTimeout},
		{"canceled killed", &session.CanceledError{Killed: true}, ReasonCanceled},
		{"timeout survived", &session.TimeoutError{}, ""},
		{"canceled survived", &session.CanceledError{}, ""},
		{"remote drop", &session.DisconnectedError{Code: -1}, ReasonVanished},
		{"remote going away", &session.DisconnectedError{Code: 1001}, ReasonVanished},
		{"remote memory", &session.DisconnectedError{Code: 4003}, ReasonMemory},
		{"remote turn timeout", &session.DisconnectedError{Code: 4002}, ReasonTimeout},
		{"remote duration backstop", &session.DisconnectedError{Code: 4004}, ReasonTimeout},
		{"busy", session.ErrBusy, ""},
		{"nil", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := crashReason(c.err)
			if got != c.reason || ok != (c.reason != "") {
				t.Errorf("%v: %q %v, want %q", c.err, got, ok, c.reason)
			}
		})
	}
}

// Pool.Run: concurrent one-shot runs share the workers; a run that
// fails (a Python error, or one that kills its worker) hands back the
// error and leaves the pool serving.
func TestPoolRun(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	reprs := make([]string, 8)
	for i := range 8 {
		wg.Go(func() {
			r, err := p.Run(ctx, session.Config{}, "n * n", session.WithInputs(session.Input{Name: "n", Value: i}))
			if errs[i] = err; err == nil {
				reprs[i] = r.Repr()
			}
		})
	}
	wg.Wait()
	for i := range 8 {
		if errs[i] != nil || reprs[i] != strconv.Itoa(i*i) {
			t.Fatalf("run %d: %q, %v", i, reprs[i], errs[i])
		}
	}
	// Globals do not outlive a run.
	if _, err := p.Run(ctx, session.Config{}, "x = 1"); err != nil {
		t.Fatal(err)
	}
	_, err := p.Run(ctx, session.Config{}, "x")
	var pe *session.PythonError
	if !errors.As(err, &pe) || pe.Type() != "NameError" {
		t.Fatalf("later run saw a global: %v", err)
	}
	// A run that ends its worker: the error, and a replacement.
	_, err = p.Run(ctx, session.Config{Limits: session.Limits{MaxMemory: session.NoMemoryLimit}}, "'x' * 10**13")
	if !errors.Is(err, worker.ErrMemoryLimit) {
		t.Fatalf("allocator ceiling: %v", err)
	}
	if r, err := p.Run(ctx, session.Config{}, "1 + 1"); err != nil || r.Repr() != "2" {
		t.Fatalf("after a lost worker: %v", err)
	}
	if st := p.Stat(); st.Checkouts != 12 || st.Live > 2 || st.Busy != 0 {
		t.Fatalf("%+v", st)
	}
	if rec.reach(EventCheckout, "", 12) != 12 {
		t.Fatalf("%d checkouts", rec.countNow(EventCheckout, ""))
	}
}

// A worker that dies while idle is a crash like any other: the error of
// its EventCrash (and an UnhealthyError's Last, when it trips the cap)
// matches worker.ErrCrashed and names the worker's last stderr line.
func TestIdleDeathErrorIsACrash(t *testing.T) {
	real := testenv.Worker(t)
	bin := script(t, `echo "monty-test: last words" >&2; exec `+real+` "$@"`)
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, Worker: worker.Config{Binary: bin}})
	killIdle(t, p)
	if rec.reach(EventCrash, ReasonVanished, 1) != 1 {
		t.Fatal("no crash event")
	}
	rec.mu.Lock()
	var err error
	for _, e := range rec.evs {
		if e.Kind == EventCrash {
			err = e.Err
		}
	}
	rec.mu.Unlock()
	if !errors.Is(err, worker.ErrCrashed) || errors.Is(err, worker.ErrMemoryLimit) {
		t.Fatalf("idle death %v does not match worker.ErrCrashed", err)
	}
	if !strings.Contains(err.Error(), "signal: killed") || !strings.Contains(err.Error(), "stderr: monty-test: last words") {
		t.Fatalf("idle death %q lacks the exit or the stderr tail", err)
	}
	if (&idleExitError{oom: true}).Is(worker.ErrCrashed) || !(&idleExitError{oom: true}).Is(worker.ErrMemoryLimit) {
		t.Fatal("an idle worker's memory-limit exit must match worker.ErrMemoryLimit only")
	}
}

// Health reports the tripped restart cap as the *UnhealthyError a
// checkout gets, and ends the trip itself once its window has passed,
// while the supervisor (held here) has not yet run: a readiness probe
// asking Health sees the recovery when it is due.
func TestHealthReportsTripAndEndsItWhenDue(t *testing.T) {
	var block atomic.Bool
	blocked, release := make(chan struct{}, 1), make(chan struct{})
	p, rec := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, MaxRestarts: 1, RestartWindow: 3 * time.Second,
		reconciled: func() {
			if block.Load() {
				select {
				case blocked <- struct{}{}:
				default:
				}
				<-release
			}
		},
	})
	t.Cleanup(func() {
		if block.Swap(false) {
			close(release)
		}
	})
	if err := p.Health(); err != nil {
		t.Fatalf("Health of a new pool: %v", err)
	}
	for i := range 2 {
		eventually(t, p, 10*time.Second, "at strength", atStrength(1))
		s := checkout(t, p)
		pid := s.Pid()
		s.Close()
		// Killed once it is idle again: an idle worker's death is a
		// failure toward the cap, a checked-out one's is not.
		eventually(t, p, 10*time.Second, "idle", func(st Stats) bool { return st.Idle == 1 && st.Busy == 0 })
		syscall.Kill(pid, syscall.SIGKILL)
		// Noticed while idle, before the next checkout could take it.
		eventually(t, p, 10*time.Second, "the kill noticed", func(st Stats) bool { return st.Crashes[ReasonVanished] == i+1 })
	}
	eventually(t, p, 10*time.Second, "unhealthy", func(st Stats) bool { return !st.Healthy })

	block.Store(true)
	p.kick()
	<-blocked // the supervisor is held at the end of a pass
	err := p.Health()
	var ue *UnhealthyError
	if !errors.Is(err, ErrUnhealthy) || !errors.As(err, &ue) || ue.Failures != 2 || !errors.Is(err, worker.ErrCrashed) {
		t.Fatalf("Health while tripped: %v, want the *UnhealthyError", err)
	}
	if _, cerr := p.Checkout(context.Background(), session.Config{}); !errors.As(cerr, new(*UnhealthyError)) {
		t.Fatalf("checkout while tripped: %v", cerr)
	}
	time.Sleep(time.Until(ue.Until) + 10*time.Millisecond)
	if rec.countNow(EventHealthy, "") != 0 {
		t.Fatal("healthy again with the supervisor held: the test proves nothing")
	}
	if err := p.Health(); err != nil {
		t.Fatalf("Health after the window: %v, want nil", err)
	}
	if !p.Stat().Healthy || rec.count(EventHealthy, "") != 1 {
		t.Fatal("Health ended the trip but the pool does not say so")
	}
	block.Store(false)
	close(release)
	s := checkout(t, p)
	runRepr(t, s, "1 + 1")
	s.Close()
	p.Close(context.Background())
	if err := p.Health(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Health of a closed pool: %v, want ErrClosed", err)
	}
}

// Stats.Healthy says what Health says at the same moment: once the
// restart window has passed, Stat reports the pool healthy (and the trip
// ended, EventHealthy) while the supervisor, held here, has not run.
// Before, Stat read the flag the supervisor's last pass left, and said
// unhealthy while Health, asked at the same moment, said healthy.
func TestStatsHealthyAgreesWithHealth(t *testing.T) {
	var block atomic.Bool
	blocked, release := make(chan struct{}, 1), make(chan struct{})
	p, rec := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, MaxRestarts: -1, RestartWindow: 2 * time.Second,
		reconciled: func() {
			if block.Load() {
				select {
				case blocked <- struct{}{}:
				default:
				}
				<-release
			}
		},
	})
	t.Cleanup(func() {
		if block.Swap(false) {
			close(release)
		}
	})
	// Trip the cap by hand: one failure with MaxRestarts 0.
	p.mu.Lock()
	p.gate.maxRestarts = 0
	var a after
	p.failLocked(time.Now(), errors.New("test failure"), &a)
	until := p.gate.tripped.Until
	p.mu.Unlock()
	p.finish(&a)
	if st := p.Stat(); st.Healthy {
		t.Fatalf("Stat while tripped: %+v", st)
	}
	block.Store(true)
	p.kick()
	<-blocked // the supervisor is held at the end of a pass
	time.Sleep(time.Until(until) + 10*time.Millisecond)
	if rec.countNow(EventHealthy, "") != 0 {
		t.Fatal("healthy again with the supervisor held: the test proves nothing")
	}
	if st := p.Stat(); !st.Healthy {
		t.Fatalf("Stat after the window: Healthy false, while Health says %v", p.Health())
	}
	if err := p.Health(); err != nil {
		t.Fatalf("Health after the window: %v", err)
	}
	if n := rec.countNow(EventHealthy, ""); n != 1 {
		t.Fatalf("%d healthy events, want 1", n)
	}
}
