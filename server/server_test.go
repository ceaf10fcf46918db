package server

import (
	"math"
	"strings"
	"time"

	"github.com/gomonty/monty/value"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport/ws"
)

func TestSessionProtocols4And2(t *testing.T) {
	ts := startServer(t, nil)
	for _, v := range []uint32{4, 2} {
		c := dial(t, ts.URL, v, ws.DialOptions{})
		configure(t, c, v, nil)
		turn := do(t, c, &message.Feed{Code: "print('hi'); x = 40\nx + 2"})
		if got := describe(turn.Event); got != "42" || turn.Stdout != "hi\n" {
			t.Fatalf("v%d: %q stdout %q", v, got, turn.Stdout)
		}
		if got := repr(t, c, "x"); got != "40" {
			t.Fatalf("v%d: globals: %s", v, got)
		}
	}
}

func TestCeilingsClampClientLimits(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.MaxRecursionDepth = 40
		c.MaxDuration = 300 * time.Millisecond
		c.MaxMemory = 16 << 20
	})
	deep := "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nf(200)"
	for _, lim := range []*message.ResourceLimits{
		nil, // nothing asked: the ceilings
		{MaxRecursionDepth: value.Ptr[uint64](100000), MaxDurationMicros: value.Ptr[uint64](0), MaxMemoryBytes: value.Ptr[uint64](1 << 40)},
	} {
		c := dial(t, ts.URL, 4, ws.DialOptions{})
		configure(t, c, 4, lim)
		wantPrefix(t, repr(t, c, deep), "Error RecursionError")
		wantPrefix(t, repr(t, c, "b = 'a' * (64 * 1024 * 1024)"), "Error MemoryError")
		if got := repr(t, c, "1 + 1"); got != "2" {
			t.Fatalf("after the limits: %s", got)
		}
		// The duration budget is the session's: it runs out for good.
		wantPrefix(t, repr(t, c, "x = 0\nwhile True:\n    x += 1"), "Error TimeoutError")
	}
	// A client asking for less than the ceiling keeps its own limit.
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	configure(t, c, 4, &message.ResourceLimits{MaxRecursionDepth: value.Ptr[uint64](5)})
	wantPrefix(t, repr(t, c, "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nf(20)"), "Error RecursionError")
}

func TestClampLimits(t *testing.T) {
	cfg := Config{MaxDuration: 2 * time.Second, MaxMemory: 1000, MaxRecursionDepth: 50, MaxSuspensions: 20}
	p := value.Ptr[uint64]
	for _, c := range []struct {
		in         *message.ResourceLimits
		d, m, r, s uint64
		gcIv       *uint64
	}{
		{nil, 2e6, 1000, 50, 20, nil},
		{&message.ResourceLimits{}, 2e6, 1000, 50, 20, nil},
		{&message.ResourceLimits{MaxDurationMicros: p(0), MaxMemoryBytes: p(0), MaxRecursionDepth: p(0), MaxSuspensions: p(0)}, 2e6, 1000, 50, 0, nil},
		{&message.ResourceLimits{MaxDurationMicros: p(5e6), MaxMemoryBytes: p(5000), MaxRecursionDepth: p(500), MaxSuspensions: p(21)}, 2e6, 1000, 50, 20, nil},
		{&message.ResourceLimits{MaxDurationMicros: p(1), MaxMemoryBytes: p(10), MaxRecursionDepth: p(3), MaxSuspensions: p(7), GCInterval: p(9)}, 1, 10, 3, 7, p(9)},
	} {
		out := clampLimits(c.in, &cfg)
		if *out.MaxDurationMicros != c.d || *out.MaxMemoryBytes != c.m || *out.MaxRecursionDepth != c.r || *out.MaxSuspensions != c.s {
			t.Errorf("%+v: got %d %d %d %d", c.in, *out.MaxDurationMicros, *out.MaxMemoryBytes, *out.MaxRecursionDepth, *out.MaxSuspensions)
		}
		if (out.GCInterval == nil) != (c.gcIv == nil) || c.gcIv != nil && *out.GCInterval != *c.gcIv {
			t.Errorf("%+v: gc_interval changed", c.in)
		}
		if c.in != nil && c.in.MaxDurationMicros != nil && out.MaxDurationMicros == c.in.MaxDurationMicros {
			t.Errorf("the client's limits were modified in place")
		}
	}
}

