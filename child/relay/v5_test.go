//go:build unix

package relay

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// serve5 runs Serve at protocol 5 over the real (protocol-2) worker and
// returns a function that sends one request and returns the turn's event.
func serve5(t *testing.T) func(message.Request) *message.ChildEvent {
	t.Helper()
	return serve5With(t, child.SupportedVersions)
}

// serve5With is serve5 with the versions the child serves.
func serve5With(t *testing.T, versions []uint32) func(message.Request) *message.ChildEvent {
	t.Helper()
	bin := testenv.Worker(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	fr, fw := frame.NewReader(outR, 0), frame.NewWriter(inW, 0)
	eng := New(Config{Worker: worker.Config{Binary: bin, Logger: quiet}, Logger: quiet})
	conn := transport.NewStream(inR, outW, 0)
	result := make(chan error, 1)
	go func() {
		err := child.Serve(context.Background(), conn, eng, child.Options{Logger: quiet, Versions: versions})
		conn.Close()
		result <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close(); <-result })
	return func(req message.Request) *message.ChildEvent {
		t.Helper()
		b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: req})
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteFrame(b); err != nil {
			t.Fatal(err)
		}
		for {
			body, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			ev, err := codecv5.DecodeEvent(body, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ev.Body.(*message.Print); !ok {
				return ev
			}
		}
	}
}

func u64(v uint64) *uint64 { return &v }

func configure5(limits *message.ResourceLimits, p *message.OsPolicy) *message.Configure {
	return &message.Configure{ScriptName: "v5.py", ProtocolVersion: protocol.Version5, Limits: limits, OsPolicy: p}
}

func wantRepr(t *testing.T, ev *message.ChildEvent, want string) {
	t.Helper()
	c, ok := ev.Body.(*message.Complete)
	if !ok {
		t.Fatalf("got %#v, want Complete %s", ev.Body, want)
	}
	if got := c.Values.Repr(c.Value); got != want {
		t.Fatalf("value %s, want %s", got, want)
	}
}

func wantError(t *testing.T, ev *message.ChildEvent, typ, prefix string) string {
	t.Helper()
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception == nil {
		t.Fatalf("got %#v, want Error %s", ev.Body, typ)
	}
	if e.Exception.Type != typ || !strings.HasPrefix(e.Exception.Msg(), prefix) {
		t.Fatalf("got %s: %s, want %s: %s…", e.Exception.Type, e.Exception.Msg(), typ, prefix)
	}
	return e.Exception.Msg()
}

// TestV5FeedLimitOverProtocol2 shows the relay serving protocol 5 over the
// released worker: the stamps carry the feed clock and echo the limits,
// and a feed past max_feed_duration is ended with upstream's TimeoutError
// text, the session discarded until Reset.
func TestV5FeedLimitOverProtocol2(t *testing.T) {
	do := serve5(t)
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(400_000), MaxTotalSleepMicros: u64(150_000)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	// The feed clock is the inner worker's execution clock, which counts
	// whole microseconds: "1 + 2" ran in under one now and then (the
	// worker stamped 0 in about 1 feed in 20), so the feed does work.
	ev := do(&message.Feed{Code: "sum(range(10_000))"})
	wantRepr(t, ev, "49995000")
	if ev.FeedExecutionMicros == 0 || ev.MaxDurationMicros != nil {
		t.Errorf("stamps: feed_execution_micros %d, max_duration %v", ev.FeedExecutionMicros, ev.MaxDurationMicros)
	}
	if ev.MaxFeedDurationMicros == nil || *ev.MaxFeedDurationMicros != 400_000 ||
		ev.MaxTotalSleepMicros == nil || *ev.MaxTotalSleepMicros != 150_000 || ev.MaxTurnDurationMicros != nil {
		t.Errorf("echoed limits: feed %v turn %v sleep %v", ev.MaxFeedDurationMicros, ev.MaxTurnDurationMicros, ev.MaxTotalSleepMicros)
	}
	msg := wantError(t, do(&message.Feed{Code: "while True:\n    pass"}), "TimeoutError", "feed time limit exceeded: ")
	if !strings.HasSuffix(msg, " > 400ms") {
		t.Errorf("message %q does not name the feed limit", msg)
	}
	wantError(t, do(&message.Feed{Code: "1"}), "RuntimeError", "session discarded after a time limit")
	if ev := do(&message.Reset{}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Reset: %#v", ev.Body)
	}
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure after the trip: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "40 + 2"}), "42")
}

