package hostile_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomonty/monty/internal/hostile"
	"github.com/gomonty/monty/internal/hostile/hostilebuild"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/pool"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// wrapper is the pool's worker binary in TestPoolRecoversFromHostileWorker:
// it runs the real worker, except for the spawn numbered $HOSTILE_AT
// (counting from 0), which becomes the hostile child. Only shell builtins
// are used: the worker's environment has no PATH.
const wrapper = `#!/bin/sh
n=0
[ -f "$HOSTILE_COUNTER" ] && read n < "$HOSTILE_COUNTER"
echo $((n + 1)) > "$HOSTILE_COUNTER"
if [ "$n" = "$HOSTILE_AT" ]; then exec "$HOSTILE_BIN" "$@"; fi
exec "$REAL_BIN" "$@"
`

// TestPoolRecoversFromHostileWorker puts one hostile worker into a pool of
// real ones, for every scenario that misbehaves during a feed: the session
// on it gets the scenario's typed error, the pool discards that worker,
// replaces it with a good one, stays healthy and serves the next checkout.
func TestPoolRecoversFromHostileWorker(t *testing.T) {
	real := testenv.Worker(t)
	bad := hostilebuild.Build(t)
	for _, sc := range hostile.Scenarios() {
		if sc.Trigger != hostile.AtFeed || sc.Expect.Outcome == hostile.OK || sc.MaxFrame > 32<<20 ||
			!containsU32(sc.Protocols, 2) || sc.Name == "stderr_flood" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "monty-wrapper")
			if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
				t.Fatal(err)
			}
			env := []string{
				"HOSTILE_COUNTER=" + filepath.Join(dir, "count"), "HOSTILE_AT=1",
				"HOSTILE_BIN=" + bad, "REAL_BIN=" + real,
				"HOSTILE_SCENARIO=" + sc.Name, "HOSTILE_LIFETIME=30s", "HOSTILE_SCALE=8",
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p, err := pool.New(ctx, pool.Config{
				MinWorkers: 1, MaxWorkers: 1, ProtocolVersion: 2,
				Worker: worker.Config{Binary: bin, Env: env},
				Logger: quiet,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			cfg := session.Config{MaxDecodeBytes: parentBudget, Logger: quiet}

			// Spawn 0 is real: prove it, then throw it away so that the
			// replacement (spawn 1) is the hostile one.
			s, err := p.Checkout(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r, err := s.Run(ctx, "1 + 2"); err != nil || r.Repr() != "3" {
				t.Fatalf("good worker: %v %v", r, err)
			}
			s.Destroy()

			s, err = p.Checkout(ctx, cfg)
			if err != nil {
				t.Fatalf("checkout of the hostile worker: %v", err)
			}
			deadline := callDeadline
			if sc.Expect.NeedsDeadline {
				deadline = shortDeadline
			}
			rctx, rcancel := context.WithTimeout(ctx, deadline)
			_, err = s.Run(rctx, sc.Code, session.WithFunctions(registry()))
			rcancel()
			if o := classify(err); !sc.Expect.Allows(o) {
				t.Errorf("hostile worker: outcome %s (%v), want %s", o, err, sc.Expect.Outcome)
			}
			s.Close() // destroys the worker unless the session survived cleanly

			// The pool replaces it (spawn 2, real) and stays healthy.
			s, err = p.Checkout(ctx, cfg)
			if err != nil {
				t.Fatalf("checkout after the hostile worker: %v (stats %+v)", err, p.Stat())
			}
			if r, err := s.Run(ctx, "40 + 2"); err != nil || r.Repr() != "42" {
				t.Fatalf("replacement worker: %v %v", r, err)
			}
			s.Close()
			if st := p.Stat(); !st.Healthy || st.Live != 1 {
				t.Fatalf("pool after recovery: %+v", st)
			}
		})
	}
}

func containsU32(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
