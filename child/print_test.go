package child

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

func segs(prints []message.Print) []string {
	var out []string
	for _, p := range prints {
		var b strings.Builder
		for i, s := range p.Segments {
			if i > 0 {
				b.WriteString("|")
			}
			b.WriteString(s.Stream.String() + ":" + s.Text)
		}
		out = append(out, b.String())
	}
	return out
}

func configureWith(p *parent, ms *uint32) {
	p.t.Helper()
	mustKind(p.t, p.do(&message.Configure{ProtocolVersion: p.codec.Version(), PrintFlushIntervalMs: ms}), message.KindOk)
}

func u32(v uint32) *uint32 { return &v }

func TestPrintBuffering(t *testing.T) {
	long := u32(60_000) // the timer never fires within a test
	for _, tc := range []struct {
		name     string
		version  uint32
		interval *uint32
		code     string
		want     []string
		end      message.EventKind
	}{
		{"merged before the turn ends", 4, long, "print:a print:b", []string{"stdout:a\nb\n"}, message.KindComplete},
		{"flushed before a suspension", 4, long, "print:before call", []string{"stdout:before\n"}, message.KindFunctionCall},
		{"streams as segments", 4, long, "print:a err:b print:c", []string{"stdout:a\n|stderr:b\n|stdout:c\n"}, message.KindComplete},
		{"protocol 2: one segment per event", 2, long, "print:a err:b print:c", []string{"stdout:a\n", "stderr:b\n", "stdout:c\n"}, message.KindComplete},
		{"line mode", 4, u32(0), "print:a raw:b print:c raw:tail", []string{"stdout:a\n", "stdout:bc\n", "stdout:tail"}, message.KindComplete},
		{"line mode across streams", 4, u32(0), "raw:a err:b", []string{"stdout:a|stderr:b\n"}, message.KindComplete},
		{"threshold", 4, long, "big:20000", []string{"stdout:" + strings.Repeat("x", 8192), "stdout:" + strings.Repeat("x", 8192), "stdout:" + strings.Repeat("x", 3616)}, message.KindComplete},
		{"threshold in line mode", 4, u32(0), "big:9000", []string{"stdout:" + strings.Repeat("x", 8192), "stdout:" + strings.Repeat("x", 808)}, message.KindComplete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startChild(t, tc.version, Options{Versions: []uint32{tc.version}})
			configureWith(p, tc.interval)
			mustKind(t, p.feed(tc.code), tc.end)
			if got := segs(p.prints); strings.Join(got, "¶") != strings.Join(tc.want, "¶") {
				t.Fatalf("prints %q, want %q", got, tc.want)
			}
		})
	}
}

// A long write is cut at character boundaries, so no event holds more
// than 8192 bytes and no character is split.
func TestPrintCutsAtCharacterBoundaries(t *testing.T) {
	p := startChild(t, 4, Options{})
	configureWith(p, u32(60_000))
	text := strings.Repeat("€", 5000) // 3 bytes each
	mustKind(t, p.feed("raw:"+text), message.KindComplete)
	var all strings.Builder
	for _, pr := range p.prints {
		n := 0
		for _, s := range pr.Segments {
			n += len(s.Text)
			all.WriteString(s.Text)
		}
		if n > protocol.PrintFlushThreshold || n%3 != 0 {
			t.Fatalf("event of %d bytes", n)
		}
	}
	if all.String() != text {
		t.Fatal("output changed")
	}
}

// With the timer on, output of a turn that goes quiet is released without
// waiting for the turn to end.
func TestPrintTimerReleasesQuietOutput(t *testing.T) {
	p := startChild(t, 4, Options{})
	configureWith(p, nil) // the default 5 ms
	body, _ := p.codec.AppendRequest(nil, &message.ParentRequest{Body: &message.Feed{Code: "raw:early block"}})
	p.conn.in <- body
	ev, err := p.codec.DecodeEvent(<-p.conn.out, codecLimits)
	if err != nil {
		t.Fatal(err)
	}
	if got := segs([]message.Print{*ev.Body.(*message.Print)}); got[0] != "stdout:early" {
		t.Fatalf("got %q", got)
	}
	p.eng.gate <- struct{}{}
	ev, _ = p.codec.DecodeEvent(<-p.conn.out, codecLimits)
	mustKind(t, ev, message.KindComplete)
}

