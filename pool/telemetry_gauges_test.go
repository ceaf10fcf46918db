//go:build unix

package pool

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/gomonty/monty/internal/telemetrytest"
)

// gauges reads the worker gauges from reader: live, idle, busy and
// suspended, -1 for one not reported.
func gauges(t *testing.T, reader *sdkmetric.ManualReader) [4]int64 {
	t.Helper()
	m := telemetrytest.Collect(t, reader)
	return [4]int64{gaugeValue(m[MetricWorkersLive]), gaugeValue(m[MetricWorkersIdle]),
		gaugeValue(m[MetricWorkersBusy]), gaugeValue(m[MetricWorkersSuspended])}
}

// Once a pool is closed its worker gauges read 0: a collection after
// Close (a periodic reader's last export, at the MeterProvider's
// Shutdown) reports no workers. Before, Close unregistered the gauges,
// so they were no longer reported at all and the last value exported
// (workers alive) stood.
func TestTelemetryGaugesReadZeroAfterClose(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, _ := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2, MeterProvider: mp})
	eventually(t, p, 10*time.Second, "at strength", atStrength(2))
	s := checkout(t, p)
	if g := gauges(t, reader); g != [4]int64{2, 1, 1, 0} {
		t.Fatalf("gauges (live, idle, busy, suspended) %v with one checkout, want [2 1 1 0]", g)
	}
	s.Close()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := gauges(t, reader); g != [4]int64{} {
		t.Errorf("gauges (live, idle, busy, suspended) %v after Close, want all 0", g)
	}
}

// Two pools on one MeterProvider: the worker gauges are their sum (the
// gauges have no attribute telling pools apart), and a closed pool
// counts for nothing. Before, each pool observed the same gauges and
// the last one to do so won.
func TestTelemetryGaugesSumThePoolsOfAProvider(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	a, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, MeterProvider: mp})
	b, _ := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2, MeterProvider: mp})
	eventually(t, a, 10*time.Second, "at strength", atStrength(1))
	eventually(t, b, 10*time.Second, "at strength", atStrength(2))
	if g := gauges(t, reader); g != [4]int64{3, 3, 0, 0} {
		t.Fatalf("gauges (live, idle, busy, suspended) %v of two pools, want [3 3 0 0]", g)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := gauges(t, reader); g != [4]int64{1, 1, 0, 0} {
		t.Errorf("gauges (live, idle, busy, suspended) %v after one pool closed, want [1 1 0 0]", g)
	}
}

// The worker gauges of a MeterProvider outlive its pools (so that they
// read 0), but a process making a provider per pool keeps at most
// maxGaugeProviders of those whose pools are all closed.
func TestTelemetryGaugesForgetClosedProviders(t *testing.T) {
	for range 3 * maxGaugeProviders {
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		p, err := New(context.Background(), Config{NoLocal: true, Endpoints: []Endpoint{{URL: "ws://127.0.0.1:1/"}}, MeterProvider: mp, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		mp.Shutdown(context.Background())
	}
	gaugesMu.Lock()
	n := len(gaugesByProvider)
	gaugesMu.Unlock()
	if n > maxGaugeProviders {
		t.Errorf("%d providers' gauges kept, want at most %d", n, maxGaugeProviders)
	}
}
