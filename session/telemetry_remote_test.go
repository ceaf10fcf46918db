package session_test

import (
	"context"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/gomonty/monty/internal/telemetrytest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/value"
)

// recordedSpans checks that every span started was ended, and returns
// the ended ones by name.
func recordedSpans(t *testing.T, rec *tracetest.SpanRecorder) map[string][]sdktrace.ReadOnlySpan {
	t.Helper()
	for _, sp := range rec.Started() {
		if sp.(sdktrace.ReadOnlySpan).EndTime().IsZero() {
			t.Errorf("span %s started and never ended", sp.Name())
		}
	}
	if s, e := len(rec.Started()), len(rec.Ended()); s != e {
		t.Errorf("%d spans started, %d ended", s, e)
	}
	out := map[string][]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		out[sp.Name()] = append(out[sp.Name()], sp)
	}
	return out
}

func attrOf(sp sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	for _, kv := range sp.Attributes() {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// A remote session resumed on a new connection after a ShutdownDump
// (a drain) keeps one run span across the resume: the request re-sent
// on the new connection is the same turn, not a new feed nor a second
// suspension, so no span is left open, no run is reported lost, and the
// run's suspensions are the ones the sandbox made.
func TestTelemetryRemoteResumeIsOneTurn(t *testing.T) {
	for _, c := range []struct {
		name string
		// drainOn is the request the first endpoint answers with a ShutdownDump.
		drainFeed bool
	}{
		{"drained on a resume", false},
		{"drained on a feed", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			defer tp.Shutdown(context.Background())
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer mp.Shutdown(context.Background())
			var replied atomic.Int64 // events the endpoints wrote
			counted := func(f func(message.Request) []message.Event) func(message.Request) []message.Event {
				return func(req message.Request) []message.Event {
					evs := f(req)
					replied.Add(int64(len(evs)))
					return evs
				}
			}
			dump := []byte("opaque signed dump")
			a := newScripted(t, counted(func(req message.Request) []message.Event {
				switch req.(type) {
				case *message.Configure:
					return []message.Event{&message.Ok{}}
				case *message.Feed:
					if c.drainFeed {
						return []message.Event{&message.ShutdownDump{Dump: &dump}}
					}
					return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 1}}
				}
				return []message.Event{&message.ShutdownDump{Dump: &dump}}
			}))
			b := newScripted(t, counted(func(req message.Request) []message.Event {
				switch r := req.(type) {
				case *message.Configure:
					return []message.Event{&message.Ok{}}
				case *message.Load:
					if c.drainFeed {
						return []message.Event{&message.Ok{}}
					}
					return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 1}}
				case *message.Feed:
					return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 1}}
				case *message.ResumeCall:
					if r.CallID == 1 {
						return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 2}}
					}
					g := value.Graph{}
					return []message.Event{&message.Complete{Value: g.Add(value.Int(42)), Values: g}}
				}
				return nil
			}))
			s := startRemote(t, session.RemoteLauncher{URL: a.url, Pick: func() string { return b.url }},
				session.Config{TracerProvider: tp, MeterProvider: mp})
			ctx := context.Background()
			if _, err := s.Feed(ctx, "ask() + ask()"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Resume(ctx, session.Return(7)); err != nil {
				t.Fatal(err)
			}
			ev, err := s.Resume(ctx, session.Return(8))
			if err != nil || ev.Body.EventKind() != message.KindComplete || s.Resumed() != 1 {
				t.Fatalf("%v %v (resumes %d)", ev, err, s.Resumed())
			}
			s.Close()
			spans := recordedSpans(t, rec)
			if n := len(spans[session.SpanRun]); n != 1 {
				t.Fatalf("%d run spans, want 1", n)
			}
			run := spans[session.SpanRun][0]
			if o := attrOf(run, session.AttrOutcome).AsString(); o != "ok" || run.Status().Code == codes.Error {
				t.Errorf("run outcome %q, status %v; want ok", o, run.Status())
			}
			if n := attrOf(run, session.AttrSuspensions).AsInt64(); n != 2 {
				t.Errorf("run suspensions %d, want 2", n)
			}
			if n := len(spans[session.SpanHost]); n != 2 {
				t.Errorf("%d host spans, want 2", n)
			}
			// Every frame on either connection is counted, the resume's
			// Configure and Load and their answers included.
			a.mu.Lock()
			b.mu.Lock()
			requests := len(a.got) + len(b.got)
			b.mu.Unlock()
			a.mu.Unlock()
			m := telemetrytest.Collect(t, reader)[session.MetricWireFrameBytes]
			if n := telemetrytest.HistCount(m, session.AttrDirection.String("sent")); n != uint64(requests) {
				t.Errorf("%d frames counted sent, the endpoints read %d", n, requests)
			}
			if n := telemetrytest.HistCount(m, session.AttrDirection.String("received")); n != uint64(replied.Load()) {
				t.Errorf("%d frames counted received, the endpoints wrote %d", n, replied.Load())
			}
		})
	}
}

// The Configure and Load that resume a drained remote session on a new
// connection are part of the turn they resume, and carry its traceparent
// (the run span's) like the request re-sent after them: the docs promise
// the current span's traceparent with each request. Before, the resume's
// Configure and Load went out with none.
func TestTelemetryRemoteResumeCarriesTheTraceParent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	dump := []byte("opaque signed dump")
	a := newScripted(t, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure:
			return []message.Event{&message.Ok{}}
		case *message.Feed:
			return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 1}}
		}
		return []message.Event{&message.ShutdownDump{Dump: &dump}}
	})
	b := newScripted(t, func(req message.Request) []message.Event {
		switch req.(type) {
		case *message.Configure:
			return []message.Event{&message.Ok{}}
		case *message.Load:
			return []message.Event{&message.FunctionCall{FunctionName: "ask", CallID: 1}}
		case *message.ResumeCall:
			g := value.Graph{}
			return []message.Event{&message.Complete{Value: g.Add(value.Int(42)), Values: g}}
		}
		return nil
	})
	s := startRemote(t, session.RemoteLauncher{URL: a.url, Pick: func() string { return b.url }},
		session.Config{TracerProvider: tp})
	ctx := context.Background()
	if _, err := s.Feed(ctx, "ask()"); err != nil {
		t.Fatal(err)
	}
	if ev, err := s.Resume(ctx, session.Return(7)); err != nil || ev.Body.EventKind() != message.KindComplete || s.Resumed() != 1 {
		t.Fatalf("%v %v (resumes %d)", ev, err, s.Resumed())
	}
	s.Close()
	spans := recordedSpans(t, rec)
	if len(spans[session.SpanRun]) != 1 {
		t.Fatalf("%d run spans, want 1", len(spans[session.SpanRun]))
	}
	sc := spans[session.SpanRun][0].SpanContext()
	want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"
	b.mu.Lock()
	got, tps := append([]message.RequestKind(nil), b.got...), append([]string(nil), b.tps...)
	b.mu.Unlock()
	if len(got) != 3 || got[0] != message.KindConfigure || got[1] != message.KindLoad || got[2] != message.KindResumeCall {
		t.Fatalf("the second endpoint read %v", got)
	}
	for i, k := range got {
		if tps[i] != want {
			t.Errorf("%s carried traceparent %q, want the run span's %q", k, tps[i], want)
		}
	}
}
