//go:build unix

package relay

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// served runs Serve with a relay engine over pipes and returns the
// parent's ends.
type served struct {
	in     *io.PipeWriter
	fr     *frame.Reader
	fw     *frame.Writer
	eng    *Engine
	result chan error
}

func serve(t *testing.T) *served { return serveWith(t, child.Options{}) }

func serveWith(t *testing.T, opts child.Options) *served {
	t.Helper()
	return serveWorker(t, opts, worker.Config{})
}

// serveWorker is serveWith with the inner worker's configuration (its
// binary and logger are set here).
func serveWorker(t *testing.T, opts child.Options, wc worker.Config) *served {
	t.Helper()
	opts.Logger = quiet
	wc.Binary, wc.Logger = testenv.Worker(t), quiet
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &served{in: inW, fr: frame.NewReader(outR, 0), fw: frame.NewWriter(inW, 0), result: make(chan error, 1),
		eng: New(Config{Worker: wc, Logger: quiet})}
	conn := transport.NewStream(inR, outW, 0)
	go func() {
		err := child.Serve(context.Background(), conn, s.eng, opts)
		conn.Close()
		s.result <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close(); <-s.result })
	return s
}

func (s *served) do(t *testing.T, req message.Request) (*message.ChildEvent, []string) {
	t.Helper()
	b, err := codecv4.Codec.AppendRequest(nil, &message.ParentRequest{Body: req})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.fw.WriteFrame(b); err != nil {
		t.Fatal(err)
	}
	var prints []string
	for {
		body, err := s.fr.ReadFrame()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		ev, err := codecv4.DecodeEvent(body, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := ev.Body.(*message.Print); ok {
			for _, seg := range p.Segments {
				prints = append(prints, seg.Text)
			}
			continue
		}
		return ev, prints
	}
}

// A protocol-4 parent drives the released protocol-2 worker through the
// relay: values, prints, call ids and stamps come through.
func TestRelayBridgesVersions(t *testing.T) {
	s := serve(t)
	ms := uint64(3)
	ev, _ := s.do(t, &message.Configure{ProtocolVersion: 4, ScriptName: "bridge.py",
		Limits: &message.ResourceLimits{MaxSuspensions: &ms}})
	if _, ok := ev.Body.(*message.Ok); !ok || ev.MaxSuspensions != nil {
		t.Fatalf("Configure: %+v", ev)
	}
	feed := &message.Feed{Code: "print('hi')\nr = f(x)\n[r, r]"}
	feed.Inputs = []message.NamedRef{{Name: "x", Value: feed.Values.Add(value.Int(41))}}
	ev, prints := s.do(t, feed)
	fc, ok := ev.Body.(*message.FunctionCall)
	if !ok || fc.FunctionName != "f" || len(fc.Args) != 1 || fc.Values.Repr(fc.Args[0]) != "41" {
		t.Fatalf("feed: %+v", ev.Body)
	}
	if strings.Join(prints, "") != "hi\n" || ev.MaxSuspensions == nil || *ev.MaxSuspensions != 3 {
		t.Fatalf("prints %q stamps %+v", prints, ev)
	}
	r := &message.ResumeCall{CallID: fc.CallID, Result: &message.ExtResult{Kind: message.ResultReturn}}
	r.Result.Value = r.Values.Add(value.Int(42))
	ev, _ = s.do(t, r)
	c, ok := ev.Body.(*message.Complete)
	if !ok || c.Values.Repr(c.Value) != "[42, 42]" {
		t.Fatalf("complete: %+v", ev.Body)
	}
	// A violation comes from the state machine, not the worker.
	ev, _ = s.do(t, &message.ResumeNameLookup{Kind: message.LookupUndefined})
	if e, ok := ev.Body.(*message.Error); !ok || e.Exception.Msg() != "protocol violation: ResumeNameLookup without a suspended name lookup" {
		t.Fatalf("violation: %+v", ev.Body)
	}
	// Feed.cwd has no protocol-2 form: refused, and the session lives on.
	ev, _ = s.do(t, &message.Feed{Code: "1", Cwd: "/data"})
	if e, ok := ev.Body.(*message.Error); !ok || !strings.HasPrefix(e.Exception.Msg(), "protocol violation: invalid inputs: ") {
		t.Fatalf("cwd: %+v", ev.Body)
	}
	ev, _ = s.do(t, &message.Feed{Code: "r + 1"})
	if c, ok := ev.Body.(*message.Complete); !ok || c.Values.Repr(c.Value) != "43" {
		t.Fatalf("after: %+v", ev.Body)
	}
}

// When the inner worker dies, the relay ends with its exit: here SIGKILL.
func TestRelayEndsLikeTheInnerWorker(t *testing.T) {
	s := serve(t)
	s.do(t, &message.Configure{ProtocolVersion: 4})
	s.do(t, &message.Feed{Code: "f()"})
	if err := syscall.Kill(s.eng.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b, _ := codecv4.Codec.AppendRequest(nil, &message.ParentRequest{Body: &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultFuture}}})
	s.fw.WriteFrame(b)
	err := <-s.result
	s.result <- err
	var ee *child.ExitError
	if !errors.As(err, &ee) || ee.Signal != syscall.SIGKILL {
		t.Fatalf("got %v", err)
	}
}

