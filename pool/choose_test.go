package pool

import (
	"testing"
	"time"
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
	m, _, _, err := p.acquire(t.Context(), true)
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
	p.checkin(m)
	eventually(t, p, 10*time.Second, "the worker idle again", func(st Stats) bool { return st.Idle == 1 })
	if _, local, _ := p.choose(tried); !local {
		t.Fatal("with the worker idle and nothing on its way, local lost the tie")
	}
	p.mu.Lock()
	p.chosen--
	p.mu.Unlock()
}
