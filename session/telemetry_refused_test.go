//go:build unix

package session

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/message"
)

// spansNamed is the ended spans of rig called name, every span started
// having ended.
func spansNamed(t *testing.T, rig *telemetryRig, name string) []sdktrace.ReadOnlySpan {
	t.Helper()
	if s, e := len(rig.spans.Started()), len(rig.spans.Ended()); s != e {
		t.Fatalf("%d spans started, %d ended", s, e)
	}
	return endedNamed(rig, name)
}

// endedNamed is the ended spans of rig called name.
func endedNamed(rig *telemetryRig, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range rig.spans.Ended() {
		if sp.Name() == name {
			out = append(out, sp)
		}
	}
	return out
}

// A Feed refused before it is sent (over the frame cap, or not
// encodable) never reached the worker: it is no run and no turn in the
// metrics (monty.run.*, monty.turn.duration), and its run span, which
// had to exist before the request was encoded (its context travels in
// the frame), ends as an error that says so. An answer refused before it
// is sent is no turn either, and its run goes on. Before, each counted
// as a run (with a zero duration) and a turn.
func TestTelemetryRequestNotSentIsNoRunNorTurn(t *testing.T) {
	rig := newTelemetryRig(t)
	s, f := startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{TracerProvider: rig.tp, MeterProvider: rig.mp},
		func(req *message.ParentRequest) fakeReply {
			if _, ok := req.Body.(*message.Feed); ok {
				return reply(funcCall("f", 0))
			}
			return reply(completeInt(1))
		})
	big := strings.Repeat("x", 2000)
	var tl *RequestTooLargeError
	if _, err := s.Feed(bg, big); !errors.As(err, &tl) {
		t.Fatalf("oversize feed: %v", err)
	}
	var ir *InvalidRequestError
	if _, err := s.Feed(bg, "caf\xe9"); !errors.As(err, &ir) {
		t.Fatalf("feed that is not UTF-8: %v", err)
	}
	m := rig.metrics(t)
	for _, name := range []string{MetricRunDuration, MetricRunExecutionTime, MetricRunSuspensions, MetricTurnDuration} {
		if n := telemetrytest.HistCount(m[name]); n != 0 {
			t.Errorf("%s recorded %d times for feeds never sent", name, n)
		}
	}
	runs := endedNamed(rig, SpanRun) // the session span is open
	if len(runs) != 2 {
		t.Fatalf("%d run spans, want 2", len(runs))
	}
	for _, run := range runs {
		if o := outcomeOf(run); o != "error" || run.Status().Code != codes.Error || run.Status().Description != "not sent" {
			t.Errorf("unsent run: outcome %q, status %v; want error, Error \"not sent\"", o, run.Status())
		}
	}

	// An answer too large to send: the run goes on, and that is no turn.
	if _, err := s.Feed(bg, "f()"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Resume(bg, Return(big)); !errors.As(err, &tl) || s.State() != StateSuspended {
		t.Fatalf("oversize resume: %v, state %v", err, s.State())
	}
	if ev, err := s.Resume(bg, Return("small")); err != nil || ev.Body.EventKind() != message.KindComplete {
		t.Fatalf("resume: %v %v", ev, err)
	}
	s.Close()
	if n := f.count(message.KindFeed); n != 1 {
		t.Fatalf("%d feeds reached the worker, want 1", n)
	}
	m = rig.metrics(t)
	if n := telemetrytest.HistCount(m[MetricTurnDuration]); n != 2 {
		t.Errorf("%d turns recorded, want 2 (the feed and the answer sent)", n)
	}
	if n := telemetrytest.HistCount(m[MetricRunDuration]); n != 1 {
		t.Errorf("%d runs recorded, want 1", n)
	}
	if runs := spansNamed(t, rig, SpanRun); len(runs) != 3 || outcomeOf(runs[2]) != "ok" {
		t.Errorf("%d run spans, want 3, the last ok", len(runs))
	}
}

