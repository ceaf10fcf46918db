//go:build unix

package session

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// runSpanOf is the one run span rig recorded, every span started having
// ended.
func runSpanOf(t *testing.T, rig *telemetryRig) sdktrace.ReadOnlySpan {
	t.Helper()
	if s, e := len(rig.spans.Started()), len(rig.spans.Ended()); s != e {
		t.Fatalf("%d spans started, %d ended", s, e)
	}
	var runs []sdktrace.ReadOnlySpan
	for _, sp := range rig.spans.Ended() {
		if sp.Name() == SpanRun {
			runs = append(runs, sp)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("%d run spans, want 1", len(runs))
	}
	return runs[0]
}

func outcomeOf(sp sdktrace.ReadOnlySpan) string {
	for _, kv := range sp.Attributes() {
		if kv.Key == AttrOutcome {
			return kv.Value.AsString()
		}
	}
	return ""
}

// A Reset that discards a suspended feed is not a failed run: the run ends aborted, with no error status.
func TestTelemetrySuspendedRunDiscardedIsAborted(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		discard func(t *testing.T, s *Session, idle []byte)
	}{
		{"Reset", func(t *testing.T, s *Session, _ []byte) {
			if err := s.Reset(ctx); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rig := newTelemetryRig(t)
			s := realSession(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp})
			idle, err := s.Dump(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if ev, err := s.Feed(ctx, "f(1)"); err != nil || ev.Body.EventKind() != message.KindFunctionCall {
				t.Fatalf("feed: %v %v", ev, err)
			}
			c.discard(t, s, idle)
			if st := s.State(); st != StateIdle {
				t.Fatalf("state %v after the discard", st)
			}
			s.Close()
			run := runSpanOf(t, rig)
			if o := outcomeOf(run); o != "aborted" || run.Status().Code == codes.Error {
				t.Errorf("run outcome %q, status %v; want aborted, no error", o, run.Status())
			}
		})
	}
}

// gatedKill is a fake peer whose first Kill returns only once gate is
// closed: the turn the kill interrupts finishes first.
type gatedKill struct {
	*fakeChild
	gate  chan struct{}
	first atomic.Bool
}

func (g *gatedKill) Kill() error {
	// The first caller is decided before the child dies: the turn the
	// kill interrupts calls Kill too once its read fails, and must not
	// be the one held (it would never finish).
	first := g.first.CompareAndSwap(false, true)
	g.fakeChild.Kill()
	if first {
		<-g.gate
	}
	return nil
}

// A run cut short by the caller's Kill from another goroutine ends
// closed, with no error status, even when the interrupted turn records
// its end before Kill returns.
func TestTelemetryKillMidRunIsClosedWhicheverEndsFirst(t *testing.T) {
	rig := newTelemetryRig(t)
	f := newFake(2, 0, withConfigure(func(req *message.ParentRequest) fakeReply {
		return fakeReply{hang: true, exit: -1}
	}))
	p := &gatedKill{fakeChild: f, gate: make(chan struct{})}
	s, err := Attach(context.Background(), p, 2, Config{Logger: quietLogger, TracerProvider: rig.tp, MeterProvider: rig.mp})
	if err != nil {
		t.Fatal(err)
	}
	fed := make(chan error, 1)
	go func() {
		_, err := s.Feed(context.Background(), "while True: pass")
		fed <- err
	}()
	for f.count(message.KindFeed) == 0 {
		time.Sleep(time.Millisecond)
	}
	killed := make(chan struct{})
	go func() {
		s.Kill()
		close(killed)
	}()
	if err := <-fed; err == nil {
		t.Fatal("the killed feed succeeded")
	}
	close(p.gate)
	<-killed
	s.Close()
	run := runSpanOf(t, rig)
	if o := outcomeOf(run); o != "closed" || run.Status().Code == codes.Error {
		t.Errorf("run outcome %q, status %v; want closed, no error", o, run.Status())
	}
}

