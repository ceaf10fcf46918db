//go:build unix

package pool

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/session"
)

// sessionOutcomes counts the monty.pool.session.duration records by
// outcome.
func sessionOutcomes(t *testing.T, reader *sdkmetric.ManualReader) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	h, ok := telemetrytest.Collect(t, reader)[MetricSessionDuration].Data.(metricdata.Histogram[float64])
	if !ok {
		return out
	}
	for _, dp := range h.DataPoints {
		v, _ := dp.Attributes.Value(AttrCheckoutOutcome)
		out[v.AsString()] += dp.Count
	}
	return out
}

// With MaxCheckoutsPerWorker 1 (a fresh worker for every session), each
// session's worker is recycled when it closes, and the session's outcome
// (monty.pool.session.duration) is still its own: ok for a clean one,
// error for one whose worker crashed, abandoned for one whose feed its
// context interrupted, as without recycling. Before, a session on a
// worker due for recycling was recorded ok whatever had happened to it,
// so with a fresh worker per session every crash counted as ok.
func TestRecycledSessionKeepsItsOutcome(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, rec := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, MaxCheckoutsPerWorker: 1, MeterProvider: mp})

	s := checkout(t, p)
	runRepr(t, s, "1 + 1")
	s.Close() // clean: ok

	s = checkout(t, p)
	if err := syscall.Kill(s.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), "1 + 1"); err == nil {
		t.Fatal("Run on a killed worker succeeded")
	}
	s.Close() // crashed: error

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	funcs := session.NewRegistry().MustRegister("stop", func() int {
		cancel()
		return 1
	})
	s = checkout(t, p)
	if _, err := s.Run(ctx, "stop()", session.WithFunctions(funcs)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run whose context ended: %v, want context.Canceled", err)
	}
	if err := s.Reusable(); !errors.Is(err, session.ErrInterrupted) {
		t.Fatalf("Reusable: %v, want session.ErrInterrupted", err)
	}
	s.Close() // interrupted: abandoned

	got := sessionOutcomes(t, reader)
	if got[sessionOutcomeOK] != 1 || got[sessionOutcomeError] != 1 || got[sessionOutcomeAbandoned] != 1 {
		t.Errorf("session outcomes %v, want one each of ok, error and abandoned", got)
	}
	if n := rec.countNow(EventCrash, ReasonVanished); n != 1 {
		t.Errorf("%d vanished crashes, want 1", n)
	}
}

// A session closed while the pool closes gracefully (its worker is then
// stopped, not given back) keeps its own outcome too: ok when it ended
// clean, as a remote session closed then is. Before, it was recorded as
// an error, so every graceful Close (a deploy) showed its clean sessions
// as errors in monty.pool.session.duration.
func TestSessionClosedDuringPoolCloseKeepsItsOutcome(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, rec := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2, MeterProvider: mp})
	clean, dirty := checkout(t, p), checkout(t, p)
	runRepr(t, clean, "1 + 1")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	funcs := session.NewRegistry().MustRegister("stop", func() int {
		cancel()
		return 1
	})
	if _, err := dirty.Run(ctx, "stop()", session.WithFunctions(funcs)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run whose context ended: %v, want context.Canceled", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close(context.Background()) }()
	for !p.closing.Load() { // barrier: Close has begun
		runtime.Gosched()
	}
	clean.Close()
	dirty.Close()
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	got := sessionOutcomes(t, reader)
	if got[sessionOutcomeOK] != 1 || got[sessionOutcomeAbandoned] != 1 || got[sessionOutcomeError] != 0 {
		t.Errorf("session outcomes %v, want one ok and one abandoned", got)
	}
	if n := rec.countNow(EventDestroy, DestroyClosing); n != 2 {
		t.Errorf("%d workers destroyed closing, want 2", n)
	}
}
