package child

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gomonty/monty/codec"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
)

// streamChild runs Serve over real byte pipes, as `montygo subprocess`
// does over stdio.
type streamChild struct {
	in     *io.PipeWriter // the child's stdin
	out    *io.PipeReader // the child's stdout
	fr     *frame.Reader
	eng    *scripted
	result chan error
}

// startStream runs Serve with a scripted engine over a pair of pipes.
func startStream(t *testing.T) *streamChild {
	t.Helper()
	return startStreamCapped(t, 0)
}

// startStreamCapped is startStream over a connection whose own frame cap
// is maxFrameLen (0: the protocol's).
func startStreamCapped(t *testing.T, maxFrameLen int) *streamChild {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &streamChild{in: inW, out: outR, fr: frame.NewReader(outR, 0), eng: &scripted{gate: make(chan struct{})}, result: make(chan error, 1)}
	conn := transport.NewStream(inR, outW, maxFrameLen)
	go func() {
		err := Serve(context.Background(), conn, c.eng, Options{})
		conn.Close()
		c.result <- err
	}()
	t.Cleanup(func() { inW.Close(); outR.Close(); <-c.result })
	return c
}

func (c *streamChild) write(t *testing.T, b []byte) {
	t.Helper()
	if _, err := c.in.Write(b); err != nil {
		t.Fatal(err)
	}
}