func TestEagerAwait(t *testing.T) {
	ret := func(id uint32) message.FutureResult {
		return message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn}}
	}
	withNone := func(rs ...message.FutureResult) *message.ResumeFutures {
		r := &message.ResumeFutures{Results: rs}
		n := r.Values.Add(value.None())
		for i := range r.Results {
			if r.Results[i].Result.Kind == message.ResultReturn {
				r.Results[i].Result.Value = n
			}
		}
		return r
	}
	const exact = pv + "eager ResumeFutures must contain exactly the suspended call id"
	for _, tc := range []struct {
		name string
		req  *message.ResumeFutures
		text string
	}{
		{"empty", &message.ResumeFutures{}, exact},
		{"wrong id", withNone(ret(9)), exact},
		{"two entries", withNone(ret(0), ret(0)), exact},
		{"future", withNone(message.FutureResult{CallID: 0, Result: &message.ExtResult{Kind: message.ResultFuture}}), pv + "eager coroutine must resolve to a value or exception"},
		{"not_found", withNone(message.FutureResult{CallID: 0, Result: &message.ExtResult{Kind: message.ResultNotFound, Name: "f"}}), pv + "eager coroutine must resolve to a value or exception"},
		{"no result", &message.ResumeFutures{Results: []message.FutureResult{{CallID: 0}}}, pv + "invalid results: missing required field FutureResult.result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startChild(t, 4, Options{})
			p.configure()
			ev := p.feed("eager")
			if fc := ev.Body.(*message.FunctionCall); !fc.AllowEagerAwait {
				t.Fatal("flag lost")
			}
			ev = p.do(tc.req)
			mustKind(t, ev, message.KindError)
			if got := ev.Body.(*message.Error).Exception.Msg(); got != tc.text {
				t.Fatalf("got %q, want %q", got, tc.text)
			}
			// The suspension is intact: a valid eager reply works.
			mustKind(t, p.do(withNone(ret(0))), message.KindComplete)
		})
	}
	t.Run("not eager", func(t *testing.T) {
		p := startChild(t, 4, Options{})
		p.configure()
		mustKind(t, p.feed("call"), message.KindFunctionCall)
		ev := p.do(withNone(ret(0)))
		if ev.Body.(*message.Error).Exception.Msg() != pv+"ResumeFutures without suspended futures" {
			t.Fatal(describe(ev))
		}
		mustKind(t, resumeNone(p, 0), message.KindComplete)
	})
	t.Run("protocol 2 never offers it", func(t *testing.T) {
		p := startChild(t, 2, Options{Versions: []uint32{2}})
		p.configure()
		if p.feed("eager").Body.(*message.FunctionCall).AllowEagerAwait {
			t.Fatal("flag at protocol 2")
		}
		ev := p.do(withNone(ret(0)))
		if ev.Body.(*message.Error).Exception.Msg() != pv+"ResumeFutures without suspended futures" {
			t.Fatal(describe(ev))
		}
	})
}

// max_suspensions is stored from Configure and echoed (0 included), and
// after a Load taken from the dump; stamps carry the engine's figures.
func TestStampsEchoMaxSuspensions(t *testing.T) {
	p := startChild(t, 4, Options{})
	zero, dur := uint64(0), uint64(5000)
	mustKind(t, p.do(&message.Configure{ProtocolVersion: 4,
		Limits: &message.ResourceLimits{MaxSuspensions: &zero, MaxDurationMicros: &dur}}), message.KindOk)
	ev := p.feed("call")
	if ev.MaxSuspensions == nil || *ev.MaxSuspensions != 0 || ev.MaxDurationMicros == nil || *ev.MaxDurationMicros != 5000 || ev.TotalExecutionMicros != 10 {
		t.Fatalf("stamps %+v", ev)
	}
	mustKind(t, p.do(&message.Reset{}), message.KindOk)
	ev = p.do(&message.Load{State: []byte("dump:call")})
	mustKind(t, ev, message.KindFunctionCall)
	if *ev.MaxSuspensions != 7 || ev.RestoredScriptName == nil || *ev.RestoredScriptName != "restored.py" {
		t.Fatalf("stamps after Load %+v", ev)
	}
	if ev = resumeNone(p, 1); ev.RestoredScriptName != nil || *ev.MaxSuspensions != 7 {
		t.Fatalf("stamps after the resume %+v", ev)
	}
}

