//go:build unix

package soak

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
)

var (
	flagSessions = flag.Int("soak.sessions", 0,
		"sessions in TestSoak (0: $MONTY_SOAK_SESSIONS, else "+strconv.Itoa(defaultSessions)+")")
	flagSeed        = flag.Uint64("soak.seed", 1, "seed of the fault schedule")
	flagFaultRate   = flag.Float64("soak.faults", 0.10, "fraction of sessions given a fault")
	flagConcurrency = flag.Int("soak.concurrency", 4, "goroutines running sessions")
)

// defaultSessions keeps a plain `go test ./...` within about 30 s on two
// cores, race detector included.
const defaultSessions = 300

// Pool shape: two warm workers, room for one more per extra goroutine,
// recycling and scale-down, so every pool path (reuse, replace, grow,
// recycle, shrink) is taken.
const (
	poolMin          = 2
	poolMax          = 4
	poolMaxCheckouts = 50
	// poolIdleTimeout scales the pool back to poolMin once the soak ends
	// (and in lulls during it).
	poolIdleTimeout = 300 * time.Millisecond
	// runDeadline bounds every feed; no correct one comes near it.
	runDeadline = 30 * time.Second
)

func sessionCount(t *testing.T) int {
	if *flagSessions > 0 {
		return *flagSessions
	}
	if v := os.Getenv("MONTY_SOAK_SESSIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("MONTY_SOAK_SESSIONS=%q is not a positive number", v)
		}
		return n
	}
	return defaultSessions
}

// tally is the soak's accounting. Every session ends as exactly one of
// ok (its own result came back and was checked, possibly after a fault it
// survived), faulted (the typed error of a fault that ends the session),
// lost (neither) or wrong (a result that is not its own).
type tally struct {
	mu       sync.Mutex
	sessions int
	injected [numFaults]int
	matched  [numFaults]int
	watchdog int // duration faults ended by the parent's backstop
	checked  int // results compared with their expected value
	ok       int
	faulted  int
	lost     int
	wrong    int
	problems []string
}

func (tl *tally) problem(kind *int, format string, args ...any) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	*kind++
	if len(tl.problems) < 50 {
		tl.problems = append(tl.problems, fmt.Sprintf(format, args...))
	}
}

func (tl *tally) add(f func(*tally)) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	f(tl)
}

// soaker runs sessions against a pool.
type soaker struct {
	p   *pool.Pool
	reg *session.Registry
	tl  *tally
}