func (c *streamChild) event(t *testing.T) *message.ChildEvent {
	t.Helper()
	b, err := c.fr.ReadFrame()
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	ev, err := codecv4.DecodeEvent(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func prefix(n uint32) []byte { return binary.LittleEndian.AppendUint32(nil, n) }

func request(r message.Request) []byte {
	b, _ := codecv4.Codec.AppendRequest(nil, &message.ParentRequest{Body: r})
	return append(prefix(uint32(len(b))), b...)
}

func wantExit(t *testing.T, c *streamChild, code protocol.ExitCode) {
	t.Helper()
	err := <-c.result
	c.result <- err
	var ee *ExitError
	if code == protocol.ExitOK {
		if err != nil {
			t.Fatalf("ended with %v, want a clean end", err)
		}
		return
	}
	if !errors.As(err, &ee) || ee.Code != code {
		t.Fatalf("ended with %v, want exit %d", err, code)
	}
}

func TestHostileParent(t *testing.T) {
	fatal := func(t *testing.T, c *streamChild, text string) {
		t.Helper()
		ev := c.event(t)
		if f, ok := ev.Body.(*message.FatalError); !ok || f.Message != text || ev.MaxSuspensions != nil {
			t.Fatalf("got %s, want FatalError %q", describe(ev), text)
		}
	}
	t.Run("truncated prefix", func(t *testing.T) {
		c := startStream(t)
		c.write(t, []byte{5, 0})
		c.in.Close()
		fatal(t, c, "malformed request frame: stream ended mid-frame")
		wantExit(t, c, protocol.ExitProtocol)
	})
	t.Run("truncated body", func(t *testing.T) {
		c := startStream(t)
		c.write(t, append(prefix(10), 1, 2, 3))
		c.in.Close()
		fatal(t, c, "malformed request frame: stream ended mid-frame")
		wantExit(t, c, protocol.ExitProtocol)
	})
	t.Run("oversized prefix", func(t *testing.T) {
		c := startStream(t)
		c.write(t, prefix(protocol.MaxFrameLen+1))
		fatal(t, c, "malformed request frame: frame of 268435457 bytes exceeds maximum of 268435456 bytes")
		wantExit(t, c, protocol.ExitProtocol)
	})
	// Once an interpreter exists the worker stamps the framing FatalError
	// as it stamps every event (the released worker does: checked against
	// it in state Ready and Suspended).
	for _, code := range []string{"print:x", "call"} {
		t.Run("truncated frame in a session: "+code, func(t *testing.T) {
			c := startStream(t)
			c.write(t, request(&message.Configure{ProtocolVersion: 4}))
			mustKind(t, c.event(t), message.KindOk)
			c.write(t, request(&message.Feed{Code: code}))
			for c.event(t).Body.EventKind() == message.KindPrint {
			}
			c.write(t, append(prefix(10), 1, 2, 3))
			c.in.Close()
			ev := c.event(t)
			if f, ok := ev.Body.(*message.FatalError); !ok || f.Message != "malformed request frame: stream ended mid-frame" ||
				ev.MaxSuspensions == nil || *ev.MaxSuspensions != protocol.DefaultMaxSuspensions {
				t.Fatalf("got %s (max_suspensions %v), want the stamped FatalError", describe(ev), ev.MaxSuspensions)
			}
			wantExit(t, c, protocol.ExitProtocol)
		})
	}
	t.Run("garbage frame, then the session lives on", func(t *testing.T) {
		c := startStream(t)
		c.write(t, request(&message.Configure{ProtocolVersion: 4}))
		mustKind(t, c.event(t), message.KindOk)
		c.write(t, request(&message.Feed{Code: "call"}))
		mustKind(t, c.event(t), message.KindFunctionCall)
		for _, g := range [][]byte{{0xff, 0xff, 0xff}, {0x22, 0x05, 0x08}, {0x1a, 0x02, 0x0a, 0x80}} {
			c.write(t, append(prefix(uint32(len(g))), g...))
			ev := c.event(t)
			e, ok := ev.Body.(*message.Error)
			if !ok || e.Exception.Type != "RuntimeError" || len(e.Exception.Msg()) < len(pv+"malformed request: ") ||
				e.Exception.Msg()[:len(pv+"malformed request: ")] != pv+"malformed request: " || ev.MaxSuspensions != nil {
				t.Fatalf("garbage %x: got %s", g, describe(ev))
			}
		}
		c.write(t, prefix(0))
		if ev := c.event(t); describe(ev) != "Error RuntimeError: "+pv+"request has no kind" || ev.MaxSuspensions != nil {
			t.Fatalf("empty frame: %s", describe(ev))
		}
		// Still suspended on the same call.
		r := &message.ResumeCall{CallID: 0, Result: &message.ExtResult{Kind: message.ResultFuture}}
		b, _ := codecv4.Codec.AppendRequest(nil, &message.ParentRequest{Body: r})
		c.write(t, append(prefix(uint32(len(b))), b...))
		mustKind(t, c.event(t), message.KindComplete)
		c.in.Close()
		wantExit(t, c, protocol.ExitOK)
	})
	t.Run("end of stream at a frame boundary", func(t *testing.T) {
		c := startStream(t)
		c.write(t, request(&message.Configure{ProtocolVersion: 4}))
		mustKind(t, c.event(t), message.KindOk)
		c.in.Close()
		wantExit(t, c, protocol.ExitOK)
	})
	t.Run("broken stdout", func(t *testing.T) {
		c := startStream(t)
		c.out.Close()
		c.write(t, request(&message.Configure{ProtocolVersion: 4}))
		wantExit(t, c, protocol.ExitStdoutBroken)
	})
	// Sandbox code that prints forever to a parent that has gone away is
	// stopped (its turn's context ends) and the child exits 3, as the
	// native worker's print fails and ends the turn; it does not run on
	// with its output dropped.
	t.Run("broken stdout while printing", func(t *testing.T) {
		c := startStream(t)
		c.write(t, request(&message.Configure{ProtocolVersion: 4, PrintFlushIntervalMs: new(uint32)}))
		mustKind(t, c.event(t), message.KindOk)
		c.out.Close()
		c.write(t, request(&message.Feed{Code: "printloop"}))
		select {
		case err := <-c.result:
			c.result <- err
		case <-time.After(20 * time.Second):
			close(c.eng.gate)
			t.Fatal("the child kept running after its stdout broke")
		}
		wantExit(t, c, protocol.ExitStdoutBroken)
	})
	t.Run("version mismatch", func(t *testing.T) {
		c := startStream(t)
		c.write(t, request(&message.Configure{ProtocolVersion: 3}))
		fatal(t, c, "unsupported protocol version 3 (server supports protocol versions 2 to 4, make sure you are using the correct client version)")
		wantExit(t, c, protocol.ExitFatal)
	})
	t.Run("shutdown", func(t *testing.T) {
		c := startStream(t)
		c.write(t, request(&message.Shutdown{}))
		if ev := c.event(t); ev.Body.EventKind() != message.KindOk || ev.MaxSuspensions != nil {
			t.Fatal(describe(ev))
		}
		wantExit(t, c, protocol.ExitOK)
	})
}

// A context that ends closes the connection and ends Serve.
func TestServeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	conn := newChanConn()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, conn, &scripted{}, Options{}) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// Events that do not fit the frame cap: a result is replaced by an Error
// (the session is kept); a suspension that cannot be announced aborts the
// feed at that point.
func TestOversizeEvents(t *testing.T) {
	p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: 512}})
	p.configure()
	ev := p.feed("bigresult:2000")
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception.Type != "RuntimeError" || !strings.HasPrefix(e.Exception.Msg(), "result frame of ") ||
		!strings.HasSuffix(e.Exception.Msg(), " bytes exceeds the maximum of 512 bytes") || ev.MaxSuspensions == nil {
		t.Fatalf("big result: %s", describe(ev))
	}
	mustKind(t, p.feed("print:ok"), message.KindComplete)
	ev = p.feed("bigcall:2000")
	e, ok = ev.Body.(*message.Error)
	if !ok || !strings.HasPrefix(e.Exception.Msg(), "argument frame of ") || !strings.HasSuffix(e.Exception.Msg(), " bytes exceeds the maximum of 512 bytes") {
		t.Fatalf("big call: %s", describe(ev))
	}
	// The feed was aborted: the session is idle again.
	mustKind(t, p.feed("print:ok"), message.KindComplete)
}

