//go:build unix

package pool

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Every metric name upstream's parent records is recorded by pool
// sessions, through the pool's providers, and a checkout's session span
// is its run's parent. (monty.pool.session.resumed needs a drained remote
// endpoint: TestRemoteResumeMetrics.)
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
	if _, err := s.Dump(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close() // back to the pool: outcome ok
	s, err = p.Checkout(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Destroy() // a terminated worker, reason destroyed; outcome error

	got := telemetrytest.Collect(t, reader)
	for _, name := range []string{
		MetricWorkersLive, MetricWorkersIdle, MetricWorkersBusy, MetricWorkersSuspended, MetricCheckoutWait,
		MetricWorkerTerminated, MetricSessionDuration, session.MetricSnapshotBytes,
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

// gaugeValue is the last value of an int64 gauge (-1 when absent).
func gaugeValue(m metricdata.Metrics) int64 {
	g, ok := m.Data.(metricdata.Gauge[int64])
	if !ok || len(g.DataPoints) == 0 {
		return -1
	}
	return g.DataPoints[0].Value
}

// Every checkout outcome upstream names is recorded, each when it
// happens: idle (a warm worker), spawned (a worker started while the
// checkout waited), waited (a worker another session gave back),
// exhausted (the wait gave up) and error (a closed pool).
func TestTelemetryCheckoutOutcomes(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, err := New(context.Background(), Config{MinWorkers: 1, MaxWorkers: 2, MeterProvider: mp, Logger: quiet,
		Worker: worker.Config{Binary: testenv.Worker(t)}})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed { // a failure with sessions out: Close's deadline destroys them
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			p.Close(ctx)
		}
	}()
	outcome := func(o string) uint64 {
		return telemetrytest.HistCount(telemetrytest.Collect(t, reader)[MetricCheckoutWait], AttrCheckoutOutcome.String(o), AttrEndpoint.String(LocalEndpoint))
	}
	eventually(t, p, 10*time.Second, "at strength", atStrength(1))
	s1 := checkout(t, p)
	if n := outcome("idle"); n != 1 {
		t.Fatalf("idle checkouts %d, want 1", n)
	}
	s2 := checkout(t, p) // no idle worker: one is started for it
	if n := outcome("spawned"); n != 1 {
		t.Fatalf("spawned checkouts %d, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = p.Checkout(ctx, session.Config{})
	cancel()
	var ee *ExhaustedError
	if !errors.As(err, &ee) {
		t.Fatalf("third checkout: %v", err)
	}
	if n := outcome("exhausted"); n != 1 {
		t.Fatalf("exhausted checkouts %d, want 1", n)
	}
	got := make(chan *Session, 1)
	go func() {
		s, err := p.Checkout(context.Background(), session.Config{})
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	eventually(t, p, 10*time.Second, "a waiting checkout", func(st Stats) bool { return st.Waiting == 1 })
	s1.Close()
	s3 := <-got
	if s3 == nil {
		t.FailNow()
	}
	if n := outcome("waited"); n != 1 {
		t.Fatalf("waited checkouts %d, want 1", n)
	}
	s2.Close()
	s3.Close()
	closed = true
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Checkout(context.Background(), session.Config{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("checkout of a closed pool: %v", err)
	}
	if n := outcome("error"); n != 1 {
		t.Fatalf("failed checkouts %d, want 1", n)
	}
	for _, o := range []string{"idle", "spawned", "waited"} {
		if n := outcome(o); n != 1 {
			t.Errorf("%s checkouts %d at the end, want 1", o, n)
		}
	}
}

// monty.pool.workers.suspended counts the checked-out workers whose feed
// waits on the host, and nothing else.
func TestTelemetryWorkersSuspended(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	p, _ := newPool(t, Config{MinWorkers: 2, MaxWorkers: 2, MeterProvider: mp})
	eventually(t, p, 10*time.Second, "at strength", atStrength(2))
	suspended := func() int64 { return gaugeValue(telemetrytest.Collect(t, reader)[MetricWorkersSuspended]) }
	if n := suspended(); n != 0 {
		t.Fatalf("suspended before any checkout: %d", n)
	}
	ctx := context.Background()
	a, b := checkout(t, p), checkout(t, p)
	defer a.Close()
	defer b.Close()
	runRepr(t, b, "1 + 1")
	ev, err := a.Feed(ctx, "f(1)")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ev.Body.(*message.FunctionCall); !ok {
		t.Fatalf("feed: %T", ev.Body)
	}
	if n := suspended(); n != 1 {
		t.Fatalf("suspended with one feed waiting on the host: %d", n)
	}
	funcs := session.NewRegistry().MustRegister("f", func(x int) int { return x + 1 })
	if r, err := a.Continue(ctx, session.WithFunctions(funcs)); err != nil || r.Repr() != "2" {
		t.Fatalf("continue: %v %v", r, err)
	}
	if n := suspended(); n != 0 {
		t.Fatalf("suspended after the run completed: %d", n)
	}
}

// A pool given its own providers records nothing through the global ones:
// the handshake that starts each worker (Configure, Reset) records its
// metrics through the pool's MeterProvider, and no span.
//
// The global providers are first set to no-ops: OpenTelemetry hands the
// provider set first in the process to every instrument made through the
// default global before it (otel's delegation, once per process). An
// earlier test's pool without a MeterProvider of its own registered the
// worker gauges on that default (they live on, reading 0, after it
// closes); had gmp been the first set, those gauges would show up here,
// though this test's pool never touched the global. Run after such a test
// (go test -run 'Remote|Resume|Drain|Endpoint|Start'), this test failed
// on four zero gauges, and passed alone.
func TestTelemetryWorkerStartUsesThePoolsProviders(t *testing.T) {
	otel.SetTracerProvider(tracenoop.NewTracerProvider())
	otel.SetMeterProvider(metricnoop.NewMeterProvider())
	global := tracetest.NewSpanRecorder()
	gtp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(global))
	greader := sdkmetric.NewManualReader()
	gmp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(greader))
	otel.SetTracerProvider(gtp)
	otel.SetMeterProvider(gmp)
	defer func() {
		otel.SetTracerProvider(tracenoop.NewTracerProvider())
		otel.SetMeterProvider(metricnoop.NewMeterProvider())
		gtp.Shutdown(context.Background())
		gmp.Shutdown(context.Background())
	}()

	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider()
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	p, _ := newPool(t, Config{MinWorkers: 1, MaxWorkers: 1, TracerProvider: tp, MeterProvider: mp})
	s, err := p.Checkout(context.Background(), session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := len(global.Ended()) + len(global.Started()); n != 0 {
		for _, sp := range global.Started() {
			t.Logf("global span %s", sp.Name())
		}
		t.Errorf("%d spans through the global TracerProvider", n)
	}
	for name := range telemetrytest.Collect(t, greader) {
		t.Errorf("metric %s recorded through the global MeterProvider", name)
	}
}

// TestTerminationReasonsClosedSet: every reason a worker can leave the
// pool with (every Reason constant, a drained remote session's included,
// and the recycled and scale_down stops) takes its attribute set from the
// set precomputed at New: recording one allocates nothing. Before,
// ReasonDrained was missing from the list its comment called the closed
// set, so each drained termination built an attribute set afresh.
func TestTerminationReasonsClosedSet(t *testing.T) {
	p := &Pool{cfg: Config{MeterProvider: metricnoop.NewMeterProvider()}}
	tel := newTelemetry(p)
	defer tel.close(p)
	for _, r := range []Reason{
		ReasonAnnounced, ReasonVanished, ReasonMemory, ReasonTimeout, ReasonProtocol, ReasonCanceled, ReasonDrained,
		DestroyRequested, DestroyInterrupted, DestroySuspended, DestroyBusy, DestroyRefused, DestroyClosing,
		"recycled", "scale_down",
	} {
		if _, ok := tel.terminate[r]; !ok {
			t.Errorf("reason %q is not in the precomputed closed set", r)
		}
		if n := testing.AllocsPerRun(100, func() { tel.terminatedOpts(r) }); n != 0 {
			t.Errorf("reason %q: %v allocations per termination, want 0", r, n)
		}
	}
}
