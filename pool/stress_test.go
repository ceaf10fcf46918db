//go:build unix

package pool

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

var stressFeeds = flag.Int("stress-feeds", 500, "feeds per goroutine in TestStressRandomKills")

// TestStressRandomKills runs 8 goroutines × 500 feeds (-stress-feeds; 50
// with -short) over a pool of 1–4 workers while another goroutine SIGKILLs
// a random checked-out worker every 3 ms. Every feed computes a value
// unique to it; each must come back with exactly its own value or fail
// with a typed crash error. Nothing may be lost or misattributed.
func TestStressRandomKills(t *testing.T) {
	const goroutines = 8
	feeds := *stressFeeds
	if testing.Short() {
		feeds = 50
	}
	p, _ := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 4,
		CheckoutTimeout: 30 * time.Second,
		// The default restart cap: workers killed while running code are
		// not failures of the binary, so hundreds of them must not trip it.
	})

	var (
		mu    sync.Mutex
		pids  [goroutines]int // the worker each goroutine is feeding, or 0
		kills atomic.Int64
	)
	stop := make(chan struct{})
	var killer sync.WaitGroup
	killer.Go(func() {
		tick := time.NewTicker(3 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			mu.Lock()
			var busy []int
			for _, pid := range pids {
				if pid != 0 {
					busy = append(busy, pid)
				}
			}
			if len(busy) > 0 {
				// Under mu, so the session is still checked out: the kill
				// cannot hit a worker that went back to the pool.
				if syscall.Kill(busy[rand.IntN(len(busy))], syscall.SIGKILL) == nil {
					kills.Add(1)
				}
			}
			mu.Unlock()
		}
	})

	type tally struct{ ok, crashed, lost, wrong int }
	tallies := make([]tally, goroutines)
	var lostMsgs sync.Map
	start := time.Now()
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			tl := &tallies[g]
			for i := range feeds {
				want := fmt.Sprintf("%d-%d-%d", g, i, i*i)
				s, err := p.Checkout(context.Background(), session.Config{})
				if err != nil {
					tl.lost++
					lostMsgs.Store(want, "checkout: "+err.Error())
					continue
				}
				mu.Lock()
				pids[g] = s.Pid()
				mu.Unlock()
				// Every 16th run keeps its worker computing for a few
				// milliseconds, longer than a kernel time slice, so that
				// kills land inside runs however fast the round trips are:
				// a parent confined to one CPU spins for each reply, and
				// its other goroutines (the killer) then run only when the
				// worker gives the CPU up, at the end of a run or a slice.
				code := `f"{g}-{i}-" + str(i * i)`
				if i%16 == 0 {
					code = `f"{g}-{i}-" + str(i * i + 0 * sum(range(100000)))`
				}
				r, err := s.Run(context.Background(), code,
					session.WithInputs(session.Input{Name: "g", Value: g}, session.Input{Name: "i", Value: i}))
				mu.Lock()
				pids[g] = 0
				mu.Unlock()
				s.Close()
				switch {
				case err == nil:
					var got string
					if derr := r.Decode(&got); derr != nil || got != want {
						tl.wrong++
						lostMsgs.Store(want, fmt.Sprintf("wrong result %q (%v)", got, derr))
					} else {
						tl.ok++
					}
				case typedLoss(err):
					tl.crashed++
				default:
					tl.lost++
					lostMsgs.Store(want, fmt.Sprintf("untyped error %T: %v", err, err))
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	elapsed := time.Since(start)

	var sum tally
	for _, tl := range tallies {
		sum.ok += tl.ok
		sum.crashed += tl.crashed
		sum.lost += tl.lost
		sum.wrong += tl.wrong
	}
	st := eventually(t, p, 10*time.Second, "settled", func(st Stats) bool {
		return st.Busy == 0 && st.Spawning == 0 && st.Live >= 1
	})
	t.Logf("%d×%d feeds in %v: %d ok, %d crashed, %d lost, %d wrong; %d kills; %+v",
		goroutines, feeds, elapsed.Round(time.Millisecond), sum.ok, sum.crashed, sum.lost, sum.wrong, kills.Load(), st)
	lostMsgs.Range(func(k, v any) bool {
		t.Errorf("feed %s: %s", k, v)
		return true
	})
	if sum.ok+sum.crashed != goroutines*feeds || sum.lost != 0 || sum.wrong != 0 {
		t.Fatalf("accounting: %+v", sum)
	}
	if kills.Load() == 0 || sum.crashed == 0 || sum.ok == 0 {
		t.Fatalf("the stress did not stress: %d kills, %+v", kills.Load(), sum)
	}
	if crashes := st.Crashes[ReasonVanished]; crashes < sum.crashed {
		t.Fatalf("%d crashed feeds but %d vanished workers counted", sum.crashed, crashes)
	}
	if !st.Healthy || st.Live > 4 {
		t.Fatalf("%+v", st)
	}
}

// typedLoss reports whether err is one of the typed errors of a lost
// worker.
func typedLoss(err error) bool {
	var ce *worker.CrashError
	return errors.As(err, &ce) || errors.Is(err, session.ErrClosed) || errors.Is(err, worker.ErrMemoryLimit)
}