// A frame within the cap that needs more than the decode budget is a
// malformed request; the session lives on.
func TestDecodeBudget(t *testing.T) {
	p := startChild(t, 4, Options{Limits: codec.Limits{MaxDecodeBytes: 4096}})
	p.configure()
	f := &message.Feed{Code: "print:x"}
	big := value.Graph{}
	var ids []value.NodeID
	for i := 0; i < 2000; i++ {
		ids = append(ids, big.Add(value.Int(int64(i))))
	}
	f.Values = big
	f.Inputs = []message.NamedRef{{Name: "x", Value: ids[0]}}
	b, err := p.codec.AppendRequest(nil, &message.ParentRequest{Body: f})
	if err != nil {
		t.Fatal(err)
	}
	ev := p.raw(b)
	if e, ok := ev.Body.(*message.Error); !ok || !strings.Contains(e.Exception.Msg(), "malformed request: ") ||
		!strings.Contains(e.Exception.Msg(), "frame exceeds decode memory budget") {
		t.Fatalf("got %s", describe(ev))
	}
	mustKind(t, p.feed("print:ok"), message.KindComplete)
}

// A DumpResult over the frame cap is replaced by the contract's Error
// (§8: "result frame of {len} bytes exceeds the maximum of {max} bytes"),
// and a suspended session stays suspended, as for any other turn-ending
// event that does not fit.
func TestOversizeDump(t *testing.T) {
	p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: 512}})
	p.configure()
	mustKind(t, p.feed("fatdump:600 call"), message.KindFunctionCall)
	ev := p.do(&message.Dump{})
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception.Type != "RuntimeError" || !strings.HasPrefix(e.Exception.Msg(), "result frame of ") ||
		!strings.HasSuffix(e.Exception.Msg(), " bytes exceeds the maximum of 512 bytes") || ev.MaxSuspensions == nil {
		t.Fatalf("big dump: %s", describe(ev))
	}
	mustKind(t, resumeNone(p, 0), message.KindComplete)
}

// A Load whose re-announced suspension does not fit the frame cap is
// refused and leaves the state as it was (§12): the engine drops what it
// loaded, a child that had no session still has none, and a configured
// one keeps its Configure's limits, not the dump's.
func TestOversizeReannouncementLeavesTheState(t *testing.T) {
	const refusal = "protocol violation: argument frame of "
	t.Run("no session", func(t *testing.T) {
		p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: 512}})
		ev := p.do(&message.Load{State: []byte("dump:bigcall:2000")})
		if e, ok := ev.Body.(*message.Error); !ok || !strings.HasPrefix(e.Exception.Msg(), refusal) || ev.MaxSuspensions != nil {
			t.Fatalf("Load: %s", describe(ev))
		}
		if got := describe(p.feed("print:x")); got != "Error RuntimeError: protocol violation: session has not been configured" {
			t.Fatalf("Feed after the refusal: %s", got)
		}
		if p.eng.resets != 1 {
			t.Fatalf("engine reset %d times, want 1 (the loaded session dropped)", p.eng.resets)
		}
		mustKind(t, p.do(&message.Load{State: []byte("dump:")}), message.KindOk)
	})
	t.Run("configured", func(t *testing.T) {
		p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: 512}})
		ms := uint64(3)
		mustKind(t, p.do(&message.Configure{ProtocolVersion: 4, Limits: &message.ResourceLimits{MaxSuspensions: &ms}}), message.KindOk)
		ev := p.do(&message.Load{State: []byte("dump:bigcall:2000")})
		if e, ok := ev.Body.(*message.Error); !ok || !strings.HasPrefix(e.Exception.Msg(), refusal) || ev.MaxSuspensions != nil {
			t.Fatalf("Load: %s", describe(ev))
		}
		if p.eng.cfg == nil || p.eng.cfg.Limits == nil || *p.eng.cfg.Limits.MaxSuspensions != 3 {
			t.Fatal("the engine lost the Configure")
		}
		ev = p.feed("print:x")
		mustKind(t, ev, message.KindComplete)
		if ev.MaxSuspensions == nil || *ev.MaxSuspensions != 3 {
			t.Fatalf("max_suspensions %v after the refusal, want the Configure's 3", ev.MaxSuspensions)
		}
	})
}

