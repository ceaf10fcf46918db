//go:build unix

package session

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gomonty/monty/internal/wsrelay"
	"github.com/gomonty/monty/worker"
)

// benchTransports runs f on a warm session over pipes (a local child) and
// over a loopback WebSocket (a relay bridging to a local child: the same
// worker, one WebSocket hop more each way), in the same run.
//
//	go test -run '^$' -bench 'BenchmarkRemote' -benchmem -count=3 ./session/
func benchTransports(b *testing.B, f func(b *testing.B, s *Session)) {
	bin := requireWorker(b)
	cfg := Config{Limits: Limits{MaxSuspensions: 20000}, Logger: quietLogger}
	b.Run("pipes", func(b *testing.B) {
		s, err := Start(context.Background(), Launch{Launcher: ProcessLauncher{Worker: worker.Config{Binary: bin}}}, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		f(b, s)
	})
	b.Run("websocket", func(b *testing.B) {
		r := &wsrelay.Relay{Worker: worker.Config{Binary: bin}}
		srv := httptest.NewServer(r)
		defer func() { srv.Close(); r.Wait() }()
		l := RemoteLauncher{URL: "ws" + srv.URL[len("http"):] + "/"}
		s, err := Start(context.Background(), Launch{Launcher: l}, cfg)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		f(b, s)
	})
}

// BenchmarkRemoteFeed: one warm Feed("1 + 2") round trip.
func BenchmarkRemoteFeed(b *testing.B) {
	benchTransports(b, func(b *testing.B, s *Session) {
		ctx := context.Background()
		defer hostCPU(b)()
		for b.Loop() {
			if _, err := s.Feed(ctx, "1 + 2"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRemoteHostCall: one feed making 100 typed host calls (one op =
// the feed).
func BenchmarkRemoteHostCall(b *testing.B) {
	benchTransports(b, func(b *testing.B, s *Session) {
		ctx := context.Background()
		opt := WithFunctions(NewRegistry().MustRegister("f", func(i int) {}))
		defer hostCPU(b)()
		for b.Loop() {
			if _, err := s.Run(ctx, "for i in range(100): f(i)", opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}
