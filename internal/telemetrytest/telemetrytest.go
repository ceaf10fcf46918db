// Package telemetrytest reads what an OpenTelemetry manual metric reader
// holds, for the telemetry tests of several packages.
package telemetrytest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Collect reads every metric r holds, by name; a failed read fails t.
func Collect(t testing.TB, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// HistCount is the number of recordings of a float64 histogram whose
// attributes include every kv (any attributes when kv is empty); 0 for
// another kind of metric.
func HistCount(m metricdata.Metrics, kv ...attribute.KeyValue) uint64 {
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		return 0
	}
	var n uint64
	for _, dp := range h.DataPoints {
		match := true
		for _, want := range kv {
			if got, ok := dp.Attributes.Value(want.Key); !ok || got != want.Value {
				match = false
			}
		}
		if match {
			n += dp.Count
		}
	}
	return n
}
