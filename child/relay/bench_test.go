package relay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// The relay's cost: the same warm feed and host calls against the real
// worker directly and through `montygo subprocess` (built once into a
// temporary directory, with the real worker beside it), in the same run.
//
//	go test -run '^$' -bench . -benchmem ./child/relay/

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// montygo builds the CLI and returns its path.
func montygo(b *testing.B) string {
	real := testenv.Worker(b)
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "montygo-bench")
		if benchErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(benchDir, "montygo"), "github.com/gomonty/monty/cmd/montygo")
		cmd.Stderr = os.Stderr
		if benchErr = cmd.Run(); benchErr != nil {
			return
		}
		benchErr = os.Symlink(real, filepath.Join(benchDir, "monty"))
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return filepath.Join(benchDir, "montygo")
}

type target struct {
	name    string
	bin     func(b *testing.B) string
	version uint32
}

var targets = []target{
	{"direct", testenvWorker, 0},
	{"relay-v4", montygo, 4},
	{"relay-v2", montygo, 2},
}

func testenvWorker(b *testing.B) string { return testenv.Worker(b) }

func benchSession(b *testing.B, t target) *session.Session {
	s, err := session.Start(context.Background(), session.Config{
		Worker:          worker.Config{Binary: t.bin(b), Logger: quiet},
		ProtocolVersion: t.version,
		Logger:          quiet,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.Run(context.Background(), "1"); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkWarmFeed: one feed of `1 + 2` on a warm session.
func BenchmarkWarmFeed(b *testing.B) {
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			s := benchSession(b, t)
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.Feed(ctx, "1 + 2"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHostCalls: 1,000 host calls in one feed (one op = the feed).
func BenchmarkHostCalls(b *testing.B) {
	for _, t := range targets {
		b.Run(t.name, func(b *testing.B) {
			s := benchSession(b, t)
			ctx := context.Background()
			opt := session.WithFunctions(session.NewRegistry().MustRegister("f", func(i int) int { return i }))
			for b.Loop() {
				if _, err := s.Run(ctx, "for i in range(1000): f(i)", opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
