package server

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport/ws"
	"github.com/gomonty/monty/worker"
)

// BenchmarkTurn is one Feed round trip on an open session: a direct local
// session (pipes to the worker) against the same through the server
// (WebSocket, server policy, relay, pipes to a pooled worker).
func BenchmarkTurn(b *testing.B) {
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		s, err := session.Start(ctx, session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: testenv.Worker(b)}}}, session.Config{})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		feed := &message.Feed{Code: "1 + 1"}
		b.ReportAllocs()
		for b.Loop() {
			if ev, err := s.Do(ctx, feed); err != nil || ev.Body.EventKind() != message.KindComplete {
				b.Fatal(err)
			}
		}
	})
	for _, v := range []uint32{4, 2} {
		b.Run("server/v"+string(rune('0'+v)), func(b *testing.B) {
			ts := startServer(b, nil)
			c := dial(b, ts.URL, v, ws.DialOptions{})
			configure(b, c, v, nil)
			feed := &message.Feed{Code: "1 + 1"}
			b.ReportAllocs()
			for b.Loop() {
				if turn, err := c.Do(ctx, feed); err != nil || turn.Event.Body.EventKind() != message.KindComplete {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSession is a whole short session (open, configure, one feed,
// close): a checkout from a local prewarmed pool against a WebSocket
// session through the server (whose pool is prewarmed the same way).
// sessions/s is reported beside ns/op.
func BenchmarkSession(b *testing.B) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b.Run("direct-pool", func(b *testing.B) {
		p, err := pool.New(ctx, pool.Config{MinWorkers: 2, MaxWorkers: 2, Worker: worker.Config{Binary: testenv.Worker(b)}, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(ctx)
		b.ReportAllocs()
		for b.Loop() {
			s, err := p.Checkout(ctx, session.Config{})
			if err != nil {
				b.Fatal(err)
			}
			if ev, err := s.Do(ctx, &message.Feed{Code: "1 + 1"}); err != nil || ev.Body.EventKind() != message.KindComplete {
				b.Fatal(err)
			}
			s.Close()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
	})
	b.Run("server", func(b *testing.B) {
		ts := startServer(b, func(c *Config) { c.Prewarm = 2; c.MaxSessionsPerClient = -1 })
		b.ReportAllocs()
		for b.Loop() {
			c, err := dialRaw(ctx, ts.URL, 4, ws.DialOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if turn, err := c.Do(ctx, &message.Configure{ProtocolVersion: 4}); err != nil || turn.Event.Body.EventKind() != message.KindOk {
				b.Fatal(err)
			}
			if turn, err := c.Do(ctx, &message.Feed{Code: "1 + 1"}); err != nil || turn.Event.Body.EventKind() != message.KindComplete {
				b.Fatal(err)
			}
			c.Close()
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sessions/s")
	})
}