// TestV5TurnLimitResetsAtResume shows max_turn_duration restarting at each
// resume: a feed whose two turns each stay under the turn limit completes,
// and a turn past it trips with the turn limit named.
func TestV5TurnLimitResetsAtResume(t *testing.T) {
	do := serve5(t)
	if ev := do(configure5(&message.ResourceLimits{MaxTurnDurationMicros: u64(400_000)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	ev := do(&message.Feed{Code: "x = f()\nwhile True:\n    pass"})
	call, ok := ev.Body.(*message.FunctionCall)
	if !ok {
		t.Fatalf("got %#v, want FunctionCall", ev.Body)
	}
	var g value.Graph
	root := g.Add(value.Int(1))
	msg := wantError(t, do(&message.ResumeCall{CallID: call.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: g}),
		"TimeoutError", "turn time limit exceeded: ")
	if !strings.HasSuffix(msg, " > 400ms") {
		t.Errorf("message %q does not name the turn limit", msg)
	}
}

// TestV5FixedClockAnsweredByChild shows the child answering the inner
// worker's clock from a fixed-clock policy in its timezone: the parent
// never sees the date_time_now call.
func TestV5FixedClockAnsweredByChild(t *testing.T) {
	do := serve5(t)
	p := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000, Microsecond: 5},
		TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "UTC"}}
	if ev := do(configure5(nil, p)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "import datetime\nd = datetime.datetime.now()\n(d.year, d.month, d.day, d.hour, d.minute, d.microsecond)"}),
		"(2023, 11, 14, 22, 13, 5)")
}

// TestV5PolicyRefusedOnConfigure shows an invalid policy and one the child
// cannot honour refused on Configure with a recoverable Error, and the
// next Configure accepted.
func TestV5PolicyRefusedOnConfigure(t *testing.T) {
	do := serve5(t)
	bad := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{Microsecond: 1_000_000}}
	wantError(t, do(configure5(nil, bad)), "RuntimeError", "protocol violation: invalid os_policy: fixed datetime microsecond 1000000 is above 999999")
	zone := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Nowhere/Atlantis"}}
	wantError(t, do(configure5(nil, zone)), "RuntimeError", "protocol violation: unsupported os_policy: timezone Nowhere/Atlantis")
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "1"}), "1")
}

// TestV5DumpCarriesLimitsAndPolicy shows a dump taken at protocol 5
// carrying the feed and sleep limits and the fixed clock: loaded into a
// session configured with neither, the dump's limits are echoed and
// enforced and the dump's clock answers, as upstream's Load restores them.
func TestV5DumpCarriesLimitsAndPolicy(t *testing.T) {
	do := serve5(t)
	p := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000, Microsecond: 5}}
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(400_000), MaxTotalSleepMicros: u64(150_000)}, p)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "x = 41\nx"}), "41")
	d, ok := do(&message.Dump{}).Body.(*message.DumpResult)
	if !ok {
		t.Fatal("no DumpResult")
	}
	if ev := do(&message.Reset{}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Reset: %#v", ev.Body)
	}
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	ev := do(&message.Load{State: d.State})
	if ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Load: %#v", ev.Body)
	}
	if ev.MaxFeedDurationMicros == nil || *ev.MaxFeedDurationMicros != 400_000 ||
		ev.MaxTotalSleepMicros == nil || *ev.MaxTotalSleepMicros != 150_000 || ev.MaxTurnDurationMicros != nil {
		t.Fatalf("echoed after Load: feed %v turn %v sleep %v", ev.MaxFeedDurationMicros, ev.MaxTurnDurationMicros, ev.MaxTotalSleepMicros)
	}
	wantRepr(t, do(&message.Feed{Code: "import datetime\nd = datetime.datetime.now()\n(x + 1, d.year, d.microsecond)"}), "(42, 2023, 5)")
	msg := wantError(t, do(&message.Feed{Code: "while True:\n    pass"}), "TimeoutError", "feed time limit exceeded: ")
	if !strings.HasSuffix(msg, " > 400ms") {
		t.Errorf("message %q does not name the dump's feed limit", msg)
	}
}