// A Configure that session.Config cannot express (an empty script name,
// an explicit zero limit) reaches the inner worker exactly: the relay
// reconfigures it with the outer fields, so the reply is the one the
// worker gives for that Configure directly (for an empty script name the
// released worker's type checker fails).
func TestRelayConfiguresExactly(t *testing.T) {
	zero := uint64(0)
	cfg := func(v uint32) *message.Configure {
		return &message.Configure{ProtocolVersion: v, TypeCheck: true, Limits: &message.ResourceLimits{MaxSuspensions: &zero}}
	}
	feed := &message.Feed{Code: "x: int = 'a'"}

	direct, err := session.Start(context.Background(),
		session.Launch{Launcher: session.ProcessLauncher{Worker: worker.Config{Binary: testenv.Worker(t), Logger: quiet}}},
		session.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	for _, req := range []message.Request{&message.Reset{}, cfg(direct.Version())} {
		if _, err := direct.Do(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	want, err := direct.Do(context.Background(), feed)
	if err != nil {
		t.Fatal(err)
	}

	s := serve(t)
	ev, _ := s.do(t, cfg(4))
	if _, ok := ev.Body.(*message.Ok); !ok {
		t.Fatalf("Configure: %+v", ev.Body)
	}
	ev, _ = s.do(t, feed)
	if describe(ev.Body) != describe(want.Body) || ev.MaxSuspensions == nil || *ev.MaxSuspensions != 0 {
		t.Fatalf("relay %s (max_suspensions %v), worker %s", describe(ev.Body), ev.MaxSuspensions, describe(want.Body))
	}
	// The parent enforces max_suspensions; the relay passes the call on.
	ev, _ = s.do(t, &message.Feed{Code: "f()", SkipTypeCheck: true})
	if _, ok := ev.Body.(*message.FunctionCall); !ok {
		t.Fatalf("feed: %+v", ev.Body)
	}
}

// The max_duration_micros stamp echoes the configured limit exactly, as
// the worker does, also past what a time.Duration holds (about 292
// thousand years), after a Configure and after a Load of the session's
// dump.
func TestRelayEchoesHugeMaxDuration(t *testing.T) {
	for _, us := range []uint64{1<<63/1000 + 1, 1 << 63, ^uint64(0)} {
		s := serve(t)
		ev, _ := s.do(t, &message.Configure{ProtocolVersion: 4, Limits: &message.ResourceLimits{MaxDurationMicros: &us}})
		if _, ok := ev.Body.(*message.Ok); !ok {
			t.Fatalf("Configure: %+v", ev.Body)
		}
		ev, _ = s.do(t, &message.Feed{Code: "1"})
		if _, ok := ev.Body.(*message.Complete); !ok || ev.MaxDurationMicros == nil || *ev.MaxDurationMicros != us {
			t.Fatalf("%d: feed %s stamped max_duration_micros %v", us, describe(ev.Body), ptr(ev.MaxDurationMicros))
		}
		ev, _ = s.do(t, &message.Dump{})
		dr, ok := ev.Body.(*message.DumpResult)
		if !ok {
			t.Fatalf("Dump: %+v", ev.Body)
		}
		s.do(t, &message.Reset{})
		ev, _ = s.do(t, &message.Load{State: dr.State})
		if _, ok := ev.Body.(*message.Ok); !ok || ev.MaxDurationMicros == nil || *ev.MaxDurationMicros != us {
			t.Fatalf("%d: load %s stamped max_duration_micros %v", us, describe(ev.Body), ptr(ev.MaxDurationMicros))
		}
		// A smaller limit after a Reset is echoed as configured.
		s.do(t, &message.Reset{})
		small := uint64(5_000_000)
		s.do(t, &message.Configure{ProtocolVersion: 4, Limits: &message.ResourceLimits{MaxDurationMicros: &small}})
		ev, _ = s.do(t, &message.Feed{Code: "1"})
		if ev.MaxDurationMicros == nil || *ev.MaxDurationMicros != small {
			t.Fatalf("%d: after reset stamped max_duration_micros %v", us, ptr(ev.MaxDurationMicros))
		}
	}
}

func ptr(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}
