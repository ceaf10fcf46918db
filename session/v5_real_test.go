//go:build unix

package session

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// These tests run against a worker that serves protocol 5: scripts/
// relay-suites.sh runs this package with `montygo subprocess --protocol 5`
// (the child side serving 5 over the released worker) as the worker, with
// MONTY_REQUIRE_PROTOCOL=5 so that a session that did not negotiate 5
// fails them. Against the released worker alone (protocol 2) they skip.

// realSession5 starts a real session and requires protocol 5.
func realSession5(t *testing.T, cfg Config) *Session {
	t.Helper()
	s := realSession(t, cfg)
	if v := s.Version(); v < 5 {
		if os.Getenv("MONTY_REQUIRE_PROTOCOL") == "5" {
			t.Fatalf("negotiated protocol %d, want 5", v)
		}
		t.Skipf("the worker speaks protocol %d; scripts/relay-suites.sh runs these at 5", v)
	}
	return s
}

// A feed past max_feed_duration ends with the worker's TimeoutError naming
// the feed limit; the stamps carry the feed clock and echo the limits; the
// session is Reset and goes on.
func TestRealV5FeedLimit(t *testing.T) {
	s := realSession5(t, Config{Limits: Limits{MaxFeedDuration: 300 * time.Millisecond, MaxTotalSleep: 150 * time.Millisecond}})
	if got := run(t, s, "sum(range(10))").Repr(); got != "45" {
		t.Fatal(got)
	}
	st := s.Stamps()
	if st.MaxFeedDuration != 300*time.Millisecond || st.MaxTotalSleep != 150*time.Millisecond || st.MaxTurnDuration != 0 || st.HasMaxDuration {
		t.Fatalf("echoed limits %+v", st)
	}
	_, err := s.Run(context.Background(), "while True:\n    pass")
	pe := pyErr(t, err, "TimeoutError")
	if msg := pe.Exception.Msg(); !strings.HasPrefix(msg, "feed time limit exceeded: ") || !strings.HasSuffix(msg, " > 300ms") {
		t.Fatalf("got %q", msg)
	}
	if fe := s.Stamps().FeedExecution; fe < 300*time.Millisecond {
		t.Fatalf("feed clock %v after the trip", fe)
	}
	if err := s.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := run(t, s, "40 + 2").Repr(); got != "42" {
		t.Fatal(got)
	}
}

// max_turn_duration restarts at each resume and does not count the host's
// time: a feed whose host calls take longer than the turn limit completes,
// and a turn past the limit ends with the TimeoutError naming the turn.
func TestRealV5TurnLimit(t *testing.T) {
	s := realSession5(t, Config{Limits: Limits{MaxTurnDuration: time.Second}})
	reg := NewRegistry().MustRegister("wait", func() int { time.Sleep(400 * time.Millisecond); return 1 })
	if got := run(t, s, "sum(wait() for _ in range(3))", WithFunctions(reg)).Repr(); got != "3" {
		t.Fatal(got)
	}
	_, err := s.Run(context.Background(), "wait()\nwhile True:\n    pass", WithFunctions(reg))
	pe := pyErr(t, err, "TimeoutError")
	if msg := pe.Exception.Msg(); !strings.HasPrefix(msg, "turn time limit exceeded: ") || !strings.HasSuffix(msg, " > 1s") {
		t.Fatalf("got %q", msg)
	}
}

// The sleep budget is echoed; a sandbox that can sleep (a 1.x worker) is
// refused the sleep past it with upstream's exact text, and the released
// worker behind the relay has no time module at all.
func TestRealV5SleepBudget(t *testing.T) {
	s := realSession5(t, Config{Limits: Limits{MaxTotalSleep: 150 * time.Millisecond}})
	_, err := s.Run(context.Background(), "import time\ntime.sleep(0.1)\ntime.sleep(0.525)")
	var pe *PythonError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v", err)
	}
	switch {
	case pe.Type() == "ModuleNotFoundError":
		if s.Stamps().TotalSleep != 0 {
			t.Fatalf("charged %v with no sleep", s.Stamps().TotalSleep)
		}
	case pe.Type() != "TimeoutError" || pe.Exception.Msg() != "sleep limit exceeded: 625ms > 150ms" || s.Stamps().TotalSleep != 100*time.Millisecond:
		t.Fatalf("got %v, charged %v", err, s.Stamps().TotalSleep)
	}
	if s.Stamps().MaxTotalSleep != 150*time.Millisecond {
		t.Fatalf("echoed sleep limit %v", s.Stamps().MaxTotalSleep)
	}
}