// TestV5DumpEnvelopeChecked shows a truncated relay dump refused on Load
// with a recoverable violation, and the session still configurable.
func TestV5DumpEnvelopeChecked(t *testing.T) {
	do := serve5(t)
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	bad := append(append([]byte{}, dumpMagic5...), 0xff, 0xff, 0x03)
	wantError(t, do(&message.Load{State: bad}), "RuntimeError", "protocol violation: failed to load session: truncated relay dump")
	// Settings, then no feed clock.
	b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: &message.Configure{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{}}})
	if err != nil {
		t.Fatal(err)
	}
	bad = append(append(append([]byte{}, dumpMagic5...), binary.AppendUvarint(nil, uint64(len(b)))...), b...)
	wantError(t, do(&message.Load{State: bad}), "RuntimeError", "protocol violation: failed to load session: truncated relay dump")
	wantRepr(t, do(&message.Feed{Code: "1 + 1"}), "2")
}

// dump5 returns a relay protocol-5 dump of a session configured with
// limits and policy p that ran code.
func takeDump5(t *testing.T, limits *message.ResourceLimits, p *message.OsPolicy, code string) []byte {
	t.Helper()
	do := serve5(t)
	if ev := do(configure5(limits, p)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	do(&message.Feed{Code: code})
	d, ok := do(&message.Dump{}).Body.(*message.DumpResult)
	if !ok {
		t.Fatal("no DumpResult")
	}
	return d.State
}

// TestV5LoadFirstRestoresLimits shows a protocol-5 parent that starts
// with Load, with no Configure (contract §12), getting the dump's limits
// and clock enforced and echoed, as after a Configure.
func TestV5LoadFirstRestoresLimits(t *testing.T) {
	p := &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000, Microsecond: 5}}
	state := takeDump5(t, &message.ResourceLimits{MaxFeedDurationMicros: u64(400_000)}, p, "x = 41")
	do := serve5With(t, []uint32{protocol.Version5})
	ev := do(&message.Load{State: state})
	if ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Load: %#v", ev.Body)
	}
	if ev.MaxFeedDurationMicros == nil || *ev.MaxFeedDurationMicros != 400_000 {
		t.Fatalf("echoed after Load: feed %v", ev.MaxFeedDurationMicros)
	}
	wantRepr(t, do(&message.Feed{Code: "import datetime\nd = datetime.datetime.now()\n(x + 1, d.year, d.microsecond)"}), "(42, 2023, 5)")
	msg := wantError(t, do(&message.Feed{Code: "while True:\n    pass"}), "TimeoutError", "feed time limit exceeded: ")
	if !strings.HasSuffix(msg, " > 400ms") {
		t.Errorf("message %q does not name the dump's feed limit", msg)
	}
}

// TestV5ResetDropsLimits shows Reset dropping the protocol-5 limits of the
// session it ends: a plain inner dump loaded next runs unlimited, not
// under the reset session's 1 µs feed limit.
func TestV5ResetDropsLimits(t *testing.T) {
	inner, saved, err := split5(takeDump5(t, nil, nil, "x = 41"))
	if err != nil || saved == nil {
		t.Fatalf("split5: %v %v", saved, err)
	}
	do := serve5With(t, []uint32{protocol.Version5})
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(1)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	if ev := do(&message.Reset{}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Reset: %#v", ev.Body)
	}
	if ev := do(&message.Load{State: inner}); ev.Body.EventKind() != message.KindOk || ev.MaxFeedDurationMicros != nil {
		t.Fatalf("Load: %#v, feed limit %v", ev.Body, ev.MaxFeedDurationMicros)
	}
	wantRepr(t, do(&message.Feed{Code: "x + 1"}), "42")
}