// A suspension over the cap whose abort is not answered with an Error
// leaves no resume point: FatalError "response frame of {len} bytes
// exceeds maximum of {max} bytes" and exit 76 (§8).
func TestOversizeSuspensionAbortFails(t *testing.T) {
	p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: 512}})
	p.configure()
	ev := p.feed("badabort bigcall:2000")
	f, ok := ev.Body.(*message.FatalError)
	if !ok || !strings.HasPrefix(f.Message, "response frame of ") || !strings.HasSuffix(f.Message, " bytes exceeds maximum of 512 bytes") {
		t.Fatalf("got %s", describe(ev))
	}
	if n := atoi(strings.TrimSuffix(strings.TrimPrefix(f.Message, "response frame of "), " bytes exceeds maximum of 512 bytes")); n <= 2000 {
		t.Fatalf("%q does not give the frame's length", f.Message)
	}
	var ee *ExitError
	if err := p.exit(); !errors.As(err, &ee) || ee.Code != protocol.ExitProtocol {
		t.Fatalf("ended with %v, want exit 76", err)
	}
}

// An engine error whose text is not UTF-8 (an inner worker's stderr, a
// path) still reaches the parent as the FatalError it ends with, U+FFFD in
// place of the bad bytes, at every version; before, the FatalError could
// not be encoded and the child reported "response frame cannot be
// encoded" with the protocol-violation exit code instead.
func TestEngineErrorTextIsMadeUTF8(t *testing.T) {
	for _, v := range []uint32{2, 4, 5} {
		p := startChild(t, v, Options{Versions: []uint32{v}})
		p.configure()
		ev := p.feed("fail:inner_worker")
		f, ok := ev.Body.(*message.FatalError)
		if !ok || f.Message != "engine failed: inner\uFFFDworker" {
			t.Fatalf("v%d: got %s, want FatalError %q", v, describe(ev), "engine failed: inner\uFFFDworker")
		}
		var ee *ExitError
		if err := p.exit(); !errors.As(err, &ee) || ee.Code != protocol.ExitFatal {
			t.Errorf("v%d: exit %v, want code %d", v, err, protocol.ExitFatal)
		}
	}
}

// A connection whose own frame cap is below the protocol's (a stream or
// WebSocket built with a smaller MaxFrameLen, while Options.Limits are
// left zero) bounds what Serve sends: an event over it is handled as the
// contract handles any event over the cap (a result becomes the "result
// frame" Error, the session is kept), not as a broken output stream.
func TestConnFrameCapBoundsEvents(t *testing.T) {
	c := startStreamCapped(t, 512)
	c.write(t, request(&message.Configure{ProtocolVersion: 4}))
	mustKind(t, c.event(t), message.KindOk)
	c.write(t, request(&message.Feed{Code: "bigresult:2000"}))
	ev := c.event(t)
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception.Type != "RuntimeError" || !strings.HasPrefix(e.Exception.Msg(), "result frame of ") ||
		!strings.HasSuffix(e.Exception.Msg(), " bytes exceeds the maximum of 512 bytes") {
		t.Fatalf("big result: %s", describe(ev))
	}
	c.write(t, request(&message.Feed{Code: "bigcall:2000"}))
	ev = c.event(t)
	if e, ok := ev.Body.(*message.Error); !ok || !strings.HasPrefix(e.Exception.Msg(), "argument frame of ") ||
		!strings.HasSuffix(e.Exception.Msg(), " bytes exceeds the maximum of 512 bytes") {
		t.Fatalf("big call: %s", describe(ev))
	}
	c.write(t, request(&message.Feed{Code: "print:ok"}))
	for ev = c.event(t); ev.Body.EventKind() == message.KindPrint; ev = c.event(t) {
	}
	mustKind(t, ev, message.KindComplete)
}