// A fixed-clock policy in a fixed zone answers datetime.now() with the
// fixed instant; a seeded random source draws the same in two sessions
// where the sandbox has a random module (the released worker has none);
// a policy that fails validation is refused on Configure.
func TestRealV5PolicyFixedClockAndSeed(t *testing.T) {
	name := "XST"
	p := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000, Microsecond: 5},
		TimeZone: &message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: 3600, Name: &name}},
		Random:   message.RandomSeeded, Seed: message.RandomSeed{Kind: message.SeedInt, Int: []byte{42}}}
	draw := func() (string, bool) {
		s := realSession5(t, Config{OsPolicy: p})
		if got := run(t, s, "import datetime\nd = datetime.datetime.now()\n(d.year, d.month, d.day, d.hour, d.minute, d.microsecond)").Repr(); got != "(2023, 11, 14, 23, 13, 5)" {
			t.Fatalf("fixed clock at +01:00: %s", got)
		}
		r, err := s.Run(context.Background(), "import random\nrandom.random()")
		var pe *PythonError
		if errors.As(err, &pe) && pe.Type() == "ModuleNotFoundError" {
			return "", false
		}
		if err != nil {
			t.Fatal(err)
		}
		return r.Repr(), true
	}
	a, ok := draw()
	if b, _ := draw(); ok && a != b {
		t.Fatalf("seeded draws differ: %s and %s", a, b)
	}
	bad := *p
	bad.Seed = message.RandomSeed{Kind: message.SeedFloat, Float: math.NaN()}
	_, err := Start(context.Background(), realLaunch, Config{OsPolicy: &bad, Logger: quietLogger})
	if !errors.Is(err, message.ErrInvalidPolicy) {
		t.Fatalf("a NaN seed: %v, want an error matching message.ErrInvalidPolicy", err)
	}
}

// Host functions and OS handlers see the suspension's source position: the
// released worker behind the relay sends none (the empty range at 0); a
// 1.x worker's range covers the call in <python-input-N>.
func TestRealV5Positions(t *testing.T) {
	s := realSession5(t, Config{OsPolicy: &message.OsPolicy{Clock: message.ClockCallHost}})
	code := "x = 1\ny = f(x)\nimport datetime\nd = datetime.date.today()"
	var got []message.SourceRange
	reg := NewRegistry().MustRegister("f", func(ctx context.Context, c *Call) (any, error) {
		got = append(got, c.Position)
		return 2, nil
	})
	os := OSFunc(func(ctx context.Context, c *message.OsCall) (*message.ResumeCall, error) {
		got = append(got, message.PositionOrZero(c.Position))
		return nil, ErrNotHandled
	})
	_, err := s.Run(context.Background(), code, WithFunctions(reg), WithOS(os))
	if err == nil {
		t.Fatal("date.today() not handled must raise")
	}
	if len(got) != 2 {
		t.Fatalf("positions %+v", got)
	}
	for i, p := range got {
		if p == (message.SourceRange{}) {
			continue
		}
		if !strings.HasPrefix(p.Filename, "<python-input-") || p.End <= p.Start || int(p.End) > len(code) ||
			!strings.Contains(code[p.Start:p.End], []string{"f(x)", "today()"}[i]) {
			t.Fatalf("position %d %+v", i, p)
		}
	}
}

// A dump taken at 5 carries the feed limit and the policy: loaded into a
// session configured with neither, the dump's limit is echoed and enforced
// and its clock answers.
func TestRealV5DumpCarriesLimitsAndPolicy(t *testing.T) {
	p := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000}}
	s := realSession5(t, Config{Limits: Limits{MaxFeedDuration: 300 * time.Millisecond}, OsPolicy: p})
	run(t, s, "x = 41")
	dump, err := s.Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s2 := realSession5(t, Config{})
	if _, err := s2.Load(context.Background(), dump); err != nil {
		t.Fatal(err)
	}
	if got := s2.Stamps().MaxFeedDuration; got != 300*time.Millisecond {
		t.Fatalf("echoed feed limit after Load: %v", got)
	}
	if got := run(t, s2, "import datetime\n(x + 1, datetime.datetime.now().year)").Repr(); got != "(42, 2023)" {
		t.Fatal(got)
	}
	_, err = s2.Run(context.Background(), "while True:\n    pass")
	if pe := pyErr(t, err, "TimeoutError"); !strings.HasSuffix(pe.Exception.Msg(), " > 300ms") {
		t.Fatalf("got %v", err)
	}
}