// An engine whose interpreter dies without a FatalError (killed, out of
// memory) ends the child with its exit; the output the turn printed before
// the death still reaches the parent, as the native worker's already
// flushed output does, and nothing is written after Serve returns.
func TestPrintFlushedWhenTheEngineDies(t *testing.T) {
	for _, interval := range []*uint32{u32(60_000), nil} {
		p := startChild(t, 4, Options{})
		configureWith(p, interval)
		b, err := p.codec.AppendRequest(nil, &message.ParentRequest{Body: &message.Feed{Code: "print:last raw:words die:65"}})
		if err != nil {
			t.Fatal(err)
		}
		p.conn.in <- b
		var ee *ExitError
		if err := p.exit(); !errors.As(err, &ee) || ee.Code != protocol.ExitOOM {
			t.Fatalf("child ended with %v, want exit 65", err)
		}
		var got []string
		for len(p.conn.out) > 0 {
			ev, err := p.codec.DecodeEvent(<-p.conn.out, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			pr, ok := ev.Body.(*message.Print)
			if !ok {
				t.Fatalf("child sent %s after the death", describe(ev))
			}
			got = append(got, segs([]message.Print{*pr})...)
		}
		if strings.Join(got, "") != "stdout:last\nwords" {
			t.Fatalf("prints %q, want the turn's output", got)
		}
	}
}

// TestPrintTinyWritesLinear shows an engine printing one byte at a time
// (an interpreter that forwards every write) costing work and memory
// linear in its output. Each write was appended to the buffered segment
// with string concatenation, copying the whole segment: 1 MiB of one-byte
// prints took some 16 s and allocated 4 GiB.
func TestPrintTinyWritesLinear(t *testing.T) {
	var got strings.Builder
	p := &printer{interval: time.Hour, emit: func(pr *message.Print) error {
		for _, s := range pr.Segments {
			got.WriteString(s.Text)
		}
		return nil
	}}
	p.begin()
	const n = 64 << 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		p.Print(message.StreamStdout, "x")
	}
	p.end(func() error { return nil })
	runtime.ReadMemStats(&after)
	if got.Len() != n {
		t.Fatalf("printed %d bytes, want %d", got.Len(), n)
	}
	// Linear: a few times the output (the segments' strings and their
	// growth), nowhere near the 268 MB the concatenation allocated.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16*n {
		t.Fatalf("%d bytes of one-byte prints allocated %d bytes", n, alloc)
	}
}

// badPrinter prints text that is not UTF-8 before running the feed.
type badPrinter struct{ *scripted }

func (e *badPrinter) Feed(ctx context.Context, f *message.Feed, out Output) (message.Event, error) {
	out.Print(message.StreamStdout, "a\xffb\n")
	out.Print(message.StreamStderr, "\xe2\x82")
	return e.scripted.Feed(ctx, f, out)
}

// TestPrintNotUTF8IsReplaced shows an engine's print output that is not
// UTF-8 sent with U+FFFD in place of the bad bytes. The Print event could
// not be encoded (a frame carries only UTF-8), and the child took the
// failure for a broken stdout: it ended the turn and exited with status 3.
func TestPrintNotUTF8IsReplaced(t *testing.T) {
	for _, v := range []uint32{protocol.Version2, protocol.Version, protocol.Version5} {
		conn := newChanConn()
		eng := &badPrinter{scripted: &scripted{gate: make(chan struct{})}}
		done := make(chan error, 1)
		go func() { done <- Serve(context.Background(), conn, eng, Options{Versions: []uint32{v}}) }()
		p := &parent{t: t, conn: conn, eng: eng.scripted, codec: mustCodec(t, v), result: done}
		p.configure()
		mustKind(t, p.feed("print:x"), message.KindComplete)
		if got, want := strings.Join(segs(p.prints), "|"), "stdout:a\ufffdb\n|stderr:\ufffd|stdout:x\n"; got != want {
			t.Errorf("v%d: prints %q, want %q", v, got, want)
		}
		mustKind(t, p.feed("print:y"), message.KindComplete)
		conn.Close()
		if err := <-done; err != nil {
			t.Errorf("v%d: Serve: %v", v, err)
		}
	}
}