// TestV5HostileEnvelopeRefusedBeforeLoading shows a relay dump whose saved
// policy names a timezone the child cannot resolve refused before the
// inner worker loads anything: the refusal leaves the child able to load
// again (contract §12), and a good dump then loads.
func TestV5HostileEnvelopeRefusedBeforeLoading(t *testing.T) {
	good := takeDump5(t, nil, nil, "x = 41")
	inner, _, err := split5(good)
	if err != nil {
		t.Fatal(err)
	}
	saved := &message.Configure{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{},
		OsPolicy: &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "No/Such_Zone"}}}
	b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: saved})
	if err != nil {
		t.Fatal(err)
	}
	bad := append(append([]byte{}, dumpMagic5...), binary.AppendUvarint(nil, uint64(len(b)))...)
	bad = append(append(bad, b...), inner...)
	do := serve5With(t, []uint32{protocol.Version5})
	wantError(t, do(&message.Load{State: bad}), "RuntimeError", "protocol violation: unsupported os_policy: timezone No/Such_Zone")
	if ev := do(&message.Load{State: good}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Load after the refusal: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "x + 1"}), "42")
}

// TestV5EnvelopePolicyValidated shows a relay dump whose saved policy
// fails the checks a Configure applies (a fixed microsecond above 999999,
// a fixed offset beyond a day) refused on Load with a recoverable
// violation, as the same policy is refused on Configure, instead of
// running the sandbox's clock off it; a good dump then loads.
func TestV5EnvelopePolicyValidated(t *testing.T) {
	good := takeDump5(t, nil, nil, "x = 41")
	inner, _, err := split5(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*message.OsPolicy{
		{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: 1_700_000_000, Microsecond: 5_000_000}},
		{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneFixed, Fixed: value.TimeZone{Offset: 10_000_000}}},
	} {
		saved := &message.Configure{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{}, OsPolicy: p}
		b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: saved})
		if err != nil {
			t.Fatal(err)
		}
		bad := append(append([]byte{}, dumpMagic5...), binary.AppendUvarint(nil, uint64(len(b)))...)
		bad = append(append(bad, b...), inner...)
		do := serve5With(t, []uint32{protocol.Version5})
		wantError(t, do(&message.Load{State: bad}), "RuntimeError", "protocol violation: failed to load session: invalid relay dump settings: invalid os_policy: ")
		if ev := do(&message.Load{State: good}); ev.Body.EventKind() != message.KindOk {
			t.Fatalf("Load after the refusal: %#v", ev.Body)
		}
		wantRepr(t, do(&message.Feed{Code: "x + 1"}), "42")
	}
}

