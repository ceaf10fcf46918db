//go:build unix

package pool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// A checkout that shuts its worker down through Do (Session has no
// Shutdown, but Do sends any request) gives back a session that is not
// reusable: Close destroys the worker instead of asking the exiting
// process for a Reset and counting a crash.
func TestDoShutdownIsDestroyNotCrash(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx := context.Background()
	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do(ctx, &message.Shutdown{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reusable(); err == nil {
		t.Error("Reusable says nil after the worker was shut down")
	}
	s.Close()
	if n := rec.reach(EventDestroy, DestroyRequested, 1); n != 1 {
		t.Errorf("%d destroy events, want 1", n)
	}
	if st := p.Stat(); len(st.Crashes) != 0 {
		t.Errorf("crashes %v, want none", st.Crashes)
	}
	// The pool replaces the worker and serves the next checkout.
	if _, err := p.Run(ctx, session.Config{}, "1"); err != nil {
		t.Fatal(err)
	}
}

// A checkout whose context ends with a cause (errgroup.WithContext's, the
// first failure) matches the context's error as ExhaustedError's doc says,
// as well as the cause. Before, its chain held only the cause, so
// errors.Is(err, context.Canceled) was false.
func TestExhaustedMatchesContextErrorWithCause(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	held, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	boom := errors.New("sibling failed")
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(boom)
	late, cancel2 := context.WithDeadlineCause(context.Background(), time.Unix(1, 0), boom)
	defer cancel2()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {late, context.DeadlineExceeded}} {
		_, err := p.Checkout(c.ctx, session.Config{})
		if !errors.Is(err, ErrExhausted) || !errors.Is(err, c.want) || !errors.Is(err, boom) {
			t.Errorf("got %v, want ErrExhausted, %v and the cause", err, c.want)
		}
	}
}

// A Config whose Configure cannot be encoded (a script name that is not
// UTF-8, stubs that are not) is the caller's mistake, found before
// anything reaches the worker: the checkout fails with the typed error and
// the pool keeps its worker. Before, every such checkout destroyed a
// healthy worker and started another.
func TestUnencodableConfigKeepsTheWorker(t *testing.T) {
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx := context.Background()
	bad := []session.Config{
		{ScriptName: "bad\xff.py"},
		{TypeCheck: true, TypeCheckStubs: "x: int\n\xfe"},
	}
	if p.Version() >= 5 { // a policy a protocol-5 child refuses
		bad = append(bad, session.Config{OsPolicy: &message.OsPolicy{Random: message.RandomSeeded,
			Seed: message.RandomSeed{Kind: message.SeedFloat, Float: math.NaN()}}})
	}
	for i := range 3 {
		for _, cfg := range bad {
			s, err := p.Checkout(ctx, cfg)
			if err == nil {
				s.Close()
			}
			var ir *session.InvalidRequestError
			var tl *session.RequestTooLargeError
			if !errors.As(err, &ir) && !errors.As(err, &tl) {
				t.Fatalf("round %d: checkout with %.20q: %v, want an InvalidRequestError or RequestTooLargeError", i, cfg.ScriptName, err)
			}
		}
	}
	if n := rec.count(EventDestroy, DestroyRequested); n != 0 {
		t.Errorf("%d workers destroyed for the caller's bad Config, want 0", n)
	}
	if st := p.Stat(); st.Destroyed != 0 || st.Restarts != 0 || st.Idle != 1 {
		t.Errorf("stats %+v: want the first worker idle, none destroyed or restarted", st)
	}
	if _, err := p.Run(ctx, session.Config{}, "1"); err != nil {
		t.Fatal(err)
	}
}

// A checkout configuring its worker when Close's deadline kills the
// checked-out workers fails with ErrClosed, whether the kill lands before
// the Configure or just after it succeeded. Before, the first got the
// worker's *worker.CrashError, and the second was handed a Session on the
// killed worker, whose first Run failed with a *worker.CrashError that
// does not match session.ErrClosed.
func TestCloseDeadlineDuringCheckoutIsErrClosed(t *testing.T) {
	for _, stage := range []struct {
		name string
		done bool
	}{{"before_configure", false}, {"after_configure", true}} {
		t.Run(stage.name, func(t *testing.T) {
			entered, proceed := make(chan struct{}), make(chan struct{})
			var once sync.Once
			p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, attaching: func(done bool) {
				if done == stage.done {
					once.Do(func() {
						close(entered)
						<-proceed
					})
				}
			}})
			type result struct {
				s   *Session
				err error
			}
			res := make(chan result, 1)
			go func() {
				s, err := p.Checkout(context.Background(), session.Config{})
				res <- result{s, err}
			}()
			<-entered
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the worker is checked out: Close kills it at once
			if err := p.Close(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Close: %v", err)
			}
			close(proceed)
			r := <-res
			if r.err == nil {
				_, err := r.s.Run(context.Background(), "1")
				r.s.Close()
				t.Fatalf("Checkout handed out a session on a worker Close killed; its Run: %v (matches session.ErrClosed: %v)",
					err, errors.Is(err, session.ErrClosed))
			}
			if !errors.Is(r.err, ErrClosed) {
				t.Fatalf("Checkout: %v (%T), want ErrClosed", r.err, r.err)
			}
			if c := testenv.Children(); len(c) != 0 {
				t.Fatalf("worker processes left: %v", c)
			}
		})
	}
}

