//go:build unix

package pool

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/worker"
)

// stderrLines is a slog.Handler that counts the workers' stderr line
// records.
type stderrLines struct {
	mu sync.Mutex
	n  int
}

func (h *stderrLines) Enabled(context.Context, slog.Level) bool { return true }
func (h *stderrLines) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "monty worker stderr" {
		h.mu.Lock()
		h.n++
		h.mu.Unlock()
	}
	return nil
}
func (h *stderrLines) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *stderrLines) WithGroup(string) slog.Handler      { return h }

func (h *stderrLines) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// The stderr log bound (worker.Config.StderrLogBurst, StderrLogRate) was
// per worker, so a pool of n workers logged n bursts, and a program that
// floods stderr and gets its worker replaced (a crash, a recycle) got a
// fresh burst every time. The workers of one pool now share one limit.
func TestStderrLogLimitIsThePools(t *testing.T) {
	const workers, lines, burst = 3, 50, 5
	real := testenv.Worker(t)
	bin := script(t, fmt.Sprintf(`i=0
while [ $i -lt %d ]; do echo "error $i" >&2; i=$((i+1)); done
exec %s "$@"`, lines, real))
	h := &stderrLines{}
	began := time.Now()
	p, err := New(context.Background(), Config{MinWorkers: workers, MaxWorkers: workers, Logger: quiet,
		Worker: worker.Config{Binary: bin, Logger: slog.New(h), StderrLogBurst: burst, StderrLogRate: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// Every worker has started once three sessions are checked out.
	var held []*Session
	for range workers {
		held = append(held, checkout(t, p))
	}
	for _, s := range held {
		s.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	allowed := burst + int(time.Since(began).Seconds()+1)
	if n := h.count(); n > allowed {
		t.Fatalf("%d workers logged %d stderr lines, want at most %d (one burst of %d and 1 a second)", workers, n, allowed, burst)
	}
}