// TestV5LoadResumesFeedClock shows the feed clock travelling in a relay
// dump, as upstream serializes the feed budget in its dumps: a session
// whose feeds together ran past its feed limit (each one under it) is
// dumped at a suspension of a later feed; loaded, the stamps report that
// feed's clock (before, the session's whole total_execution, which tripped
// the feed limit at the first resume), and the resume runs on from it to
// its end. An envelope in the older format (no clock) loads with the
// clock at zero.
//
// The limit leaves each spin(200000) (30-50 ms idle) room for a machine
// loaded many times over: at 500 ms, one feed ran past it under load.
func TestV5LoadResumesFeedClock(t *testing.T) {
	const limit = 1_500_000
	do := serve5(t)
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(limit)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "def spin(n):\n    i = 0\n    while i < n:\n        i += 1\n    return n"}), "None")
	for total := uint64(0); total <= limit; {
		ev := do(&message.Feed{Code: "spin(200000)"})
		wantRepr(t, ev, "200000")
		if ev.TotalExecutionMicros <= total {
			t.Fatalf("total_execution_micros %d after %d", ev.TotalExecutionMicros, total)
		}
		total = ev.TotalExecutionMicros
	}
	ev := do(&message.Feed{Code: "spin(20000)\nx = f()\nx + 1"})
	if _, ok := ev.Body.(*message.FunctionCall); !ok {
		t.Fatalf("got %#v, want FunctionCall", ev.Body)
	}
	fed := ev.FeedExecutionMicros
	if fed == 0 {
		t.Fatal("the dumped feed stamped no feed clock")
	}
	d, ok := do(&message.Dump{}).Body.(*message.DumpResult)
	if !ok {
		t.Fatal("no DumpResult")
	}
	inner, saved, err := split5(d.State)
	if err != nil || saved == nil {
		t.Fatalf("split5: %v %v", saved, err)
	}
	settings, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: saved.Configure})
	if err != nil {
		t.Fatal(err)
	}
	old := append(append([]byte{}, dumpMagic5Old...), binary.AppendUvarint(nil, uint64(len(settings)))...)
	old = append(append(old, settings...), inner...)
	for _, c := range []struct {
		state []byte
		clock uint64
	}{{d.State, fed}, {old, 0}} {
		do2 := serve5With(t, []uint32{protocol.Version5})
		ev = do2(&message.Load{State: c.state})
		call, ok := ev.Body.(*message.FunctionCall)
		if !ok {
			t.Fatalf("Load: %#v", ev.Body)
		}
		if ev.FeedExecutionMicros != c.clock || ev.MaxFeedDurationMicros == nil || *ev.MaxFeedDurationMicros != limit {
			t.Errorf("after Load: feed_execution_micros %d (want %d), feed limit %v", ev.FeedExecutionMicros, c.clock, ev.MaxFeedDurationMicros)
		}
		var g value.Graph
		root := g.Add(value.Int(41))
		ev = do2(&message.ResumeCall{CallID: call.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: g})
		wantRepr(t, ev, "42")
		if ev.FeedExecutionMicros < c.clock {
			t.Errorf("feed_execution_micros %d after the resume, %d at the Load", ev.FeedExecutionMicros, c.clock)
		}
	}
}

// TestV5LoadNotTimed shows a Load, which runs no sandbox code, outside the
// feed and turn budgets: under budgets shorter than any Load takes, a dump
// loads (before, the relay killed the inner worker and answered the Load
// with the TimeoutError, which ended the child with a FatalError), and the
// session goes on.
func TestV5LoadNotTimed(t *testing.T) {
	inner, _, err := split5(takeDump5(t, nil, nil, "x = 41"))
	if err != nil {
		t.Fatal(err)
	}
	do := serve5With(t, []uint32{protocol.Version5})
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(1), MaxTurnDurationMicros: u64(1)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	if ev := do(&message.Load{State: inner}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Load: %#v", ev.Body)
	}
	if ev := do(&message.Reset{}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Reset: %#v", ev.Body)
	}
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	wantRepr(t, do(&message.Feed{Code: "40 + 2"}), "42")
}

// TestV5DumpNotTimed shows a Dump, which runs no sandbox code, outside the
// feed and turn budgets: under budgets shorter than any Dump takes, a
// session that ran a feed is dumped and goes on (before, the relay killed
// the inner worker, answered the Dump with a TimeoutError and discarded
// the session).
func TestV5DumpNotTimed(t *testing.T) {
	inner, _, err := split5(takeDump5(t, nil, nil, "x = 41"))
	if err != nil {
		t.Fatal(err)
	}
	// A bare inner dump keeps the Configure's budgets (Load is not timed).
	do := serve5With(t, []uint32{protocol.Version5})
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(1), MaxTurnDurationMicros: u64(1)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	if ev := do(&message.Load{State: inner}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Load: %#v", ev.Body)
	}
	for range 2 {
		if ev := do(&message.Dump{}); ev.Body.EventKind() != message.KindDumpResult {
			t.Fatalf("Dump: %#v", ev.Body)
		}
	}
}