// A checkout still configuring its worker when a graceful Close begins
// fails with ErrClosed, as every Checkout does from then on (and as a
// remote checkout did already); its worker is stopped rather than handed
// out, so Close does not wait for a session its caller never saw before
// Close. Before, the checkout succeeded and Close waited for that session.
func TestCloseDuringConfigureIsErrClosed(t *testing.T) {
	entered, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, attaching: func(done bool) {
		if done {
			once.Do(func() {
				close(entered)
				<-proceed
			})
		}
	}})
	res := make(chan error, 1)
	go func() {
		s, err := p.Checkout(context.Background(), session.Config{})
		if err == nil {
			s.Close()
		}
		res <- err
	}()
	<-entered
	closed := make(chan error, 1)
	go func() { closed <- p.Close(context.Background()) }()
	for !p.closing.Load() { // barrier: Close has begun
		time.Sleep(time.Millisecond)
	}
	close(proceed)
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Fatalf("Checkout: %v, want ErrClosed", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := rec.countNow(EventDestroy, DestroyClosing); n != 1 {
		t.Errorf("%d workers destroyed as closing, want 1", n)
	}
	if st := p.Stat(); st.Live != 0 || st.Busy != 0 || st.Checkouts != 0 {
		t.Errorf("after Close: %+v", st)
	}
	if c := testenv.Children(); len(c) != 0 {
		t.Fatalf("worker processes left: %v", c)
	}
}

// New's ctx bounds the prewarm; when it ends with starts in flight, those
// starts fail because the caller stopped waiting, not because the binary
// is broken: they do not count toward the restart cap (nor back the
// supervisor off), which replaces them at once. Before, a prewarm of more
// than MaxRestarts+1 workers cut short by New's ctx left a healthy binary's
// pool unhealthy, refusing every checkout for RestartWindow.
func TestCanceledPrewarmDoesNotTripTheRestartCap(t *testing.T) {
	real := testenv.Worker(t)
	proc, neg, err := session.Negotiate(context.Background(), session.Launch{}, session.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	proc.Close(context.Background())
	dir := t.TempDir()
	// The first start (New's first worker) and every start once "ok"
	// exists run the real worker; the prewarm's starts announce themselves
	// and hang.
	bin := script(t, fmt.Sprintf(`if [ -e %[1]s/first ] && [ ! -e %[1]s/ok ]; then
	: > %[1]s/hung.$$
	exec /bin/sleep 1000
fi
: > %[1]s/first
exec %[2]s "$@"`, dir, real))
	const min = 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for { // barrier: every prewarm start is in flight
			if hung, _ := filepath.Glob(filepath.Join(dir, "hung.*")); len(hung) == min-1 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644)
		cancel()
	}()
	p, rec := newPoolCtx(t, ctx, Config{MinWorkers: min, MaxWorkers: min, MaxRestarts: 1, ProtocolVersion: neg.Version,
		Worker: worker.Config{Binary: bin}, RestartBackoff: Backoff{Initial: time.Hour, Max: time.Hour}})
	if st := p.Stat(); !st.Healthy {
		t.Fatalf("a canceled prewarm tripped the restart cap: %+v", st)
	}
	eventually(t, p, 10*time.Second, "at strength", atStrength(min))
	s := checkout(t, p)
	runRepr(t, s, "1 + 1")
	s.Close()
	if n := rec.countNow(EventUnhealthy, ""); n != 0 {
		t.Fatalf("%d unhealthy events", n)
	}
}