// The host round trip of a suspension answered through Resume, Do or
// AbortFeed is over only once an answer the worker accepts is sent: an
// answer it refuses (a protocol violation; it stays suspended) leaves
// the host span open and monty.ext.call.duration unrecorded, and the
// round trip ends, once, when the accepted answer departs. Before, the
// refused answer's departure ended it.
func TestTelemetryRefusedManualAnswerKeepsTheHostRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name   string
		refuse func(s *Session) (*message.ChildEvent, error)
		accept func(s *Session) (*message.ChildEvent, error)
		last   message.EventKind
	}{
		{"Resume",
			func(s *Session) (*message.ChildEvent, error) { return s.Resume(bg, Return(1)) },
			func(s *Session) (*message.ChildEvent, error) { return s.Resume(bg, Return(2)) },
			message.KindComplete},
		{"Do",
			func(s *Session) (*message.ChildEvent, error) {
				return s.Do(bg, &message.ResumeCall{CallID: 1, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "f"}})
			},
			func(s *Session) (*message.ChildEvent, error) { return s.Resume(bg, Return(2)) },
			message.KindComplete},
		{"AbortFeed",
			func(s *Session) (*message.ChildEvent, error) { return s.AbortFeed(bg, nil) },
			func(s *Session) (*message.ChildEvent, error) { return s.AbortFeed(bg, nil) },
			message.KindError},
	} {
		t.Run(c.name, func(t *testing.T) {
			rig := newTelemetryRig(t)
			answers := 0
			s, _ := startFake(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp}, func(req *message.ParentRequest) fakeReply {
				switch b := req.Body.(type) {
				case *message.Feed:
					return reply(funcCall("f", 1))
				case *message.ResumeCall, *message.AbortFeed:
					answers++
					if answers == 1 {
						return reply(violation("not this answer"))
					}
					if a, ok := b.(*message.AbortFeed); ok {
						return reply(stamp(ev(&message.Error{Exception: a.Exception}), 1000))
					}
					return reply(completeInt(2))
				}
				return reply(violation("unexpected request"))
			})
			if _, err := s.Feed(bg, "f()"); err != nil {
				t.Fatal(err)
			}
			if ev, err := c.refuse(s); err != nil || ev.Body.EventKind() != message.KindError || s.State() != StateSuspended {
				t.Fatalf("refused answer: %v %v, state %v", ev, err, s.State())
			}
			refused := time.Now()
			if ev, err := c.accept(s); err != nil || ev.Body.EventKind() != c.last {
				t.Fatalf("accepted answer: %v %v", ev, err)
			}
			s.Close()
			hosts := spansNamed(t, rig, SpanHost)
			if len(hosts) != 1 {
				t.Fatalf("%d host spans, want 1", len(hosts))
			}
			if end := hosts[0].EndTime(); end.Before(refused) {
				t.Errorf("host span ended %v before the refused answer's reply was read", refused.Sub(end))
			}
			if n := telemetrytest.HistCount(rig.metrics(t)[MetricExtCallDuration]); n != 1 {
				t.Errorf("%d host round trips recorded, want 1", n)
			}
		})
	}
}

// A Feed sent with Do while a feed is suspended is refused and changes
// nothing: the suspended feed's execution clock (protocol 5) is kept.
// Before, it was reset to zero as the Feed was sent.
func TestRefusedFeedWhileSuspendedKeepsTheFeedClock(t *testing.T) {
	s, _ := startFakeOpts(t, fakeOpts{version: 5}, Config{}, func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Feed:
			if req.Body.(*message.Feed).Code == "again" {
				return reply(violation("a feed is suspended"))
			}
			e := funcCall("f", 1)
			e.FeedExecutionMicros = 700_000
			return reply(e)
		}
		return reply(violation("unexpected request"))
	})
	if _, err := s.Feed(bg, "f()"); err != nil {
		t.Fatal(err)
	}
	if got := s.Stamps().FeedExecution; got != 700*time.Millisecond {
		t.Fatalf("feed clock %v after the suspension, want 700ms", got)
	}
	if ev, err := s.Do(bg, &message.Feed{Code: "again"}); err != nil || ev.Body.EventKind() != message.KindError || s.State() != StateSuspended {
		t.Fatalf("a Feed while suspended: %v %v, state %v", ev, err, s.State())
	}
	if got := s.Stamps().FeedExecution; got != 700*time.Millisecond {
		t.Errorf("feed clock %v after a refused Feed, want 700ms (unchanged)", got)
	}
}

