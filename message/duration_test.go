package message

import (
	"testing"
	"time"
)

func TestRustDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ns"},
		{-time.Second, "0ns"},
		{999, "999ns"},
		{1500, "1.5µs"},
		{625 * time.Millisecond, "625ms"},
		{150 * time.Millisecond, "150ms"},
		{200116418, "200.116418ms"},
		{time.Second + 500*time.Millisecond, "1.5s"},
		{10 * time.Second, "10s"},
		{time.Second + 1, "1.000000001s"},
	} {
		if got := RustDuration(c.d); got != c.want {
			t.Errorf("RustDuration(%d) = %q, want %q", c.d, got, c.want)
		}
	}
}
