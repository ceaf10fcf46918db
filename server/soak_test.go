package server

import (
	"context"
	"flag"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/remotejob"
)

var soakSessions = flag.Int("soak-sessions", 60, "sessions of TestSoakDrainsAcrossReplicas (500 for the full soak)")

// TestSoakDrainsAcrossReplicas runs sessions (session.RemoteLauncher with
// its auto-resume, protocols 4 and 2 in turn) over 3 in-process replicas
// sharing one dump key, draining and replacing a replica every 20 finished
// sessions; every session must end with the right answer, resumed on
// another replica when a drain interrupted it.
func TestSoakDrainsAcrossReplicas(t *testing.T) {
	const replicas, drainEvery, concurrency = 3, 20, 6
	var mu sync.Mutex
	servers := make([]*testServer, replicas)
	for i := range servers {
		servers[i] = startServer(t, func(c *Config) { c.DrainGrace = 2 * time.Second; c.MaxSessionsPerClient = -1 })
	}
	var rr atomic.Uint64
	pick := func() string {
		mu.Lock()
		defer mu.Unlock()
		return servers[rr.Add(1)%replicas].URL
	}
	var ok, lost, wrong, resumed, done atomic.Int64
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range jobs {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				res, moved, err := remotejob.Run(ctx, pick, []uint32{4, 2}[n%2], n, 5*time.Millisecond)
				cancel()
				resumed.Add(int64(moved))
				switch res {
				case remotejob.OK:
					ok.Add(1)
				case remotejob.Lost:
					lost.Add(1)
					t.Errorf("job %d lost: %v", n, err)
				default:
					wrong.Add(1)
					t.Errorf("job %d wrong: %v", n, err)
				}
				done.Add(1)
			}
		}()
	}
	drains := 0
	for n := range *soakSessions {
		jobs <- n
		if n > 0 && n%drainEvery == 0 {
			// Drain one replica (its sessions move elsewhere) and replace it.
			i := drains % replicas
			drains++
			mu.Lock()
			old := servers[i]
			mu.Unlock()
			fresh := startServer(t, func(c *Config) { c.DrainGrace = 2 * time.Second; c.MaxSessionsPerClient = -1 })
			mu.Lock()
			servers[i] = fresh
			mu.Unlock()
			go old.Shutdown(context.Background())
		}
	}
	close(jobs)
	wg.Wait()
	t.Logf("results: %d ok, %d lost, %d wrong (%d resumed after %d drains)", ok.Load(), lost.Load(), wrong.Load(), resumed.Load(), drains)
	if ok.Load() != int64(*soakSessions) {
		t.Fatalf("%d of %d sessions ok", ok.Load(), *soakSessions)
	}
}
