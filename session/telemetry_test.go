//go:build unix

package session

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/gomonty/monty/internal/telemetrytest"
)

type telemetryRig struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetryRig(t testing.TB) *telemetryRig {
	r := &telemetryRig{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		r.tp.Shutdown(context.Background())
		r.mp.Shutdown(context.Background())
	})
	return r
}

func (r *telemetryRig) metrics(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	return telemetrytest.Collect(t, r.reader)
}

func TestTelemetrySpanTreeOfARunWithAHostCall(t *testing.T) {
	rig := newTelemetryRig(t)
	ctx, parent := rig.tp.Tracer("test").Start(context.Background(), "request")
	requireWorker(t)
	s, err := Start(ctx, Launch{}, Config{Logger: quietLogger, TracerProvider: rig.tp, MeterProvider: rig.mp})
	if err != nil {
		t.Fatal(err)
	}
	funcs := NewRegistry().MustRegister("secret_lookup", func(k string) (string, error) {
		// The host function runs inside the host span: the traceparent
		// the next turn carries is the run span's, not this one's.
		return strings.ToUpper(k), nil
	})
	res, err := s.Run(ctx, "print('hi')\nsecret_lookup('password123')", WithFunctions(funcs))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Value.Repr(); got != "'PASSWORD123'" {
		t.Fatalf("result %s", got)
	}
	s.Close()
	parent.End()

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range rig.spans.Ended() {
		byName[sp.Name()] = append(byName[sp.Name()], sp)
	}
	if len(byName[SpanRun]) != 1 || len(byName[SpanHost]) != 1 {
		t.Fatalf("spans: %d run, %d host; want 1 each", len(byName[SpanRun]), len(byName[SpanHost]))
	}
	run, host := byName[SpanRun][0], byName[SpanHost][0]
	// Negotiation may have opened (and failed) a session on a refused
	// version first: that attempt has its own, failed, session span.
	var sess sdktrace.ReadOnlySpan
	for _, sp := range byName[SpanSession] {
		if sp.Status().Code == codes.Error {
			continue
		}
		if sess != nil {
			t.Fatal("two successful session spans")
		}
		sess = sp
	}
	if sess == nil {
		t.Fatal("no successful session span")
	}
	if sess.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("session span's parent is %v, want the caller's span", sess.Parent().SpanID())
	}
	if run.Parent().SpanID() != sess.SpanContext().SpanID() {
		t.Errorf("run span is not a child of the session span")
	}
	if host.Parent().SpanID() != run.SpanContext().SpanID() {
		t.Errorf("host span is not a child of the run span")
	}
	if !host.StartTime().After(run.StartTime()) || host.EndTime().After(run.EndTime()) {
		t.Errorf("host span [%v, %v] not inside run span [%v, %v]", host.StartTime(), host.EndTime(), run.StartTime(), run.EndTime())
	}
	if run.EndTime().After(sess.EndTime()) {
		t.Errorf("run span ends after the session span")
	}
	attrs := func(sp sdktrace.ReadOnlySpan) map[attribute.Key]string {
		m := map[attribute.Key]string{}
		for _, kv := range sp.Attributes() {
			m[kv.Key] = kv.Value.String()
		}
		return m
	}
	if a := attrs(host); a[AttrHostKind] != "function_call" {
		t.Errorf("host span attributes %v", a)
	}
	if a := attrs(run); a[AttrOutcome] != "ok" || a["monty.suspensions"] != "1" {
		t.Errorf("run span attributes %v", a)
	}
	// No opt-in: nothing from the code, the call or the result anywhere.
	for _, sp := range rig.spans.Ended() {
		for _, kv := range sp.Attributes() {
			switch kv.Key {
			case AttrCode, AttrFunction, AttrArguments, AttrResult, AttrPrint:
				t.Errorf("span %s carries %s without the opt-in", sp.Name(), kv.Key)
			}
			if v := kv.Value.String(); strings.Contains(v, "secret") || strings.Contains(v, "password") || strings.Contains(v, "PASSWORD") {
				t.Errorf("span %s attribute %s=%q leaks content", sp.Name(), kv.Key, v)
			}
		}
		if len(sp.Events()) > 0 {
			t.Errorf("span %s has events %v without the opt-in", sp.Name(), sp.Events())
		}
	}

	m := rig.metrics(t)
	for _, name := range []string{MetricRunDuration, MetricRunExecutionTime, MetricRunSuspensions, MetricTurnDuration, MetricExtCallDuration, MetricWireFrameBytes} {
		if telemetrytest.HistCount(m[name]) == 0 {
			t.Errorf("%s: nothing recorded", name)
		}
	}
	if telemetrytest.HistCount(m[MetricExtCallDuration], AttrHostKind.String("function_call")) != 1 {
		t.Errorf("%s: want one function_call recording", MetricExtCallDuration)
	}
	if telemetrytest.HistCount(m[MetricWireFrameBytes], AttrDirection.String("sent")) == 0 || telemetrytest.HistCount(m[MetricWireFrameBytes], AttrDirection.String("received")) == 0 {
		t.Errorf("%s: want both directions", MetricWireFrameBytes)
	}
	sum, ok := m[MetricPrintBytes].Data.(metricdata.Sum[int64])
	if !ok || len(sum.DataPoints) != 1 || sum.DataPoints[0].Value != int64(len("hi\n")) {
		t.Errorf("%s: %+v, want %d bytes", MetricPrintBytes, m[MetricPrintBytes].Data, len("hi\n"))
	}
}

