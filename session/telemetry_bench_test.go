package session

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
					tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}))
					if mode == "sdk-sync" {
						tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(discardSpans{}))
					}
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
