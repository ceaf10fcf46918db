//go:build unix

// Command pool runs many sandboxed sessions concurrently over a small pool
// of monty workers while killing workers under them, and checks that every
// session gets its own correct result or a typed crash error (and then
// succeeds when retried once):
//
//	go run ./examples/pool -sessions 200 -workers 4 -kill-every 20
//
// It ends with the line "results: N ok, L lost, W wrong" and exits 0 only
// when nothing was lost or wrong and every session either succeeded or was
// retried after a typed crash error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// code computes a value unique to the session from its inputs.
const code = `total = 0
for k in range(work):
    total += k * idx
f"{idx}:{total}"`

// outcome is how one attempt at a session ended.
type outcome uint8

const (
	ok      outcome = iota
	crashed         // a typed error of a lost worker
	lost            // any other error
	wrong           // a result, but not this session's
)

// run is the program; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sessions := fs.Int("sessions", 200, "number of sessions, all started at once")
	workers := fs.Int("workers", 4, "pool size (MinWorkers = MaxWorkers)")
	killEvery := fs.Int("kill-every", 20, "SIGKILL a random busy worker every N session starts (0: never)")
	work := fs.Int("work", 20000, "loop iterations per session (how long each one runs)")
	binary := fs.String("binary", "", "worker binary (default: the usual search, see worker.ResolveBinary)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *sessions < 1 || *workers < 1 || *killEvery < 0 || *work < 1 {
		fmt.Fprintln(stderr, "pool: -sessions, -workers and -work must be positive, -kill-every not negative")
		return 2
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, err := pool.New(ctx, pool.Config{
		MinWorkers: *workers, MaxWorkers: *workers,
		Worker:          worker.Config{Binary: *binary},
		CheckoutTimeout: 2 * time.Minute,
		Logger:          log,
	})
	if err != nil {
		fmt.Fprintln(stderr, "pool:", err)
		return 1
	}

	var (
		mu      sync.Mutex
		busy    = map[int]int{} // session → pid of the worker running it
		starts  atomic.Int64
		kills   atomic.Int64
		retried atomic.Int64
	)
	// attempt runs session i once.
	attempt := func(i int) (outcome, error) {
		s, err := p.Checkout(ctx, session.Config{})
		if err != nil {
			return lost, err
		}
		defer s.Close()
		mu.Lock()
		busy[i] = s.Pid()
		if n := starts.Add(1); *killEvery > 0 && n%int64(*killEvery) == 0 {
			// Pick any session that is running now, this one included.
			pids := make([]int, 0, len(busy))
			for _, pid := range busy {
				pids = append(pids, pid)
			}
			if syscall.Kill(pids[rand.IntN(len(pids))], syscall.SIGKILL) == nil {
				kills.Add(1)
			}
		}
		mu.Unlock()
		r, err := s.Run(ctx, code, session.WithInputs(
			session.Input{Name: "idx", Value: i}, session.Input{Name: "work", Value: *work}))
		mu.Lock()
		delete(busy, i)
		mu.Unlock()
		if err != nil {
			if typedCrash(err) {
				return crashed, err
			}
			return lost, err
		}
		var got string
		want := fmt.Sprintf("%d:%d", i, i**work*(*work-1)/2)
		if err := r.Decode(&got); err != nil || got != want {
			return wrong, fmt.Errorf("session %d: got %q, want %q (%v)", i, got, want, err)
		}
		return ok, nil
	}

	final := make([]outcome, *sessions)
	var failedAfterRetry atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for i := range *sessions {
		wg.Go(func() {
			o, err := attempt(i)
			if o == crashed {
				retried.Add(1)
				o, err = attempt(i)
				if o == crashed {
					failedAfterRetry.Add(1)
				}
			}
			if o == lost || o == wrong {
				fmt.Fprintf(stderr, "session %d: %v\n", i, err)
			}
			final[i] = o
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st := p.Stat()
	if err := p.Close(cctx); err != nil {
		fmt.Fprintln(stderr, "pool: close:", err)
	}

	var nOK, nLost, nWrong int
	for _, o := range final {
		switch o {
		case ok:
			nOK++
		case lost:
			nLost++
		case wrong:
			nWrong++
		}
	}
	fmt.Fprintf(stdout, "%d sessions on %d workers in %v: %d kills, %d retried after a typed crash, %d crashed again\n",
		*sessions, *workers, elapsed.Round(time.Millisecond), kills.Load(), retried.Load(), failedAfterRetry.Load())
	fmt.Fprintf(stdout, "pool: %d checkouts, %d restarts, crashes %v, healthy %v\n",
		st.Checkouts, st.Restarts, st.Crashes, st.Healthy)
	fmt.Fprintf(stdout, "results: %d ok, %d lost, %d wrong\n", nOK, nLost, nWrong)
	// A session that crashed twice was retried after a typed crash error:
	// it is accounted for, not lost.
	if nLost != 0 || nWrong != 0 {
		return 1
	}
	return 0
}

// typedCrash reports whether err is one of the typed errors of a worker
// lost under the session.
func typedCrash(err error) bool {
	var ce *worker.CrashError
	return errors.As(err, &ce) || errors.Is(err, worker.ErrMemoryLimit) || errors.Is(err, session.ErrClosed)
}
