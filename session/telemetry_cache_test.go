package session

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// The instruments cached per MeterProvider are bounded: a service that
// gives each of its pools (or tenants) a MeterProvider of its own, and
// shuts it down with them, must not keep every provider it ever had,
// with all its aggregated data, alive in gomonty's cache. Before, the
// cache grew by one provider per provider ever seen, forever.
func TestTelemetryInstrumentCacheIsBounded(t *testing.T) {
	t.Cleanup(func() { instrumentCache.Clear() })
	for range 10 * maxCachedProviders {
		mp := sdkmetric.NewMeterProvider()
		if a, b := instrumentsFor(mp), instrumentsFor(mp); a != b {
			t.Fatal("a provider's instruments are not cached")
		}
		mp.Shutdown(context.Background())
	}
	n := 0
	instrumentCache.Range(func(any, any) bool { n++; return true })
	if n > maxCachedProviders {
		t.Fatalf("%d providers cached, want at most %d", n, maxCachedProviders)
	}
}