// TestSoak runs sessionCount sessions, soak.concurrency at a time, over a
// pool of real workers. About soak.faults of them get a fault, chosen at
// random among the kinds above; the others, and the survivors of a fault,
// must return exactly their own value.
func TestSoak(t *testing.T) {
	testenv.Worker(t)
	n := sessionCount(t)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	p, err := pool.New(ctx, pool.Config{
		MinWorkers:            poolMin,
		MaxWorkers:            poolMax,
		MaxCheckoutsPerWorker: poolMaxCheckouts,
		CheckoutTimeout:       runDeadline,
		IdleTimeout:           poolIdleTimeout,
		Logger:                quiet,
	})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	closePool := func() {
		if closed {
			return
		}
		closed = true
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool Close: %v", err)
		}
	}
	t.Cleanup(closePool)

	reg := session.NewRegistry().
		MustRegister("sq", func(n int) int { return n * n })
	sk := &soaker{p: p, reg: reg, tl: &tally{}}

	// The schedule is fixed by the seed: session i's fault does not depend
	// on timing.
	faults := make([]fault, n)
	rng := rand.New(rand.NewPCG(*flagSeed, 0x50a6))
	for i := range faults {
		if rng.Float64() < *flagFaultRate {
			faults[i] = fault(1 + rng.IntN(int(numFaults)-1))
		}
	}

	begin := time.Now()
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(*flagConcurrency, 1) {
		wg.Go(func() {
			for i := range next {
				sk.session(t, i, faults[i])
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(begin)

	// The pool heals: every lost worker replaced, back to its minimum.
	st := settle(t, p, 30*time.Second)
	tl := sk.tl
	var kinds []string
	for f := faultNone + 1; f < numFaults; f++ {
		kinds = append(kinds, fmt.Sprintf("%s=%d/%d", f, tl.matched[f], tl.injected[f]))
	}
	totalFaults := 0
	for _, c := range tl.injected[1:] {
		totalFaults += c
	}
	t.Logf("soak: %d sessions in %v (%.0f/s, %d goroutines, seed %d): faults injected %d [%s] (matched/injected; %d duration faults ended by the watchdog); "+
		"results checked %d; ok %d, faulted %d, lost %d, wrong %d; pool live %d idle %d, checkouts %d, restarts %d, recycled %d, destroyed %d, crashes %v, healthy %v",
		tl.sessions, elapsed.Round(time.Millisecond), float64(tl.sessions)/elapsed.Seconds(), max(*flagConcurrency, 1), *flagSeed,
		totalFaults, strings.Join(kinds, " "), tl.watchdog,
		tl.checked, tl.ok, tl.faulted, tl.lost, tl.wrong,
		st.Live, st.Idle, st.Checkouts, st.Restarts, st.Recycled, st.Destroyed, st.Crashes, st.Healthy)
	for _, pr := range tl.problems {
		t.Error(pr)
	}
	if tl.lost != 0 || tl.wrong != 0 {
		t.Errorf("%d lost, %d wrong", tl.lost, tl.wrong)
	}
	if tl.sessions != n || tl.ok+tl.faulted+tl.lost+tl.wrong != n {
		t.Errorf("accounting: %d sessions, %d ok + %d faulted + %d lost + %d wrong", tl.sessions, tl.ok, tl.faulted, tl.lost, tl.wrong)
	}
	for f := faultNone + 1; f < numFaults; f++ {
		if tl.matched[f] != tl.injected[f] {
			t.Errorf("%s: %d of %d faults gave the expected typed error", f, tl.matched[f], tl.injected[f])
		}
	}
	if !st.Healthy || st.Live != poolMin || st.Idle != poolMin || st.Busy != 0 {
		t.Errorf("pool not back to health: %+v", st)
	}
	if st.Checkouts < int64(n) {
		t.Errorf("%d checkouts for %d sessions", st.Checkouts, n)
	}
	closePool()
	waitNoChildren(t, 5*time.Second)
}

// settle waits for the pool to be idle at its minimum size.
func settle(t *testing.T, p *pool.Pool, within time.Duration) pool.Stats {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		st := p.Stat()
		if st.Busy == 0 && st.Spawning == 0 && st.Waiting == 0 && st.Live == poolMin && st.Idle == poolMin {
			return st
		}
		if time.Now().After(deadline) {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// want is session n's own value.
func want(n int) string { return fmt.Sprintf("%d:%d", n, n*n) }

// session runs soak session n with fault f.
func (sk *soaker) session(t *testing.T, n int, f fault) {
	tl := sk.tl
	tl.add(func(tl *tally) {
		tl.sessions++
		tl.injected[f]++
	})
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	// Output is collected only from the session's own run, below.
	var (
		stdout  strings.Builder
		collect bool
	)
	cfg := config(f)
	cfg.Print = func(_ message.PrintStream, text string) {
		if collect {
			stdout.WriteString(text)
		}
	}
	s, err := sk.p.Checkout(ctx, cfg)
	if err != nil {
		tl.problem(&tl.lost, "session %d (%s): checkout: %v", n, f, err)
		return
	}
	defer s.Close()

	if f != faultNone {
		err := sk.inject(s, n, f)
		survives, mismatch := matchFault(f, n, err)
		if mismatch != nil {
			tl.problem(&tl.lost, "session %d: %v", n, mismatch)
			return
		}
		tl.add(func(tl *tally) {
			tl.matched[f]++
			if f == faultDuration && !survives {
				tl.watchdog++
			}
		})
		if !survives {
			if st := s.State(); st != session.StateClosed {
				tl.problem(&tl.lost, "session %d: state %v after %v, which it does not survive", n, st, err)
				return
			}
			tl.add(func(tl *tally) { tl.faulted++ })
			return
		}
		if s.State() != session.StateIdle {
			tl.problem(&tl.lost, "session %d: state %v after surviving %v", n, s.State(), err)
			return
		}
		if f == faultDuration {
			// The duration budget is spent for good; Reset starts a fresh
			// one in the same worker.
			if err := s.Reset(ctx); err != nil {
				tl.problem(&tl.lost, "session %d: Reset after the duration fault: %v", n, err)
				return
			}
		}
	}

	// The session's own value: sometimes through a host function,
	// sometimes with output to check too.
	var (
		code string
		opts = []session.RunOption{session.WithInputs(session.Input{Name: "n", Value: n})}
	)
	switch n % 3 {
	case 0:
		code = `f"{n}:" + str(n * n)`
	case 1:
		code = `f"{n}:" + str(sq(n))`
		opts = append(opts, session.WithFunctions(sk.reg))
	case 2:
		code = "print(n)\n" + `f"{n}:" + str(sq(n))`
		opts = append(opts, session.WithFunctions(sk.reg))
		collect = true
	}
	r, err := s.Run(ctx, code, opts...)
	if err != nil {
		tl.problem(&tl.lost, "session %d (%s): %T: %v", n, f, err, err)
		return
	}
	var got string
	if derr := r.Decode(&got); derr != nil || got != want(n) {
		tl.problem(&tl.wrong, "session %d (%s): got %s (%v), want %q", n, f, r.Repr(), derr, want(n))
		return
	}
	if n%3 == 2 && stdout.String() != strconv.Itoa(n)+"\n" {
		tl.problem(&tl.wrong, "session %d (%s): printed %q", n, f, stdout.String())
		return
	}
	tl.add(func(tl *tally) {
		tl.checked++
		tl.ok++
	})
}

// inject runs the fault's feed and returns its error.
func (sk *soaker) inject(s *pool.Session, n int, f fault) error {
	ctx, cancel := context.WithTimeout(context.Background(), runDeadline)
	defer cancel()
	var (
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	switch f {
	case faultKill, faultCancel:
		// Strike once the worker is executing the feed, after a random
		// few milliseconds; joined before the session is given back, so a
		// late strike can never hit a worker serving another checkout.
		pid := s.Pid()
		delay := time.Duration(rand.IntN(10)) * time.Millisecond
		go func() {
			defer close(done)
			if !waitComputing(pid, stop) {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(delay):
			}
			if f == faultKill {
				kill(pid)
			} else {
				cancel()
			}
		}()
	default:
		close(done)
	}
	_, err := s.Run(ctx, faultCode(f, n))
	close(stop)
	<-done
	return err
}