// monty.snapshot.bytes counts the dumps loaded: a Load refused, before it
// is sent (over the frame cap) or by the worker (an Error: a feed has
// run), loaded nothing and is not recorded. Before, every Load called
// was, sent or not.
func TestTelemetryRefusedLoadIsNoSnapshot(t *testing.T) {
	rig := newTelemetryRig(t)
	s, _ := startFakeOpts(t, fakeOpts{maxFrameLen: 1024}, Config{TracerProvider: rig.tp, MeterProvider: rig.mp},
		func(req *message.ParentRequest) fakeReply {
			if l, ok := req.Body.(*message.Load); ok {
				if string(l.State) == "refuse" {
					return reply(pyError("RuntimeError", "a feed has run"))
				}
				return reply(ev(&message.Ok{}))
			}
			return reply(violation("unexpected request"))
		})
	var tl *RequestTooLargeError
	if _, err := s.Load(bg, make([]byte, 2000)); !errors.As(err, &tl) {
		t.Fatalf("oversize load: %v", err)
	}
	var pe *PythonError
	if _, err := s.Load(bg, []byte("refuse")); !errors.As(err, &pe) {
		t.Fatalf("refused load: %v", err)
	}
	if _, err := s.Load(bg, []byte("state")); err != nil {
		t.Fatalf("load: %v", err)
	}
	m := rig.metrics(t)
	if n := telemetrytest.HistCount(m[MetricSnapshotBytes], AttrSnapshotOp.String("load")); n != 1 {
		t.Errorf("%d loads recorded, want 1 (the one the worker took)", n)
	}
}

// A run a Reset discards still has its execution time recorded: the
// worker's total when the Reset was sent, less the total when the run
// began. Before, the Reset's reply had zeroed the stamps by the time the
// run ended, so the run counted no execution at all (or was missing
// from monty.run.execution_time while in monty.run.duration).
func TestTelemetryRunDiscardedByResetKeepsItsExecutionTime(t *testing.T) {
	rig := newTelemetryRig(t)
	s, _ := startFake(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp}, func(req *message.ParentRequest) fakeReply {
		switch req.Body.(type) {
		case *message.Feed:
			e := funcCall("f", 1)
			e.TotalExecutionMicros = 250_000
			return reply(e)
		case *message.Reset:
			return reply(ev(&message.Ok{}))
		}
		return reply(violation("unexpected request"))
	})
	if _, err := s.Feed(bg, "f()"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(bg); err != nil {
		t.Fatal(err)
	}
	h, ok := rig.metrics(t)[MetricRunExecutionTime].Data.(metricdata.Histogram[float64])
	if !ok || len(h.DataPoints) != 1 || h.DataPoints[0].Count != 1 || h.DataPoints[0].Sum != 0.25 {
		t.Fatalf("%s: %+v, want one run of 0.25 s", MetricRunExecutionTime, rig.metrics(t)[MetricRunExecutionTime].Data)
	}
}

// A print function that panics mid-turn discards the worker and the panic
// unwinds through the turn: the run ends there, lost (Error status), in
// the spans and in the metrics alike, with no Close needed. Before, the
// turn's end was never recorded: the run span stayed open until Close,
// which then ended it as closed, as if the caller had chosen to.
func TestTelemetryPrintPanicEndsTheRunLost(t *testing.T) {
	for _, tracing := range []bool{true, false} {
		rig := newTelemetryRig(t)
		cfg := Config{MeterProvider: rig.mp, Print: func(message.PrintStream, string) { panic("sink bug") }}
		if tracing {
			cfg.TracerProvider = rig.tp
		} else {
			cfg.TracerProvider = tracenoop.NewTracerProvider()
		}
		s, _ := startFake(t, cfg, func(*message.ParentRequest) fakeReply {
			return reply(ev(&message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "a\n"}}}), completeInt(1))
		})
		func() {
			defer func() {
				if p := recover(); p != "sink bug" {
					t.Fatalf("recovered %v, want the sink's panic", p)
				}
			}()
			s.Feed(bg, "print('a')")
		}()
		if n := telemetrytest.HistCount(rig.metrics(t)[MetricRunDuration]); n != 1 {
			t.Errorf("tracing %v: %d runs recorded before Close, want 1", tracing, n)
		}
		if tracing {
			runs := endedNamed(rig, SpanRun)
			if len(runs) != 1 {
				t.Fatalf("%d run spans ended before Close, want 1", len(runs))
			}
			if o := outcomeOf(runs[0]); o != "lost" || runs[0].Status().Code != codes.Error {
				t.Errorf("run outcome %q, status %v; want lost, Error", o, runs[0].Status())
			}
		}
		s.Close()
		if n := telemetrytest.HistCount(rig.metrics(t)[MetricRunDuration]); n != 1 {
			t.Errorf("tracing %v: %d runs recorded after Close, want 1", tracing, n)
		}
	}
}