// TestV5HugeDumpedFeedClockSaturates shows a relay dump carrying the
// largest feed clock (crafted: no session runs that long) loaded into a
// session without a feed limit: the clock saturates as the feed runs on
// instead of wrapping around to a nonsense stamp.
func TestV5HugeDumpedFeedClockSaturates(t *testing.T) {
	inner, saved, err := split5(takeDump5(t, nil, nil, "x = f()\nx + 1"))
	if err != nil || saved == nil {
		t.Fatalf("split5: %v %v", saved, err)
	}
	state := envelope5(t, saved.Configure, 1<<64-1, inner)
	const most = uint64(1<<63-1) / 1000 // the largest duration, in µs
	do := serve5With(t, []uint32{protocol.Version5})
	ev := do(&message.Load{State: state})
	call, ok := ev.Body.(*message.FunctionCall)
	if !ok || ev.FeedExecutionMicros != most {
		t.Fatalf("Load: %#v, feed_execution_micros %d", ev.Body, ev.FeedExecutionMicros)
	}
	var g value.Graph
	root := g.Add(value.Int(41))
	ev = do(&message.ResumeCall{CallID: call.CallID, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: g})
	wantRepr(t, ev, "42")
	if ev.FeedExecutionMicros != most {
		t.Fatalf("feed_execution_micros %d after the resume, want %d", ev.FeedExecutionMicros, most)
	}
}

// TestV5PolicyRefusesNonIANAZones shows the names Go's
// time.LoadLocation accepts but that are no IANA zone refused like any
// unknown zone: "Local" (the child host's own zone, which is no sandbox's
// business) and the empty name, and the host database's own files, which
// only some hosts have: "localtime" (the host's zone again, a link to
// /etc/localtime on Debian), "posixrules", and the "posix/" and "right/"
// trees (right/ zones count leap seconds, so their clocks are off by them).
func TestV5PolicyRefusesNonIANAZones(t *testing.T) {
	do := serve5(t)
	for _, name := range []string{"Local", "", "localtime", "posixrules", "posix/UTC", "right/UTC", "right/Europe/Paris"} {
		zone := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: name}}
		wantError(t, do(configure5(nil, zone)), "RuntimeError", "protocol violation: unsupported os_policy: timezone "+name+" is not in the child's tz database")
	}
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
}

// TestV5ZeroLimitSaysWhatRanOut shows a feed or turn limit of 0 failing
// the turn as upstream's does ("0 fails at the first instruction"), with
// a message that is true: the time the turn ran, which is more than the
// limit. Before, the relay tripped before running anything and said
// "0ns > 0ns".
func TestV5ZeroLimitSaysWhatRanOut(t *testing.T) {
	for _, tc := range []struct {
		scope  string
		limits *message.ResourceLimits
	}{
		{"feed", &message.ResourceLimits{MaxFeedDurationMicros: u64(0)}},
		{"turn", &message.ResourceLimits{MaxTurnDurationMicros: u64(0)}},
	} {
		do := serve5(t)
		if ev := do(configure5(tc.limits, nil)); ev.Body.EventKind() != message.KindOk {
			t.Fatalf("%s: Configure: %#v", tc.scope, ev.Body)
		}
		msg := wantError(t, do(&message.Feed{Code: "1"}), "TimeoutError", tc.scope+" time limit exceeded: ")
		elapsed, ok := strings.CutSuffix(strings.TrimPrefix(msg, tc.scope+" time limit exceeded: "), " > 0ns")
		if !ok || elapsed == "0ns" || elapsed == "" {
			t.Errorf("%s: message %q does not say what ran out", tc.scope, msg)
		}
		wantError(t, do(&message.Feed{Code: "1"}), "RuntimeError", "session discarded after a time limit")
	}
}

