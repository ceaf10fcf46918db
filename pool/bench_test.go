//go:build unix

package pool

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gomonty/monty/session"
)

// The benchmarks run against the real worker:
//
//	go test -run '^$' -bench . -benchmem ./pool/

func noEvents(Event) {}

// BenchmarkCheckoutRunClose is one pooled session from start to end on a
// warm pool: Checkout (Configure), Run "1 + 1", Close (Reset), three round
// trips.
func BenchmarkCheckoutRunClose(b *testing.B) {
	p, _ := newPool(b, Config{MinWorkers: 1, MaxWorkers: 1, Metrics: noEvents})
	ctx := context.Background()
	for b.Loop() {
		s, err := p.Checkout(ctx, session.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(ctx, "1 + 1"); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
}

// BenchmarkFeeds measures feed throughput with 1, 2 and 4 sessions checked
// out of one pool and fed concurrently, one goroutine each. One op is a
// batch of feedBatch feeds per session; feeds/s is the total rate.
func BenchmarkFeeds(b *testing.B) {
	const feedBatch = 50
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			p, _ := newPool(b, Config{MinWorkers: n, MaxWorkers: n, Metrics: noEvents})
			ctx := context.Background()
			sessions := make([]*Session, n)
			for i := range sessions {
				sessions[i] = checkout(b, p)
				defer sessions[i].Close()
			}
			for b.Loop() {
				var wg sync.WaitGroup
				for _, s := range sessions {
					wg.Go(func() {
						for range feedBatch {
							if _, err := s.Run(ctx, "1 + 1"); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
			}
			feeds := float64(b.N * n * feedBatch)
			b.ReportMetric(feeds/b.Elapsed().Seconds(), "feeds/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/feeds, "ns/feed")
		})
	}
}