func TestTelemetryContentOnlyWithOptIn(t *testing.T) {
	rig := newTelemetryRig(t)
	s := realSession(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp, TelemetryContent: true})
	funcs := NewRegistry().MustRegister("secret_lookup", func(k string) (string, error) { return k + "!", nil })
	run(t, s, "print('hi')\nsecret_lookup('password123')", WithFunctions(funcs))
	s.Close()
	var runSpan, hostSpan sdktrace.ReadOnlySpan
	for _, sp := range rig.spans.Ended() {
		switch sp.Name() {
		case SpanRun:
			runSpan = sp
		case SpanHost:
			hostSpan = sp
		}
	}
	if runSpan == nil || hostSpan == nil {
		t.Fatal("missing run or host span")
	}
	get := func(sp sdktrace.ReadOnlySpan, k attribute.Key) string {
		for _, kv := range sp.Attributes() {
			if kv.Key == k {
				return kv.Value.String()
			}
		}
		return ""
	}
	if got := get(runSpan, AttrCode); !strings.Contains(got, "secret_lookup('password123')") {
		t.Errorf("code attribute %q", got)
	}
	if got := get(runSpan, AttrResult); got != "'password123!'" {
		t.Errorf("result attribute %q", got)
	}
	if got := get(hostSpan, AttrFunction); got != "secret_lookup" {
		t.Errorf("function attribute %q", got)
	}
	if got := get(hostSpan, AttrArguments); got != "('password123')" {
		t.Errorf("arguments attribute %q", got)
	}
	if ev := runSpan.Events(); len(ev) != 1 || ev[0].Name != "print" {
		t.Errorf("print events %v", ev)
	}
}

func TestTelemetryTraceParentIsTheCurrentSpan(t *testing.T) {
	rig := newTelemetryRig(t)
	s := realSession(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp})
	var sent []trace.SpanContext
	funcs := NewRegistry().MustRegister("f", func() (int, error) {
		sent = append(sent, s.currentSpanContext(context.Background()))
		return 1, nil
	})
	run(t, s, "f()", WithFunctions(funcs))
	idle := s.currentSpanContext(context.Background())
	s.Close()
	var runID, sessID trace.SpanID
	for _, sp := range rig.spans.Ended() {
		switch sp.Name() {
		case SpanRun:
			runID = sp.SpanContext().SpanID()
		case SpanSession:
			sessID = sp.SpanContext().SpanID()
		}
	}
	if len(sent) != 1 || sent[0].SpanID() != runID {
		t.Errorf("during the run the worker is sent %v, want the run span %v", sent, runID)
	}
	if idle.SpanID() != sessID {
		t.Errorf("between runs the worker is sent %v, want the session span %v", idle.SpanID(), sessID)
	}
}

