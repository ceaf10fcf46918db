//go:build unix

package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// silentAfter returns a worker binary that runs the real worker for its
// first n starts and, after that, a process that never answers.
func silentAfter(t *testing.T, n int) string {
	real := testenv.Worker(t)
	counter := filepath.Join(t.TempDir(), "starts")
	os.WriteFile(counter, []byte("0\n"), 0o644)
	return script(t, fmt.Sprintf(`read n < %[1]s || n=0
n=$((n + 1))
echo $n > %[1]s
if [ "$n" -le %[2]d ]; then exec %[3]s "$@"; fi
exec /bin/sleep 3600`, counter, n, real))
}

// A local worker that does not answer its handshake within StartTimeout
// fails with a *session.StartTimeoutError (matching session.ErrTimeout),
// as a remote endpoint's start and session.Start do: the first worker of
// New, and a worker the supervisor starts (its EventSpawnFailed). Before,
// the pool's own bound ended the handshake as an anonymous context
// deadline, a killed *session.TimeoutError the caller's context had not
// caused.
func TestSilentWorkerIsStartTimeoutError(t *testing.T) {
	testenv.Worker(t)
	// The spawn case's first worker is a real one that must start within
	// d: through a relay worker (make relay-suites) on a loaded machine,
	// a start took over 300 ms. The silent one costs d each way.
	const d = 2 * time.Second
	check := func(t *testing.T, what string, err error) {
		t.Helper()
		var ste *session.StartTimeoutError
		if !errors.As(err, &ste) || ste.Timeout != d || !errors.Is(err, session.ErrTimeout) {
			t.Fatalf("%s: %v (%T), want a *session.StartTimeoutError of %v", what, err, err, d)
		}
	}
	t.Run("New", func(t *testing.T) {
		_, err := New(context.Background(), Config{MinWorkers: 1, MaxWorkers: 1, Logger: quiet,
			Worker: worker.Config{Binary: silentAfter(t, 0)}, StartTimeout: d})
		check(t, "New", err)
	})
	t.Run("spawn", func(t *testing.T) {
		proc, neg, err := session.Negotiate(context.Background(), session.Launch{}, session.Config{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		proc.Close(context.Background())
		_, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2, ProtocolVersion: neg.Version,
			Worker: worker.Config{Binary: silentAfter(t, 1)}, StartTimeout: d})
		if rec.reach(EventSpawnFailed, "", 1) == 0 {
			t.Fatal("no spawn_failed event")
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, e := range rec.evs {
			if e.Kind == EventSpawnFailed {
				check(t, "spawn", e.Err)
				return
			}
		}
	})
}