// TestV5ExactConfigureNotReset shows a protocol-5 Configure that the inner
// session's own Configure expresses exactly (once the relay has taken the
// protocol-5 limits and policy for itself) configuring the inner worker
// once, as a protocol-4 one does: the released worker's heap accounting
// after a Reset counts some 100–200 bytes the worker keeps from its first
// session, so a relay that reset its fresh worker reported (and limited)
// more memory in use than that worker does for the same Configure.
func TestV5ExactConfigureNotReset(t *testing.T) {
	mem := uint64(100_000)
	limits := func() *message.ResourceLimits { return &message.ResourceLimits{MaxMemoryBytes: &mem} }
	const code = "x = [0] * 5000"
	s := serve(t)
	if ev, _ := s.do(t, &message.Configure{ProtocolVersion: 4, ScriptName: "m.py", Limits: limits()}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure 4: %#v", ev.Body)
	}
	ev, _ := s.do(t, &message.Feed{Code: code})
	want := describe(ev.Body)
	if !strings.HasPrefix(want, "MemoryError: memory limit exceeded: ") {
		t.Fatalf("protocol 4: %s", want)
	}
	do := serve5(t)
	if ev := do(&message.Configure{ProtocolVersion: 5, ScriptName: "m.py", Limits: limits(),
		OsPolicy: &message.OsPolicy{Clock: message.ClockFixed}}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure 5: %#v", ev.Body)
	}
	if got := describe(do(&message.Feed{Code: code}).Body); got != want {
		t.Fatalf("protocol 5: %s, want %s as at protocol 4", got, want)
	}
	// A refused policy leaves the inner worker without a session: the
	// next Configure is served.
	do = serve5(t)
	bad := &message.OsPolicy{TimeZone: &message.SandboxTimeZone{Kind: message.ZoneNamed, Name: "Nowhere/Nothing"}}
	wantError(t, do(&message.Configure{ProtocolVersion: 5, ScriptName: "m.py", OsPolicy: bad}), "RuntimeError", "protocol violation: unsupported os_policy")
	if ev := do(&message.Configure{ProtocolVersion: 5, ScriptName: "m.py", Limits: limits()}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure after the refusal: %#v", ev.Body)
	}
	if got := describe(do(&message.Feed{Code: code}).Body); !strings.HasPrefix(got, "MemoryError: ") {
		t.Fatalf("feed after the refusal: %s", got)
	}
}

// TestV5RefusedLoadAfterTripThenConfigure shows the child serving a
// Configure after a time-limit trip, a Reset and a refused Load: the
// refused Load started a fresh inner worker (the tripped one was killed),
// which session.Start configured with defaults, and the next Configure
// was sent to it as to a worker without a session, which refused it
// ("Configure while a session already exists"), ending the child.
func TestV5RefusedLoadAfterTripThenConfigure(t *testing.T) {
	do := serve5(t)
	if ev := do(configure5(&message.ResourceLimits{MaxFeedDurationMicros: u64(0)}, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure: %#v", ev.Body)
	}
	wantError(t, do(&message.Feed{Code: "1"}), "TimeoutError", "feed time limit exceeded: ")
	if ev := do(&message.Reset{}); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Reset: %#v", ev.Body)
	}
	wantError(t, do(&message.Load{State: []byte("garbage")}), "RuntimeError", "protocol violation: failed to load session: ")
	if ev := do(configure5(nil, nil)); ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Configure after the refused Load: %s", describe(ev.Body))
	}
	wantRepr(t, do(&message.Feed{Code: "40 + 2"}), "42")
}

