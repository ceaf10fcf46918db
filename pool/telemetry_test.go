package pool

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gomonty/monty/session"
)

// Every metric name upstream's parent records is recorded by pool
// sessions, through the pool's providers, and a checkout's session span
// is its run's parent.
func TestTelemetryEveryMetricFromAPoolSession(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())

	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 2, TracerProvider: tp, MeterProvider: mp})
	ctx := context.Background()
	funcs := session.NewRegistry().MustRegister("double", func(x int) (int, error) { return 2 * x, nil })

	s, err := p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, "print('x')\ndouble(21)", session.WithFunctions(funcs))
	if err != nil {
		t.Fatal(err)
	}
	if res.Value.Repr() != "42" {
		t.Fatalf("result %s", res.Value.Repr())
	}
	s.Close() // back to the pool: outcome ok
	s, err = p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Destroy() // a terminated worker, reason destroyed; outcome error

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = m
		}
	}
	for _, name := range []string{
		MetricWorkersLive, MetricWorkersIdle, MetricWorkersBusy, MetricCheckoutWait,
		MetricWorkerTerminated, MetricSessionDuration,
		session.MetricRunDuration, session.MetricRunExecutionTime, session.MetricRunSuspensions,
		session.MetricTurnDuration, session.MetricExtCallDuration, session.MetricPrintBytes,
		session.MetricWireFrameBytes,
	} {
		m, ok := got[name]
		if !ok {
			t.Errorf("%s: not recorded", name)
			continue
		}
		if n := points(m); n == 0 {
			t.Errorf("%s: no data points", name)
		}
	}
	if !hasPoint(got[MetricWorkerTerminated], AttrReason.String(string(DestroyRequested))) {
		t.Errorf("%s: no point with reason %s", MetricWorkerTerminated, DestroyRequested)
	}
	for _, o := range []string{"ok", "error"} {
		if !hasPoint(got[MetricSessionDuration], AttrCheckoutOutcome.String(o)) {
			t.Errorf("%s: no point with outcome %s", MetricSessionDuration, o)
		}
	}
	if !hasPoint(got[MetricCheckoutWait], AttrCheckoutOutcome.String("idle")) {
		t.Errorf("%s: no idle checkout", MetricCheckoutWait)
	}

	var sess, run int
	ids := map[[8]byte]string{}
	for _, sp := range spans.Ended() {
		ids[sp.SpanContext().SpanID()] = sp.Name()
	}
	for _, sp := range spans.Ended() {
		switch sp.Name() {
		case session.SpanSession:
			sess++
		case session.SpanRun:
			run++
			if ids[sp.Parent().SpanID()] != session.SpanSession {
				t.Errorf("run span's parent is %q", ids[sp.Parent().SpanID()])
			}
		}
	}
	if sess != 2 || run != 1 {
		t.Errorf("%d session spans and %d run spans; want 2 and 1", sess, run)
	}
}

func points(m metricdata.Metrics) int {
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		return len(d.DataPoints)
	case metricdata.Sum[int64]:
		return len(d.DataPoints)
	case metricdata.Gauge[int64]:
		return len(d.DataPoints)
	}
	return 0
}

func hasPoint(m metricdata.Metrics, kv attribute.KeyValue) bool {
	has := func(s attribute.Set) bool {
		v, ok := s.Value(kv.Key)
		return ok && v == kv.Value
	}
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			if has(dp.Attributes) {
				return true
			}
		}
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			if has(dp.Attributes) {
				return true
			}
		}
	}
	return false
}