// gc_interval is passed through rather than clamped because the other
// ceilings already bound what a client can do with it: collecting at every
// allocation spends the session's own duration budget (the worker still
// stops it at the ceiling), and never collecting leaves its cycles to the
// memory ceiling.
func TestGCIntervalIsBounded(t *testing.T) {
	ts := startServer(t, func(c *Config) { c.MaxDuration = time.Second; c.MaxMemory = 32 << 20 })
	loop := "big = [[i] for i in range(50000)]\nwhile True:\n    a = []\n    a.append(a)\n"
	for _, c := range []struct {
		gc   uint64
		want string
	}{
		{1, "Error TimeoutError"},
		{1 << 62, "Error MemoryError"},
	} {
		cl := dial(t, ts.URL, 4, ws.DialOptions{})
		configure(t, cl, 4, &message.ResourceLimits{GCInterval: value.Ptr(c.gc)})
		if got := repr(t, cl, loop); !strings.HasPrefix(got, c.want) {
			t.Errorf("gc_interval %d: %s, want %s", c.gc, got, c.want)
		}
	}
}

// A duration ceiling under a microsecond is still a ceiling: it must not
// become max_duration_micros 0, which the worker reads as "no limit".
func TestClampLimitsSubMicrosecondCeiling(t *testing.T) {
	for _, d := range []time.Duration{1, 999, 1500} {
		cfg := Config{MaxDuration: d, MaxMemory: 1000, MaxRecursionDepth: 50}
		for _, in := range []*message.ResourceLimits{nil, {MaxDurationMicros: value.Ptr[uint64](5e6)}} {
			if got := *clampLimits(in, &cfg).MaxDurationMicros; got == 0 || got > 2 {
				t.Errorf("ceiling %v, client %+v: max_duration_micros %d, want 1 or 2", d, in, got)
			}
		}
	}
}

// A Configure at a version the server does not speak (a client
// negotiating down from protocol 5 does this on its first session) is
// answered with the FatalError naming the supported range; it is not a
// worker failure (no worker was involved).
func TestVersionRefusalIsNotAWorkerFailure(t *testing.T) {
	ts := startServer(t, nil)
	c := dial(t, ts.URL, 4, ws.DialOptions{})
	turn := do(t, c, &message.Configure{ProtocolVersion: 5, ScriptName: "main.py"})
	if fe, ok := turn.Event.Body.(*message.FatalError); !ok || !strings.Contains(fe.Message, "2 to 4") {
		t.Fatalf("Configure at 5 answered %s", describe(turn.Event))
	}
	if code := closeCode(t, c); code != CloseProtocol {
		t.Fatalf("close code %d, want %d", code, CloseProtocol)
	}
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="version_refused"} 1`)
	waitMetric(t, ts, `monty_server_sessions_ended_total{outcome="worker_failed"} 0`)
}

// With sessions uncapped (MaxSessions < 0) the worker pool is uncapped
// too; it was capped at 256, so session 257 was admitted and then waited
// for a worker until its turn timed out.
func TestUncappedSessionsUncapWorkers(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want int
	}{
		{Config{MaxSessions: -1}, math.MaxInt},
		{Config{MaxSessions: -1, Prewarm: 300}, math.MaxInt},
		{Config{MaxSessions: 64}, 64},
		{Config{MaxSessions: 2, Prewarm: 2}, 2},
	} {
		if got := poolMax(c.cfg); got != c.want {
			t.Errorf("MaxSessions %d, Prewarm %d: pool cap %d, want %d", c.cfg.MaxSessions, c.cfg.Prewarm, got, c.want)
		}
	}
}