// Print output is split into Print events that fit the frame cap when the
// cap is below what the 8 KiB print buffer can hold (a server configured
// with a small MaxFrameLen): the output arrives whole, in order, and the
// session lives on, where an over-cap Print used to end the child with
// status 3 as if the parent were gone.
func TestPrintFitsASmallFrameCap(t *testing.T) {
	for _, version := range []uint32{protocol.Version2, protocol.Version} {
		t.Run("v"+strconv.Itoa(int(version)), func(t *testing.T) {
			c := startStreamCapped(t, 512)
			cd := mustCodec(t, version)
			send := func(r message.Request) {
				t.Helper()
				b, err := cd.AppendRequest(nil, &message.ParentRequest{Body: r})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.in.Write(append(prefix(uint32(len(b))), b...)); err != nil {
					t.Fatal(err)
				}
			}
			next := func() *message.ChildEvent {
				t.Helper()
				b, err := c.fr.ReadFrame()
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if len(b) > 512 {
					t.Fatalf("a frame of %d bytes over the connection's cap", len(b))
				}
				ev, err := cd.DecodeEvent(b, codec.Limits{})
				if err != nil {
					t.Fatal(err)
				}
				return ev
			}
			send(&message.Configure{ProtocolVersion: version, PrintFlushIntervalMs: u32(60000)})
			mustKind(t, next(), message.KindOk)
			// "é" is two bytes: a cut must fall between characters.
			send(&message.Feed{Code: "big:1500 raw:" + strings.Repeat("é", 150) + " err:" + strings.Repeat("e", 100) + " print:end"})
			// The output, one "stream:text|" per run of a stream.
			var got strings.Builder
			last := message.PrintStream(0)
			ev := next()
			for ; ev.Body.EventKind() == message.KindPrint; ev = next() {
				for _, s := range ev.Body.(*message.Print).Segments {
					if !utf8.ValidString(s.Text) {
						t.Fatalf("segment cut inside a character: %q", s.Text)
					}
					if s.Stream != last {
						if last != 0 {
							got.WriteString("|")
						}
						got.WriteString(strconv.Itoa(int(s.Stream)) + ":")
						last = s.Stream
					}
					got.WriteString(s.Text)
				}
			}
			mustKind(t, ev, message.KindComplete)
			want := "1:" + strings.Repeat("x", 1500) + strings.Repeat("é", 150) + "|2:" + strings.Repeat("e", 100) + "\n|1:end\n"
			if got.String() != want {
				t.Fatalf("output %q, want %q", got.String(), want)
			}
			send(&message.Feed{Code: "print:again"})
			for ev = next(); ev.Body.EventKind() == message.KindPrint; ev = next() {
			}
			mustKind(t, ev, message.KindComplete)
		})
	}
}

// An Error over the frame cap (a cap below a protocol violation's text)
// is handled as any turn-ending event over it (§8): it is replaced by the
// "result frame" Error and the session goes on; only when even that does
// not fit does the child end, with exit 76 (§14: "a response that could
// not be sent even in its shortened form"). Before, an over-cap Error
// ended the child at once, and a cap too small for the FatalError too
// recursed until the stack overflowed.
func TestOversizeErrorEvents(t *testing.T) {
	refusal := &message.ChildEvent{Body: violation("failed to load session: not a scripted dump")}
	b, err := mustCodec(t, 4).AppendEvent(nil, refusal)
	if err != nil {
		t.Fatal(err)
	}
	limit := len(b) - 1
	p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: limit}})
	ev := p.do(&message.Load{State: []byte("garbage")})
	want := "result frame of " + strconv.Itoa(len(b)) + " bytes exceeds the maximum of " + strconv.Itoa(limit) + " bytes"
	if e, ok := ev.Body.(*message.Error); !ok || e.Exception.Type != "RuntimeError" || e.Exception.Msg() != want {
		t.Fatalf("over-cap refusal: got %s, want Error %q", describe(ev), want)
	}
	p.configure()
	mustKind(t, p.feed("print:ok"), message.KindComplete)

	for _, limit := range []int{1, 20} {
		p := startChild(t, 4, Options{Limits: codec.Limits{MaxFrameLen: limit}})
		p.conn.in <- request2(t, p, &message.Load{State: []byte("garbage")})
		var ee *ExitError
		if err := p.exit(); !errors.As(err, &ee) || ee.Code != protocol.ExitProtocol {
			t.Fatalf("cap %d: ended with %v, want exit 76", limit, err)
		}
		if n := len(p.conn.out); n != 0 {
			t.Fatalf("cap %d: %d frames over the cap were sent", limit, n)
		}
	}
}

func request2(t *testing.T, p *parent, r message.Request) []byte {
	t.Helper()
	b, err := p.codec.AppendRequest(nil, &message.ParentRequest{Body: r})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
