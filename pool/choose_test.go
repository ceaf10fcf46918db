//go:build unix

package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomonty/monty/session"
)

// Checkouts that choose sent to the local workers claim their capacity
// until they reach acquire: with one idle worker and a remote endpoint,
// two checkouts choosing at once go one local and one remote, instead of
// both local, the second then waiting for a worker while the endpoint
// could serve. The claim is released by acquire.
func TestChooseCountsLocalCheckoutsOnTheirWay(t *testing.T) {
	p, _ := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1,
		// Never dialled: choose only decides.
		Endpoints: []Endpoint{{Name: "a", URL: "ws://127.0.0.1:1/"}},
	})
	eventually(t, p, 10*time.Second, "one idle worker", func(st Stats) bool { return st.Idle == 1 })
	tried := make([]bool, 1)
	e, local, err := p.choose(tried)
	if err != nil || !local || e != nil {
		t.Fatalf("first choice: %v, local %v, %v; want the idle local worker", e, local, err)
	}
	e, local, err = p.choose(tried)
	if err != nil || local || e == nil || e.Name != "a" {
		t.Fatalf("second choice while the first is on its way: %v, local %v, %v; want endpoint a", e, local, err)
	}
	// The first checkout reaches acquire and takes the worker.
	m, _, _, err := p.acquire(t.Context(), true, new(checkoutWait))
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	chosen := p.chosen
	e.outstanding--
	p.mu.Unlock()
	p.starts.Done() // the remote choice's, which checkoutRemote would release
	if chosen != 0 {
		t.Fatalf("chosen %d after acquire, want 0", chosen)
	}
	p.checkin(m, false)
	eventually(t, p, 10*time.Second, "the worker idle again", func(st Stats) bool { return st.Idle == 1 })
	if _, local, _ := p.choose(tried); !local {
		t.Fatal("with the worker idle and nothing on its way, local lost the tie")
	}
	p.mu.Lock()
	p.chosen--
	p.mu.Unlock()
}

// While a failed start's backoff runs, no local worker may start: with
// none idle, the local workers are not eligible, and a checkout goes to a
// remote endpoint rather than wait out the backoff (RestartBackoff.Max may
// be long) while the endpoint could serve. Before, choose counted the
// worker that could not start as free capacity, and the local workers won
// the tie.
func TestChooseSkipsLocalWhileStartsBackOff(t *testing.T) {
	wcfg, v, _ := flaky(t, 1) // only the first start succeeds
	p, _ := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 1, Worker: wcfg, ProtocolVersion: v,
		MaxRestarts: 5, RestartBackoff: Backoff{Initial: time.Hour, Max: time.Hour},
		// Never dialled: choose only decides.
		Endpoints: []Endpoint{{Name: "a", URL: "ws://127.0.0.1:1/"}},
	})
	killIdle(t, p) // its replacement fails to start: an hour's backoff
	eventually(t, p, 10*time.Second, "a failed replacement", func(st Stats) bool {
		return st.SpawnFailures == 1 && st.Spawning == 0 && st.Live == 0 && st.Healthy
	})
	e, local, err := p.choose(make([]bool, 1))
	if local {
		p.mu.Lock()
		p.chosen--
		p.mu.Unlock()
	}
	if e != nil {
		p.mu.Lock()
		e.outstanding--
		p.mu.Unlock()
		p.starts.Done()
	}
	if err != nil || local || e == nil || e.Name != "a" {
		t.Fatalf("choice while the local start backs off: %v, local %v, %v; want endpoint a", e, local, err)
	}
}

// A checkout of a mixed pool waiting for a local worker when the restart
// cap trips goes on to the endpoints, as one that finds the cap tripped
// does (Checkout: "a tripped restart cap an *UnhealthyError at once (or a
// remote endpoint, when there is one)"). Before, it failed with the
// UnhealthyError without trying them.
func TestWaiterTriesEndpointsWhenTheCapTrips(t *testing.T) {
	wcfg, v, _ := flaky(t, 1) // only the first start succeeds
	p, _ := newPool(t, Config{
		MinWorkers: 1, MaxWorkers: 2, Worker: wcfg, ProtocolVersion: v,
		MaxRestarts: 1, RestartBackoff: Backoff{Initial: time.Millisecond, Max: time.Millisecond},
		// Refuses connections: a dial failure, counted.
		Endpoints: []Endpoint{{Name: "a", URL: "ws://127.0.0.1:1/"}},
	})
	busy := checkout(t, p) // the local worker; the next one may start
	defer busy.Close()
	// The endpoint looks loaded, so the next checkout waits for a local
	// worker, whose starts fail until the cap trips.
	p.mu.Lock()
	p.eps[0].outstanding += 5
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.Checkout(ctx, session.Config{})
	p.mu.Lock()
	p.eps[0].outstanding -= 5
	st := p.endpointStatsLocked()[0]
	p.mu.Unlock()
	if !errors.Is(err, ErrUnhealthy) {
		t.Fatalf("checkout: %v, want ErrUnhealthy (the endpoint refuses too)", err)
	}
	if st.DialFailures != 1 || st.Outstanding != 0 {
		t.Fatalf("endpoint %+v: want it tried once after the cap tripped", st)
	}
}