// With no provider configured (the global no-op ones), a turn allocates
// nothing for telemetry: the run's allocations equal those of a session
// whose telemetry is disabled outright.
func TestTelemetryOffAllocatesNothingPerTurn(t *testing.T) {
	s := realSession(t, Config{})
	if s.tel.tracer != nil {
		t.Fatal("a no-op provider gave a recording session span")
	}
	ctx := context.Background()
	feed := func() {
		if _, err := s.Feed(ctx, "1"); err != nil {
			t.Fatal(err)
		}
	}
	feed()
	with := testing.AllocsPerRun(50, feed)
	s.tel.in = nil // telemetry disabled: exchange goes straight to roundTrip
	without := testing.AllocsPerRun(50, feed)
	if with > without {
		t.Errorf("a feed allocates %.1f times with no-op telemetry, %.1f without", with, without)
	}
}

// monty.snapshot.bytes records the size of every dump handed out and of
// every dump loaded, each under its own operation.
func TestTelemetrySnapshotBytes(t *testing.T) {
	rig := newTelemetryRig(t)
	cfg := Config{TracerProvider: rig.tp, MeterProvider: rig.mp}
	src := realSession(t, cfg)
	run(t, src, "x = 'abc' * 100")
	state, err := src.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dst := realSession(t, cfg)
	if _, err := dst.Load(context.Background(), state); err != nil {
		t.Fatal(err)
	}
	if r := run(t, dst, "len(x)"); r.Repr() != "300" {
		t.Fatalf("restored len(x) = %s", r.Repr())
	}
	h, ok := rig.metrics(t)[MetricSnapshotBytes].Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s not recorded", MetricSnapshotBytes)
	}
	got := map[string][2]float64{} // op → count, sum
	for _, dp := range h.DataPoints {
		op, _ := dp.Attributes.Value(AttrSnapshotOp)
		got[op.AsString()] = [2]float64{float64(dp.Count), dp.Sum}
	}
	n := float64(len(state))
	if len(got) != 2 || got["dump"] != [2]float64{1, n} || got["load"] != [2]float64{1, n} {
		t.Fatalf("%s: %v, want one dump and one load of %d bytes", MetricSnapshotBytes, got, len(state))
	}
}

// kindSampler samples everything and records the host kind each host span
// carried when it was sampled.
type kindSampler struct {
	mu    sync.Mutex
	kinds []string
}

func (k *kindSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	if p.Name == SpanHost {
		kind := "<none>"
		for _, a := range p.Attributes {
			if a.Key == AttrHostKind {
				kind = a.Value.AsString()
			}
		}
		k.mu.Lock()
		k.kinds = append(k.kinds, kind)
		k.mu.Unlock()
	}
	return sdktrace.SamplingResult{Decision: sdktrace.RecordAndSample}
}

func (k *kindSampler) Description() string { return "kindSampler" }

// A sampler that decides by attributes sees a host span's kind.
func TestTelemetryHostKindVisibleToSampler(t *testing.T) {
	requireWorker(t)
	ks := &kindSampler{}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(ks), sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	s, err := Start(context.Background(), Launch{}, Config{Logger: quietLogger, TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	funcs := NewRegistry().MustRegister("f", func(x int) int { return x + 1 })
	if res, err := s.Run(context.Background(), "f(1)", WithFunctions(funcs)); err != nil || res.Value.Repr() != "2" {
		t.Fatalf("run: %v %v", res, err)
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if len(ks.kinds) != 1 || ks.kinds[0] != "function_call" {
		t.Fatalf("host kinds seen by the sampler: %v", ks.kinds)
	}
}