// A feed the session aborts for exceeding its suspension limit fails with
// a *SuspensionLimitError: its run ends with outcome error and an Error
// status, like any failed run, not aborted as a caller's AbortFeed does.
func TestTelemetrySuspensionLimitIsAnError(t *testing.T) {
	rig := newTelemetryRig(t)
	s, _ := startFake(t, Config{Limits: Limits{MaxSuspensions: 2}, TracerProvider: rig.tp, MeterProvider: rig.mp}, suspender(1000))
	if _, err := s.Feed(bg, "loop()"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resume(bg, Return(nil)); err != nil {
		t.Fatal(err)
	}
	var sl *SuspensionLimitError
	if _, err := s.Resume(bg, Return(nil)); !errors.As(err, &sl) {
		t.Fatalf("got %v, want a suspension-limit error", err)
	}
	s.Close()
	run := runSpanOf(t, rig)
	if o := outcomeOf(run); o != "error" || run.Status().Code != codes.Error {
		t.Errorf("run outcome %q, status %v; want error, Error", o, run.Status())
	}
	if n := telemetrytest.HistCount(rig.metrics(t)[MetricTurnDuration]); n != 3 {
		// The abort's round trip is part of the last resume's turn, not
		// a second turn overlapping it.
		t.Errorf("%d turns recorded, want 3 (a feed and two resumes)", n)
	}
}

// With metrics and no spans (a no-op TracerProvider), a run still open
// when the session is closed is recorded as it is with spans: its
// duration and suspensions, and the host round trip it waited on.
func TestTelemetryMetricsOnlyRecordsARunOpenAtClose(t *testing.T) {
	for _, tracing := range []bool{true, false} {
		rig := newTelemetryRig(t)
		cfg := Config{TracerProvider: rig.tp, MeterProvider: rig.mp}
		if !tracing {
			cfg.TracerProvider = tracenoop.NewTracerProvider()
		}
		s := realSession(t, cfg)
		if ev, err := s.Feed(context.Background(), "f(1)"); err != nil || ev.Body.EventKind() != message.KindFunctionCall {
			t.Fatalf("feed: %v %v", ev, err)
		}
		s.Close()
		m := rig.metrics(t)
		for _, name := range []string{MetricRunDuration, MetricRunSuspensions, MetricExtCallDuration} {
			if n := telemetrytest.HistCount(m[name]); n != 1 {
				t.Errorf("tracing %v: %s recorded %d times, want 1", tracing, name, n)
			}
		}
	}
}

// A feed the parent aborts on its own because the run failed — a system
// sleep past the sleep budget (protocol 5), a host answer that cannot be
// sent, or one the worker rejects — ends its run with outcome error and
// an Error status, as the suspension limit does: only the caller's
// AbortFeed (or a Reset, or a Run whose context ended) is aborted.
// Before, every AbortFeed the parent sent made the run "aborted", with
// no error status, so a tripped sleep limit looked like a caller's choice.
func TestTelemetryParentAbortIsAnError(t *testing.T) {
	answersAbort := func(first *message.ChildEvent, resumed func() fakeReply) fakeHandler {
		return func(req *message.ParentRequest) fakeReply {
			switch b := req.Body.(type) {
			case *message.Feed:
				return reply(first)
			case *message.ResumeCall:
				return resumed()
			case *message.AbortFeed:
				return reply(stamp(ev(&message.Error{Exception: b.Exception}), protocol.DefaultMaxSuspensions))
			}
			return reply(violation("unexpected request"))
		}
	}
	sleepy := answersAbort(sleepCall(1, 0.5), func() fakeReply { return reply(violation("unexpected resume")) })
	sleepCfg := Config{Limits: Limits{MaxTotalSleep: 100 * time.Millisecond}}
	for _, c := range []struct {
		name string
		o    fakeOpts
		cfg  Config
		h    fakeHandler
		do   func(s *Session) error
	}{
		{"sleep limit, Run", fakeOpts{version: 5}, sleepCfg, sleepy, func(s *Session) error {
			_, err := s.Run(bg, "time.sleep(0.5)")
			return err
		}},
		{"sleep limit, Feed", fakeOpts{version: 5}, sleepCfg, sleepy, func(s *Session) error {
			ev, err := s.Feed(bg, "time.sleep(0.5)")
			if err == nil {
				err = errorOf(ev)
			}
			return err
		}},
		{"unsendable answer", fakeOpts{maxFrameLen: 184}, Config{}, // below even the ValueError in its place
			answersAbort(funcCall("big", 0), func() fakeReply { return reply(violation("unexpected resume")) }),
			func(s *Session) error {
				_, err := s.Run(bg, "big()", WithFunctions(NewRegistry().MustRegister("big", func() string { return strings.Repeat("x", 4096) })))
				return err
			}},
		{"rejected answer", fakeOpts{}, Config{},
			answersAbort(funcCall("f", 0), func() fakeReply { return reply(violation("not now")) }),
			func(s *Session) error {
				_, err := s.Run(bg, "f()", WithFunctions(NewRegistry().MustRegister("f", func() int { return 1 })))
				return err
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rig := newTelemetryRig(t)
			c.cfg.TracerProvider, c.cfg.MeterProvider = rig.tp, rig.mp
			s, _ := startFakeOpts(t, c.o, c.cfg, c.h)
			if err := c.do(s); err == nil {
				t.Fatal("the run did not fail")
			}
			if st := s.State(); st != StateIdle {
				t.Fatalf("state %v, want idle (the feed aborted)", st)
			}
			s.Close()
			run := runSpanOf(t, rig)
			if o := outcomeOf(run); o != "error" || run.Status().Code != codes.Error {
				t.Errorf("run outcome %q, status %v; want error, Error", o, run.Status())
			}
			if n := telemetrytest.HistCount(rig.metrics(t)[MetricRunDuration]); n != 1 {
				t.Errorf("%d runs recorded, want 1", n)
			}
		})
	}
}

// A Feed sent with Do while a feed is suspended is refused by the worker,
// which stays suspended: the suspended run goes on, with its host round
// trip still open, and ends once, when that feed completes. Before, the
// refused Feed ended the run as lost (Error status, the worker was
// fine), and opened a second run, which took the first one's completion
// (with no suspensions) while its host round trip had been cut short.
func TestTelemetryRefusedFeedWhileSuspendedKeepsTheRun(t *testing.T) {
	rig := newTelemetryRig(t)
	s := realSession(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp})
	ctx := context.Background()
	if ev, err := s.Feed(ctx, "f(1) + 1"); err != nil || ev.Body.EventKind() != message.KindFunctionCall {
		t.Fatalf("feed: %v %v", ev, err)
	}
	ev, err := s.Do(ctx, &message.Feed{Code: "2"})
	if err != nil || ev.Body.EventKind() != message.KindError || s.State() != StateSuspended {
		t.Fatalf("a Feed while suspended: %v %v, state %v; want a refusal, still suspended", ev, err, s.State())
	}
	if ev, err := s.Resume(ctx, Return(41)); err != nil || ev.Body.EventKind() != message.KindComplete {
		t.Fatalf("resume: %v %v", ev, err)
	}
	s.Close()
	// Negotiation may have opened (and failed) a session first: count
	// runs and host spans only.
	if s, e := len(rig.spans.Started()), len(rig.spans.Ended()); s != e {
		t.Fatalf("%d spans started, %d ended", s, e)
	}
	var runs, hosts []sdktrace.ReadOnlySpan
	for _, sp := range rig.spans.Ended() {
		switch sp.Name() {
		case SpanRun:
			runs = append(runs, sp)
		case SpanHost:
			hosts = append(hosts, sp)
		}
	}
	if len(runs) != 1 || len(hosts) != 1 {
		t.Fatalf("%d run spans and %d host spans, want 1 each", len(runs), len(hosts))
	}
	run := runs[0]
	if o := outcomeOf(run); o != "ok" || run.Status().Code == codes.Error {
		t.Errorf("run outcome %q, status %v; want ok", o, run.Status())
	}
	for _, kv := range run.Attributes() {
		if kv.Key == AttrSuspensions && kv.Value.AsInt64() != 1 {
			t.Errorf("run suspensions %d, want 1", kv.Value.AsInt64())
		}
	}
	m := rig.metrics(t)
	if n := telemetrytest.HistCount(m[MetricRunDuration]); n != 1 {
		t.Errorf("%d runs recorded, want 1", n)
	}
	if n := telemetrytest.HistCount(m[MetricExtCallDuration]); n != 1 {
		t.Errorf("%d host round trips recorded, want 1", n)
	}
}