// A session closed while a Run's host function runs fails the answer
// before it is sent: that is no turn. The run ends closed, once. Before,
// the answer that never left counted as a turn.
func TestTelemetryAnswerNotSentAfterCloseIsNoTurn(t *testing.T) {
	for _, tracing := range []bool{true, false} {
		rig := newTelemetryRig(t)
		cfg := Config{TracerProvider: rig.tp, MeterProvider: rig.mp}
		if !tracing {
			cfg.TracerProvider = tracenoop.NewTracerProvider()
		}
		s, f := startFake(t, cfg, func(req *message.ParentRequest) fakeReply {
			return reply(funcCall("f", 1))
		})
		reg := NewRegistry().MustRegister("f", func() int {
			s.Close()
			return 1
		})
		if _, err := s.Run(bg, "f()", WithFunctions(reg)); !errors.Is(err, ErrClosed) {
			t.Fatalf("tracing %v: run: %v, want ErrClosed", tracing, err)
		}
		if n := f.count(message.KindResumeCall); n != 0 {
			t.Fatalf("tracing %v: %d answers sent", tracing, n)
		}
		m := rig.metrics(t)
		if n := telemetrytest.HistCount(m[MetricTurnDuration]); n != 1 {
			t.Errorf("tracing %v: %d turns recorded, want 1 (the feed)", tracing, n)
		}
		if n := telemetrytest.HistCount(m[MetricRunDuration]); n != 1 {
			t.Errorf("tracing %v: %d runs recorded, want 1", tracing, n)
		}
		if tracing {
			if o := outcomeOf(runSpanOf(t, rig)); o != "closed" {
				t.Errorf("run outcome %q, want closed", o)
			}
		}
	}
}

// closeOnConvert closes its session when a Feed converts it: the Feed
// has begun, and the session closes before its request is sent.
type closeOnConvert struct{ s *Session }

func (c closeOnConvert) MarshalText() ([]byte, error) {
	c.s.Close()
	return []byte("x"), nil
}

// A Feed that loses the race with Close, after it began and before its
// request was sent, never reached the worker: like a Feed refused unsent
// it is no run and no turn in the metrics, and its run span ends as an
// error, "not sent" (before, it was a run that ended "closed").
func TestTelemetryFeedClosedBeforeSentIsNoRun(t *testing.T) {
	rig := newTelemetryRig(t)
	s, f := startFake(t, Config{TracerProvider: rig.tp, MeterProvider: rig.mp},
		func(*message.ParentRequest) fakeReply { return reply(completeInt(1)) })
	if _, err := s.Feed(bg, "x", Input{Name: "x", Value: closeOnConvert{s}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("feed closed under it: %v, want ErrClosed", err)
	}
	if n := f.count(message.KindFeed); n != 0 {
		t.Fatalf("%d feeds reached the worker, want 0", n)
	}
	m := rig.metrics(t)
	for _, name := range []string{MetricRunDuration, MetricRunExecutionTime, MetricRunSuspensions, MetricTurnDuration} {
		if n := telemetrytest.HistCount(m[name]); n != 0 {
			t.Errorf("%s recorded %d times for a feed never sent", name, n)
		}
	}
	runs := spansNamed(t, rig, SpanRun)
	if len(runs) != 1 {
		t.Fatalf("%d run spans, want 1", len(runs))
	}
	if o := outcomeOf(runs[0]); o != "error" || runs[0].Status().Code != codes.Error || runs[0].Status().Description != "not sent" {
		t.Errorf("unsent run: outcome %q, status %v; want error, Error \"not sent\"", o, runs[0].Status())
	}
}
