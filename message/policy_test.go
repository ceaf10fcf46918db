package message

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/gomonty/monty/value"
)

func TestPolicyValidate(t *testing.T) {
	good := []*OsPolicy{
		nil,
		{},
		{Clock: ClockFixed, Fixed: FixedDateTime{UnixSeconds: -5, Microsecond: 999999}},
		{TimeZone: &SandboxTimeZone{Kind: ZoneFixed, Fixed: value.TimeZone{Offset: -86399}}},
		{Random: RandomSeeded, Seed: RandomSeed{Kind: SeedFloat, Float: -1.5}},
		{Sleep: &SleepMode{Kind: SleepZero}, ProcessTime: ProcessTimeElapsed},
	}
	for i, p := range good {
		if err := p.Validate(); err != nil {
			t.Errorf("good %d: %v", i, err)
		}
	}
	bad := []*OsPolicy{
		{Clock: ClockFixed, Fixed: FixedDateTime{Microsecond: 1000000}},
		{Clock: 4},
		{TimeZone: &SandboxTimeZone{Kind: ZoneFixed, Fixed: value.TimeZone{Offset: 86400}}},
		{TimeZone: &SandboxTimeZone{Kind: 9}},
		{Sleep: &SleepMode{Kind: 4}},
		{Random: RandomSeeded, Seed: RandomSeed{Kind: SeedFloat, Float: math.NaN()}},
		{Random: RandomSeeded, Seed: RandomSeed{Kind: SeedFloat, Float: math.Inf(-1)}},
		{Random: RandomSeeded, Seed: RandomSeed{Kind: 5}},
		{Random: 4},
		{ProcessTime: 3},
	}
	for i, p := range bad {
		if err := p.Validate(); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("bad %d: err = %v", i, err)
		}
	}
}

func TestSleepSeconds(t *testing.T) {
	for _, s := range []float64{0, math.Copysign(0, -1), 1e-9, 0.25, 9223372036} {
		if err := CheckSleepSeconds("Sleep.seconds", s); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
	for _, s := range []float64{-1e-9, math.NaN(), math.Inf(1), 9223372037} {
		var ie *value.InvalidError
		if err := CheckSleepSeconds("Sleep.seconds", s); !errors.As(err, &ie) {
			t.Errorf("%v: err = %v", s, err)
		}
	}
	if d := SleepDuration(0.25); d != 250*time.Millisecond {
		t.Fatal(d)
	}
	if d := SleepDuration(math.NaN()); d != 0 {
		t.Fatal(d)
	}
}

func TestLimitDurations(t *testing.T) {
	var l *ResourceLimits
	if _, ok := l.MaxFeedDuration(); ok {
		t.Fatal("nil limits have a feed limit")
	}
	l = &ResourceLimits{MaxFeedDurationMicros: value.Ptr[uint64](1500), MaxTurnDurationMicros: value.Ptr[uint64](math.MaxUint64),
		MaxTotalSleepMicros: value.Ptr[uint64](0)}
	if d, ok := l.MaxFeedDuration(); !ok || d != 1500*time.Microsecond {
		t.Fatal(d, ok)
	}
	if d, ok := l.MaxTurnDuration(); !ok || d != time.Duration(math.MaxInt64) {
		t.Fatal(d, ok)
	}
	if d, ok := l.MaxTotalSleep(); !ok || d != 0 {
		t.Fatal(d, ok)
	}
	if _, ok := l.MaxDuration(); ok {
		t.Fatal("no session limit was set")
	}
	if p := PositionOrZero(nil); p != (SourceRange{}) {
		t.Fatal(p)
	}
	for op := OpTime; op <= OpAsyncSystemSleep; op++ {
		if op.String() == "unknown_os_call" {
			t.Fatalf("op %d has no name", op)
		}
	}
	if !OpAsyncSystemSleep.IsSystemSleep() || OpSleep.IsSystemSleep() || !OpSleep.IsSleep() || OpTime.IsSleep() {
		t.Fatal("sleep classification")
	}
}
