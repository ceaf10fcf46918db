package satdur

import (
	"math"
	"testing"
	"time"
)

func TestAdd(t *testing.T) {
	for _, c := range []struct{ a, b, want time.Duration }{
		{0, 0, 0},
		{time.Second, time.Millisecond, time.Second + time.Millisecond},
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MaxInt64 - 1, 1, math.MaxInt64},
		{1, math.MaxInt64, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64},
	} {
		if got := Add(c.a, c.b); got != c.want {
			t.Errorf("Add(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestMicros(t *testing.T) {
	const edge = math.MaxInt64 / 1000
	for _, c := range []struct {
		us   uint64
		want time.Duration
	}{
		{0, 0},
		{1, time.Microsecond},
		{1_500_000, 1500 * time.Millisecond},
		{edge, time.Duration(edge) * time.Microsecond},
		{edge + 1, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64},
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := Micros(c.us); got != c.want {
			t.Errorf("Micros(%d) = %d, want %d", c.us, got, c.want)
		}
	}
}

func TestMicrosOpt(t *testing.T) {
	if d, ok := MicrosOpt(nil); d != 0 || ok {
		t.Errorf("MicrosOpt(nil) = %v, %v, want 0, false", d, ok)
	}
	us := uint64(math.MaxUint64)
	if d, ok := MicrosOpt(&us); d != math.MaxInt64 || !ok {
		t.Errorf("MicrosOpt(max) = %v, %v, want max, true", d, ok)
	}
	us = 0
	if d, ok := MicrosOpt(&us); d != 0 || !ok {
		t.Errorf("MicrosOpt(0) = %v, %v, want 0, true", d, ok)
	}
}