// A checkout whose context ends while its worker is being configured
// gives up at once, as one that ends while it waits does (an
// *ExhaustedError matching the context's error), and the worker, which
// did nothing wrong, goes back to the pool once the Configure it was sent
// has been answered. Before, the Configure ran under the checkout's
// context: its end killed the worker (counted as a crash, or destroyed
// when the Configure was not sent yet) and the pool started another, so
// that checkouts timing out under load ate the workers they waited for.
func TestCheckoutCanceledDuringConfigureKeepsTheWorker(t *testing.T) {
	entered, proceed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, attaching: func(done bool) {
		if !done {
			once.Do(func() {
				close(entered)
				<-proceed
			})
		}
	}})
	eventually(t, p, 10*time.Second, "one idle worker", func(st Stats) bool { return st.Idle == 1 })
	id := p.idle[0].id
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		s, err := p.Checkout(ctx, session.Config{})
		if err == nil {
			s.Close()
		}
		res <- err
	}()
	<-entered
	cancel()
	close(proceed)
	var ee *ExhaustedError
	if err := <-res; !errors.As(err, &ee) || !errors.Is(err, context.Canceled) {
		t.Errorf("Checkout: %v (%T), want an *ExhaustedError matching context.Canceled", err, err)
	}
	eventually(t, p, 10*time.Second, "the worker idle again", func(st Stats) bool { return st.Idle == 1 && st.Busy == 0 })
	if n := rec.countNow(EventRelease, ""); n != 0 {
		// No EventCheckout handed it out, so none says it came back.
		t.Errorf("%d release events for a worker no checkout handed out", n)
	}
	s := checkout(t, p)
	defer s.Close()
	if s.WorkerID() != id {
		t.Errorf("worker %d after the canceled checkout, want %d back", s.WorkerID(), id)
	}
	if st := p.Stat(); st.Destroyed != 0 || len(st.Crashes) != 0 || st.Restarts != 0 {
		t.Errorf("after the canceled checkout: %+v, want no worker lost", st)
	}
	if n := rec.countNow(EventDestroy, "") + rec.countNow(EventCrash, ""); n != 0 {
		t.Errorf("%d workers destroyed or crashed", n)
	}
}

// A checkout whose context is already done when it takes an idle worker
// gives the worker back and fails with an *ExhaustedError, as the doc
// says; its text says that a worker was there. It said "no worker
// available", which reads as a pool too small to an operator whose
// clients merely went away.
func TestExhaustedWithAWorkerInHandSaysSo(t *testing.T) {
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Checkout(ctx, session.Config{})
	var ee *ExhaustedError
	if !errors.As(err, &ee) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Checkout with a done context: %v (%T), want an *ExhaustedError matching context.Canceled", err, err)
	}
	if text := err.Error(); strings.Contains(text, "no worker available") || !strings.Contains(text, "worker in hand") {
		t.Errorf("text %q: want it to say a worker was in hand, not that none was available", text)
	}
	// The worker went back: the next checkout gets it.
	s, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