// TestV5LoadFirstOfRelayDumpSpeaks5 shows a child that serves 2, 4 and 5
// over a protocol-2 worker answering a first Load of a relay dump made at
// protocol 5 at 5, with the dump's limits: only a protocol-5 parent holds
// such a dump. Before, the child settled at the inner worker's version (2),
// so the parent could not read the reply (ChildEvent 22 is a string at 2,
// a number at 5) and the dump's limits were dropped.
func TestV5LoadFirstOfRelayDumpSpeaks5(t *testing.T) {
	state := takeDump5(t, &message.ResourceLimits{MaxFeedDurationMicros: u64(400_000)}, nil, "x = 41")
	do := serve5With(t, child.SupportedVersions)
	ev := do(&message.Load{State: state})
	if ev.Body.EventKind() != message.KindOk {
		t.Fatalf("Load: %#v", ev.Body)
	}
	if ev.MaxFeedDurationMicros == nil || *ev.MaxFeedDurationMicros != 400_000 {
		t.Fatalf("echoed after Load: feed %v", ev.MaxFeedDurationMicros)
	}
	wantRepr(t, do(&message.Feed{Code: "x + 1"}), "42")
}

// At protocol 5 the relay emulates eager await as at 4 (contract §10,
// which protocol 5 leaves as it is): a call awaited straight away goes out
// flagged and takes the one-entry answer; a Dump while the inner worker is
// held past the call is a relay protocol-5 dump, loading elsewhere with
// its limits and re-announcing the call flagged; an ordinary answer restores
// the call on an inner worker configured as the session was (protocol 5's
// Configure translated, not sent as it is, which the inner worker's
// version cannot express). Before, the relay emulated it for a protocol-4
// parent only: the call went out unflagged and the eager answer was
// refused.
func TestV5EagerAwaitEmulated(t *testing.T) {
	do := serve5(t)
	lim := &message.ResourceLimits{MaxFeedDurationMicros: u64(30_000_000), MaxTurnDurationMicros: u64(20_000_000)}
	if _, ok := do(configure5(lim, &message.OsPolicy{Clock: message.ClockFixed})).Body.(*message.Ok); !ok {
		t.Fatal("Configure refused")
	}
	fc := call(t, do(&message.Feed{Code: "a = await f()\nb = await f()\na + b"}), "Feed two awaits")
	if !fc.AllowEagerAwait {
		t.Fatal("`a = await f()` not flagged at protocol 5")
	}
	fc2 := call(t, do(eagerReturn(fc.CallID, 10)), "eager answer 10")
	if !fc2.AllowEagerAwait || fc2.CallID <= fc.CallID {
		t.Fatalf("second await: %s", describe(fc2))
	}
	violates(t, do(&message.ResumeFutures{}), "empty eager reply", "eager ResumeFutures must contain exactly the suspended call id")
	ev := do(&message.Dump{})
	dr, ok := ev.Body.(*message.DumpResult)
	if !ok || !bytes.HasPrefix(dr.State, dumpMagic5) {
		t.Fatalf("Dump while held: %s, want a relay protocol-5 dump", describe(ev.Body))
	}
	o := serve5With(t, []uint32{protocol.Version5})
	lev := o(&message.Load{State: dr.State})
	if lc := call(t, lev, "Load of the held dump"); lc.CallID != fc2.CallID || !lc.AllowEagerAwait {
		t.Fatalf("Load re-announced %s, want call %d flagged", describe(lc), fc2.CallID)
	}
	if lev.MaxFeedDurationMicros == nil || *lev.MaxFeedDurationMicros != 30_000_000 {
		t.Fatalf("Load reply echoes max_feed_duration %v, want the dump's 30000000", lev.MaxFeedDurationMicros)
	}
	wantRepr(t, o(eagerReturn(fc2.CallID, 5)), "15")
	// The held child: an ordinary ResumeCall restores the call first; its
	// error is raised at the call.
	raise := &message.ResumeCall{CallID: fc2.CallID, Result: &message.ExtResult{Kind: message.ResultError, Error: message.NewException("ValueError", "no")}}
	wantError(t, do(raise), "ValueError", "no")
	end := do(&message.Feed{Code: "a"})
	wantRepr(t, end, "10")
	if end.MaxTurnDurationMicros == nil || *end.MaxTurnDurationMicros != 20_000_000 {
		t.Fatalf("after the restore the turn limit echoed is %v, want 20000000", end.MaxTurnDurationMicros)
	}
}
