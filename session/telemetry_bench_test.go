//go:build unix

package session

import (
	"context"
	"io"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// discardSpans is a span exporter that drops everything: the SDK does all
// its work (sampling, recording, batching), only the export is free.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// discardMetrics is a metric exporter that drops everything.
type discardMetrics struct{}

func (discardMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (discardMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (discardMetrics) Export(context.Context, *metricdata.ResourceMetrics) error { return nil }
func (discardMetrics) ForceFlush(context.Context) error                          { return nil }
func (discardMetrics) Shutdown(context.Context) error                            { return nil }

// spanProcessor is a batch or a synchronous span processor over
// discardSpans. (sdktrace.WithBatcher starts the processor's goroutine
// when called, so only the one used may be built: the other would leak.)
func spanProcessor(batch bool) sdktrace.TracerProviderOption {
	if batch {
		return sdktrace.WithBatcher(discardSpans{})
	}
	return sdktrace.WithSyncer(discardSpans{})
}

// BenchmarkTelemetry: the same warm runs with instrumentation off (the
// global no-op providers) and on (the SDK, sampling everything, with a
// batch span processor and a periodic metric reader whose exporters
// discard). "feed" is `1 + 2`; "hostcall" is `f(1)`, one host round trip
// (a run span, a host span and every session metric per op).
func BenchmarkTelemetry(b *testing.B) {
	cases := []struct{ name, code string }{{"feed", "1 + 2"}, {"hostcall", "f(1)"}}
	reg := NewRegistry().MustRegister("f", func(i int) int { return i })
	for _, c := range cases {
		for _, mode := range []string{"off", "sdk", "sdk-sync", "metrics", "traces"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				cfg := Config{}
				if mode != "off" {
					proc := spanProcessor(mode != "sdk-sync")
					tp := sdktrace.NewTracerProvider(proc)
					mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
					defer tp.Shutdown(context.Background())
					defer mp.Shutdown(context.Background())
					switch mode {
					case "metrics":
						cfg.MeterProvider = mp
					case "traces":
						cfg.TracerProvider = tp
					default:
						cfg.TracerProvider, cfg.MeterProvider = tp, mp
					}
				}
				s := realSession(b, cfg)
				ctx := context.Background()
				opt := WithFunctions(reg)
				defer hostCPU(b)()
				for b.Loop() {
					if _, err := s.Run(ctx, c.code, opt); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSpanPipeRoundTrip is the SDK alone, without gomonty: one span
// around one 8-byte round trip through a pipe to a child process (cat),
// the shape of a warm feed's turn. "none" starts no span; "sync" and
// "batch" start and end one per round trip with a discarding exporter
// behind a synchronous or a batch span processor. It shows what the
// batch processor costs a process whose goroutine then blocks on a pipe:
// every ended span is a channel send that wakes the processor's
// goroutine.
func BenchmarkSpanPipeRoundTrip(b *testing.B) {
	for _, mode := range []string{"none", "sync", "batch"} {
		b.Run(mode, func(b *testing.B) {
			cmd := exec.Command("cat")
			in, err := cmd.StdinPipe()
			if err != nil {
				b.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				b.Skip("no cat:", err)
			}
			defer func() {
				in.Close()
				cmd.Wait()
			}()
			var tr trace.Tracer
			switch mode {
			case "sync", "batch":
				proc := spanProcessor(mode == "batch")
				tp := sdktrace.NewTracerProvider(proc)
				defer tp.Shutdown(context.Background())
				tr = tp.Tracer("bench")
			}
			msg, buf := []byte("12345678"), make([]byte, 8)
			ctx := context.Background()
			defer hostCPU(b)()
			for b.Loop() {
				var span trace.Span
				if tr != nil {
					_, span = tr.Start(ctx, "round trip")
				}
				if _, err := in.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(out, buf); err != nil {
					b.Fatal(err)
				}
				if span != nil {
					span.End()
				}
			}
		})
	}
}

// BenchmarkTelemetryPaired runs the same warm op on two sessions, one
// with telemetry off and one with the SDK on (sdk: batch span processor;
// sdk-sync: synchronous), alternating op by op (and which goes first), and
// times every op. On a machine whose load drifts from second to second,
// that pairs each instrumented op with an uninstrumented one run in the
// same instant. "traceparent" is no SDK at all, only a caller's span
// context (so every request carries a traceparent to the worker): the
// worker's share of the cost. It reports the median wall time of each (off-ns/op,
// on-ns/op) and their ratio (on/off, the target's measure), beside the
// ratio of the means.
func BenchmarkTelemetryPaired(b *testing.B) {
	cases := []struct{ name, code string }{{"feed", "1 + 2"}, {"hostcall", "f(1)"}}
	reg := NewRegistry().MustRegister("f", func(i int) int { return i })
	for _, c := range cases {
		for _, mode := range []string{"sdk", "sdk-sync", "metrics", "traces-sync", "traceparent"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				proc := spanProcessor(mode == "sdk")
				tp := sdktrace.NewTracerProvider(proc)
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
				defer tp.Shutdown(context.Background())
				defer mp.Shutdown(context.Background())
				off := realSession(b, Config{})
				onCfg, onCtx := Config{TracerProvider: tp, MeterProvider: mp}, context.Background()
				switch mode {
				case "metrics":
					onCfg.TracerProvider = nil
				case "traces-sync":
					onCfg.MeterProvider = nil
				case "traceparent":
					// No SDK: only the caller's span context, whose traceparent
					// every request then carries to the worker.
					onCfg = Config{}
					onCtx = trace.ContextWithSpanContext(onCtx, trace.NewSpanContext(trace.SpanContextConfig{
						TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6}, TraceFlags: trace.FlagsSampled}))
				}
				on := realSession(b, onCfg)
				opt := WithFunctions(reg)
				op := func(s *Session, into *[]time.Duration) {
					ctx := context.Background()
					if s == on {
						ctx = onCtx
					}
					t0 := time.Now()
					if _, err := s.Run(ctx, c.code, opt); err != nil {
						b.Fatal(err)
					}
					*into = append(*into, time.Since(t0))
				}
				alternate(b, off, on, op)
			})
		}
	}
}

// BenchmarkTelemetryPairedFloor is BenchmarkTelemetryPaired's sdk and
// sdk-sync pairs with gomonty's instrumentation taken out: both sessions
// run with telemetry off, and the "on" op makes, around and inside the
// same Run, the SDK calls the instrumented session makes (a run span
// started under a session span and ended with its two end attributes, a
// host span per host call, the same metric points on the same instruments
// with the same attribute sets), passing the run span in the context so
// that the worker is sent its traceparent as before. Its ratio is the
// SDK's own floor under the target's measure: what an instrumented op
// costs however little gomonty adds. "floor" has a batch span processor,
// "floor-sync" a synchronous one.
func BenchmarkTelemetryPairedFloor(b *testing.B) {
	cases := []struct{ name, code string }{{"feed", "1 + 2"}, {"hostcall", "f(1)"}}
	bg := context.Background()
	var (
		in     *instruments
		tr     trace.Tracer
		runCtx context.Context // the floor op's run span, while it runs
		t0     time.Time       // the floor op's turn start
		susp   int             // the floor op's host calls
	)
	reg := NewRegistry().MustRegister("f", func(i int) int {
		if runCtx == nil {
			return i // the off session's call
		}
		// The suspension's turn ends: its frame, its turn; the host span
		// opens.
		now := time.Now()
		in.frameBytes.Record(bg, 40, in.received...)
		in.turnDur.Record(bg, now.Sub(t0).Seconds(), in.none...)
		_, h := tr.Start(runCtx, SpanHost, hostStartOpts[hostFunction]...)
		h.End()
		in.extDur.Record(bg, time.Since(now).Seconds(), in.host[hostFunction]...)
		in.frameBytes.Record(bg, 30, in.sent...)
		susp++
		t0 = time.Now()
		return i
	})
	for _, c := range cases {
		for _, mode := range []string{"floor", "floor-sync"} {
			b.Run(c.name+"/"+mode, func(b *testing.B) {
				tp := sdktrace.NewTracerProvider(spanProcessor(mode == "floor"))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
				defer tp.Shutdown(bg)
				defer mp.Shutdown(bg)
				in, tr = instrumentsFor(mp), tp.Tracer(ScopeName)
				sessCtx, sess := tr.Start(bg, SpanSession, trace.WithSpanKind(trace.SpanKindClient))
				defer sess.End()
				off, on := realSession(b, Config{}), realSession(b, Config{})
				opt := WithFunctions(reg)
				var exec time.Duration // on's execution total
				op := func(s *Session, into *[]time.Duration) {
					start := time.Now()
					if s == off {
						if _, err := s.Run(bg, c.code, opt); err != nil {
							b.Fatal(err)
						}
						*into = append(*into, time.Since(start))
						return
					}
					ctx, run := tr.Start(sessCtx, SpanRun)
					runCtx, t0, susp = ctx, start, 0
					in.frameBytes.Record(bg, 30, in.sent...)
					r, err := s.Run(ctx, c.code, opt)
					if err != nil {
						b.Fatal(err)
					}
					end := time.Now()
					in.frameBytes.Record(bg, 40, in.received...)
					in.turnDur.Record(bg, end.Sub(t0).Seconds(), in.none...)
					in.runDur.Record(bg, end.Sub(start).Seconds(), in.none...)
					in.runExec.Record(bg, (r.TotalExecution - exec).Seconds(), in.none...)
					exec = r.TotalExecution
					in.runSusp.Record(bg, float64(susp), in.none...)
					run.SetAttributes(runEndAttrs[outcomeOK][susp]...)
					run.End()
					runCtx = nil
					*into = append(*into, time.Since(start))
				}
				alternate(b, off, on, op)
			})
		}
	}
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var t time.Duration
	for _, x := range d {
		t += x
	}
	return t / time.Duration(len(d))
}

// BenchmarkTelemetryRecords is the SDK's cost of what a warm feed records
// on its turn, with no worker, in a tight loop (warm caches): "metrics" is
// the six metric points (two frame sizes, turn, run, execution time,
// suspensions) through the session's own cached instruments and prebuilt
// attribute options; "span" the run span (started under a session span,
// given its two end attributes, ended) behind a synchronous processor
// with a discarding exporter; "both" the two. It is the SDK's floor per
// feed when nothing else competes for the caches, to set beside
// BenchmarkTelemetry (one session, the same warm feed over and over) and
// BenchmarkTelemetryPairedFloor (two sessions alternating).
func BenchmarkTelemetryRecords(b *testing.B) {
	bg := context.Background()
	for _, mode := range []string{"metrics", "span", "both"} {
		b.Run(mode, func(b *testing.B) {
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
			defer mp.Shutdown(bg)
			tp := sdktrace.NewTracerProvider(spanProcessor(false))
			defer tp.Shutdown(bg)
			in, tr := instrumentsFor(mp), tp.Tracer(ScopeName)
			sessCtx, sess := tr.Start(bg, SpanSession, trace.WithSpanKind(trace.SpanKindClient))
			defer sess.End()
			metrics, span := mode != "span", mode != "metrics"
			for b.Loop() {
				var run trace.Span
				if span {
					_, run = tr.Start(sessCtx, SpanRun)
				}
				if metrics {
					in.frameBytes.Record(bg, 40, in.sent...)
					in.frameBytes.Record(bg, 60, in.received...)
					in.turnDur.Record(bg, 0.00005, in.none...)
					in.runDur.Record(bg, 0.00005, in.none...)
					in.runExec.Record(bg, 0.00001, in.none...)
					in.runSusp.Record(bg, 0, in.none...)
				}
				if span {
					run.SetAttributes(runEndAttrs[outcomeOK][0]...)
					run.End()
				}
			}
		})
	}
}

// alternate times op on off and on in turns, alternating which goes
// first, and reports the median of each, their ratio and the ratio of the
// means.
func alternate(b *testing.B, off, on *Session, op func(s *Session, into *[]time.Duration)) {
	var offT, onT []time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			op(off, &offT)
			op(on, &onT)
		} else {
			op(on, &onT)
			op(off, &offT)
		}
		i++
	}
	mo, mn := median(offT), median(onT)
	b.ReportMetric(float64(mo.Nanoseconds()), "off-ns/op")
	b.ReportMetric(float64(mn.Nanoseconds()), "on-ns/op")
	b.ReportMetric(float64(mn)/float64(mo), "ratio")
	b.ReportMetric(float64(mean(onT))/float64(mean(offT)), "mean-ratio")
}
