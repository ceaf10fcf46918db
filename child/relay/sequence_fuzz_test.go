//go:build unix

package relay

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/codec/peek"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// The hostile parent of `montygo subprocess` and `montygo serve`: a
// sequence of well-formed and malformed requests, in any order, against
// child.Serve with the relay engine and the released worker behind it.

// seqSnippets are the sources the fuzzer feeds: each reaches a different
// turn ending (a value, each suspension, an error, a typing error, a deep
// recursion, prints).
var seqSnippets = []string{
	"1 + 1",
	"x = f(1)\nx",
	"print('a' * 20000)\nf()",
	"undefined_name",
	"from pathlib import Path\nPath('/data/x').read_text()",
	"a = await f()\na",
	"import asyncio\nr = await asyncio.gather(g(), h())\nr",
	"1/0",
	"x: int = 'a'",
	"def r(n):\n    return r(n + 1)\nr(0)",
	"[f(i) for i in range(3)]",
	"import datetime\ndatetime.date.today()",
	"print(v)\nv",
	"a = f()\nb = g()\n1",
	"print('x', end='')\nundefined_name\nf()",
	"[1] * 100000",
	"import datetime\nd = datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=5), 'z' * 5000))\nprint(d)\nd",
}

// seqValue builds one of the answers the fuzzer sends, by kind: leaves,
// containers, every shape at once, host objects, output-only kinds, a
// deep nesting, a wide DAG and malformed graphs.
func seqValue(g *value.Graph, k byte) value.NodeID {
	switch k % 16 {
	case 0:
		return g.Add(value.None())
	case 1:
		return g.Add(value.Int(-1 << 62))
	case 2:
		return g.Add(value.BigIntNode(new(big.Int).Lsh(big.NewInt(7), 5000)))
	case 3:
		return g.Add(value.Str(strings.Repeat("é", 3000)))
	case 4:
		o, root := codectest.EveryShape()
		return g.Append(&o) + root
	case 5:
		t := g.Add(value.TypeNode(value.Type{Name: "Cart", ID: value.UUID{1, 2}, Origin: value.OriginHost}))
		return g.Add(value.ClassInstanceNode(value.ClassInstance{Class: t, InstanceID: value.UUID{3}}))
	case 6:
		return g.Add(value.FunctionNode(value.Function{Name: "hf"}))
	case 7:
		return g.Add(value.Repr("<object>"))
	case 8:
		return g.Add(value.Cycle("[...]"))
	case 9:
		// Nested deeper than protocol 2 reads.
		id := g.Add(value.None())
		for range 300 {
			id = g.Add(value.List(id))
		}
		return id
	case 10:
		// A DAG whose protocol-2 tree doubles with each level.
		id := g.Add(value.Str(strings.Repeat("z", 64)))
		for range 24 {
			id = g.Add(value.List(id, id))
		}
		return id
	case 11:
		// A reference past the end of the graph.
		return g.Add(value.List(value.NodeID(g.Len() + 5)))
	case 12:
		return g.Add(value.Path("/etc/passwd"))
	case 13:
		return g.Add(value.FileHandleNode(value.FileHandle{Path: "/data/x", Mode: "r"}))
	case 14:
		return g.Add(value.Bytes(bytes.Repeat([]byte{0xff}, 5000)))
	}
	return value.NodeID(g.Len() + 1) // a root out of range
}

// seqParent is the hostile parent's end of one served connection.
type seqParent struct {
	t      *testing.T
	in     *io.PipeWriter
	fw     *frame.Writer
	frames chan []byte
	rerr   chan error
	result chan error
	eng    *Engine
	cd     codec.Codec // the version the child speaks now
	picked bool
	done   bool // the child ended (or is to end)
}

func startSeq(t *testing.T, versions []uint32) *seqParent {
	wc := worker.Config{Binary: testenv.Worker(t), Logger: quiet}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &seqParent{t: t, in: inW, fw: frame.NewWriter(inW, 0), frames: make(chan []byte, 64),
		rerr: make(chan error, 1), result: make(chan error, 1), eng: New(Config{Worker: wc, Logger: quiet})}
	p.cd, _ = codec.ForVersion(versions[len(versions)-1])
	conn := transport.NewStream(inR, outW, 0)
	go func() {
		err := child.Serve(context.Background(), conn, p.eng, child.Options{Versions: versions, Logger: quiet})
		conn.Close()
		p.result <- err
	}()
	go func() {
		fr := frame.NewReader(outR, 0)
		for {
			b, err := fr.ReadFrame()
			if err != nil {
				p.rerr <- err
				close(p.frames)
				return
			}
			p.frames <- b
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		<-p.result
		for range p.frames {
		}
	})
	return p
}

// send writes one frame body (nil: nothing) and returns the turn-ending
// event and the prints before it; ev is nil when the child ended without
// one.
func (p *seqParent) send(body []byte) (*message.ChildEvent, []*message.ChildEvent) {
	p.t.Helper()
	if body != nil {
		if err := p.fw.WriteFrame(body); err != nil {
			p.t.Fatalf("write: %v", err)
		}
	}
	return p.next()
}

// next reads the next turn-ending event.
func (p *seqParent) next() (*message.ChildEvent, []*message.ChildEvent) {
	p.t.Helper()
	var prints []*message.ChildEvent
	watchdog := time.NewTimer(2 * time.Minute)
	defer watchdog.Stop()
	for {
		var b []byte
		var ok bool
		select {
		case b, ok = <-p.frames:
		case <-watchdog.C:
			p.t.Fatal("the child answered nothing for 2 minutes")
		}
		if !ok {
			return nil, prints
		}
		ev, err := p.cd.DecodeEvent(b, codec.Limits{})
		if err != nil {
			p.t.Fatalf("the child sent an event that does not decode at %d: %v", p.cd.Version(), err)
		}
		if ev.Body == nil {
			p.t.Fatal("the child sent an event with no kind")
		}
		if ev.Body.EventKind() == message.KindPrint {
			if ev.MaxSuspensions != nil || ev.TotalExecutionMicros != 0 || ev.RestoredScriptName != nil {
				p.t.Fatal("a Print carries stamps")
			}
			prints = append(prints, ev)
			continue
		}
		return ev, prints
	}
}

// exit waits for Serve's result.
func (p *seqParent) exit() error {
	select {
	case err := <-p.result:
		p.result <- err
		return err
	case <-time.After(2 * time.Minute):
		p.t.Fatal("the child did not end")
	}
	return nil
}

// seqModel is the contract's state machine (§8) as the parent sees it.
type seqModel struct {
	st      int // 0 NoSession, 1 Configured, 2 Ready, 3 Suspended
	susp    message.EventKind
	callID  uint32
	pending []uint32
	eager   bool
	dumps   [][]byte
}

func errText(ev *message.ChildEvent) (string, string, bool) {
	e, ok := ev.Body.(*message.Error)
	if !ok || e.Exception == nil {
		return "", "", false
	}
	return e.Exception.Type, e.Exception.Msg(), true
}

// FuzzRelaySequence drives `montygo subprocess`'s child side (Serve with
// the relay engine, the released worker behind it) with an arbitrary
// sequence of requests at a protocol the first byte picks (2, 4 or 5, or
// all three served): Configure with good and bad versions and limits,
// Feed, every resume with right and wrong call ids and answers of every
// value kind (malformed graphs included), AbortFeed, Dump, Load of the
// dumps it made, mutated, wrapped or garbage, Reset, InstallDependencies,
// undecodable bodies, empty frames, torn frames and Shutdown. It checks
// that every reply decodes at the version the child speaks and is an
// answer the contract allows in the state the parent tracks (refusals in
// the contract's words, leaving the state as it was), that stamps appear
// exactly once an interpreter exists, that the child ends only on
// Shutdown, a refused version or a torn frame (with the contract's exit),
// and that no goroutine is left behind.
func FuzzRelaySequence(f *testing.F) {
	f.Add([]byte{1, 0, 0, 1, 1, 2, 0, 1, 6, 0, 7, 0, 8, 0, 0, 0, 1, 0})
	f.Add([]byte{2, 0, 0, 1, 5, 4, 1, 2, 16, 1, 12, 6, 0, 8, 0, 7, 1})
	f.Add([]byte{0, 0, 0, 1, 3, 3, 4, 1, 4, 2, 32, 5, 0, 1, 6, 4, 7})
	f.Add([]byte{3, 7, 0, 0, 0, 1, 1, 6, 0, 7, 3, 8, 0, 0, 0, 7, 2, 1, 0})
	f.Add([]byte{1, 0, 0, 1, 10, 2, 0x21, 2, 0x29, 2, 0x61, 1, 12, 6, 0})
	f.Add([]byte{2, 0, 8, 1, 11, 1, 6, 4, 0x11, 4, 0x92, 13, 0, 14, 3})
	f.Add([]byte{0, 0, 0, 1, 13, 4, 7, 9, 0, 15, 0})
	// Protocol 5: a feed limit so tight the feed trips, then Reset; the
	// date calls handed to the parent, answered with a string.
	f.Add([]byte{2, 0, 0x53, 1, 0, 1, 0, 6, 0, 8, 0, 0, 0, 1, 0})
	f.Add([]byte{2, 0, 0x24, 1, 11, 2, 0x01, 3, 1, 16, 6, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Registered first, so run last: after the connection's own
		// cleanup has ended the child.
		ignore := goleak.IgnoreCurrent()
		t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
		fuzzRelaySequence(t, data)
	})
}

func fuzzRelaySequence(t *testing.T, data []byte) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	versions := [][]uint32{{2}, {4}, {5}, child.SupportedVersions}[next()%4]
	p := startSeq(t, versions)
	m := &seqModel{}
	served := func(v uint32) bool {
		for _, s := range versions {
			if s == v {
				return true
			}
		}
		return false
	}
	encode := func(r message.Request) []byte {
		b, err := p.cd.AppendRequest(nil, &message.ParentRequest{Body: r})
		if err != nil {
			return nil
		}
		return b
	}
	for steps := 0; len(data) > 0 && steps < 24 && !p.done; steps++ {
		op, arg := next(), next()
		var req message.Request
		var body []byte
		switch op % 16 {
		case 0:
			v := p.cd.Version()
			switch arg % 8 {
			case 1:
				v = versions[int(arg>>3)%len(versions)]
			case 2:
				v = []uint32{0, 1, 3, 6, 1 << 31}[int(arg>>3)%5]
			}
			c := &message.Configure{ProtocolVersion: v}
			if arg&0x40 != 0 {
				ms, mem, rec := uint64(arg>>3%4), uint64(1<<20), uint64(50)
				c.Limits = &message.ResourceLimits{MaxSuspensions: &ms, MaxMemoryBytes: &mem, MaxRecursionDepth: &rec}
				if v >= protocol.Version5 {
					// Generous, or so tight that a feed trips (the
					// session is then discarded until Reset).
					us := uint64(2_000_000)
					if arg&0x10 != 0 {
						us = uint64(arg & 7)
					}
					c.Limits.MaxFeedDurationMicros, c.Limits.MaxTurnDurationMicros = &us, &us
				} else {
					us := uint64(5_000_000)
					c.Limits.MaxDurationMicros = &us
				}
			}
			if arg&0x80 != 0 {
				c.TypeCheck = true
			}
			if v >= protocol.Version5 && arg&0x20 != 0 {
				c.OsPolicy = &message.OsPolicy{Clock: message.ClockFixed, Fixed: message.FixedDateTime{UnixSeconds: int64(arg) << 30}}
				if arg&0x04 != 0 {
					// The date calls go to the parent.
					c.OsPolicy = &message.OsPolicy{Clock: message.ClockCallHost}
				}
			}
			req = c
			// A Configure is encoded at the version it declares, as a
			// parent switching versions would.
			if cd, ok := codec.ForVersion(v); ok {
				body, _ = cd.AppendRequest(nil, &message.ParentRequest{Body: c})
			} else {
				body = encode(c)
			}
		case 1, 15:
			f := &message.Feed{Code: seqSnippets[int(arg)%len(seqSnippets)]}
			f.Inputs = []message.NamedRef{{Name: "v", Value: seqValue(&f.Values, arg>>4)}}
			if arg&0x08 != 0 {
				f.SkipTypeCheck = true
			}
			req = f
		case 2:
			// The suspended call's id, the next one, or the one before.
			r := &message.ResumeCall{CallID: m.callID + uint32(arg&3)%3 - 1}
			if arg&0x80 == 0 {
				r.Result = &message.ExtResult{Kind: message.ResultKind(arg>>4%5 + 1)}
				switch r.Result.Kind {
				case message.ResultReturn:
					r.Result.Value = seqValue(&r.Values, next())
				case message.ResultError:
					r.Result.Error = message.NewException("ValueError", "x")
				case message.ResultFuture:
					r.Result.Future = r.CallID
				case message.ResultNotFound:
					r.Result.Name = "f"
				}
			}
			req = r
		case 3:
			r := &message.ResumeNameLookup{Kind: message.LookupKind(arg % 4)}
			switch r.Kind {
			case message.LookupValue:
				r.Value = seqValue(&r.Values, arg>>2)
			case message.LookupError:
				r.Error = message.NewException("NameError", "x")
			}
			req = r
		case 4:
			r := &message.ResumeFutures{}
			n := int(arg % 4)
			if arg&0x80 != 0 {
				n = 3000
			}
			ids := append([]uint32{m.callID}, m.pending...)
			for i := range n {
				fr := message.FutureResult{CallID: ids[i%len(ids)] + uint32(arg>>6&1), Result: &message.ExtResult{Kind: message.ResultKind((int(arg)>>2+i)%4 + 1)}}
				switch fr.Result.Kind {
				case message.ResultReturn:
					fr.Result.Value = seqValue(&r.Values, byte(i)+arg>>3)
				case message.ResultError:
					fr.Result.Error = message.NewException("ValueError", "x")
				}
				r.Results = append(r.Results, fr)
			}
			req = r
		case 5:
			r := &message.AbortFeed{}
			if arg&1 == 0 {
				r.Exception = message.NewException("RuntimeError", "abort")
			}
			req = r
		case 6:
			req = &message.Dump{}
		case 7:
			l := &message.Load{State: seqDump(m.dumps, arg, next())}
			req, body = l, encode(l)
			if !p.picked {
				// The child settles its version on a Load before any
				// Configure (child.InitialVersioner): a relay protocol-5
				// dump speaks 5, else the inner worker's version (the
				// released worker speaks 2), where served.
				p.picked = true
				v := uint32(protocol.Version2)
				if bytes.HasPrefix(l.State, dumpMagic5) || bytes.HasPrefix(l.State, dumpMagic5Old) {
					v = protocol.Version5
				}
				if served(v) {
					p.cd, _ = codec.ForVersion(v)
				}
			}
		case 8:
			req = &message.Reset{}
		case 9:
			req = &message.InstallDependencies{Requirements: []string{"numpy"}}
		case 10:
			// A request with a value, encoded, then mutated (a byte, or
			// one to three fields): what the encoders never write, such
			// as a reference past the graph's end or an out-of-range
			// root, reaches the child this way.
			var base message.Request
			switch arg % 5 {
			case 0:
				f := &message.Feed{Code: seqSnippets[int(arg>>3)%len(seqSnippets)]}
				f.Inputs = []message.NamedRef{{Name: "v", Value: seqValue(&f.Values, arg>>2)}}
				base = f
			case 1:
				r := &message.ResumeCall{CallID: m.callID, Result: &message.ExtResult{Kind: message.ResultReturn}}
				r.Result.Value = seqValue(&r.Values, arg>>3)
				base = r
			case 2:
				r := &message.ResumeNameLookup{Kind: message.LookupValue}
				r.Value = seqValue(&r.Values, arg>>3)
				base = r
			case 3:
				r := &message.ResumeFutures{}
				for _, id := range append([]uint32{m.callID}, m.pending...) {
					r.Results = append(r.Results, message.FutureResult{CallID: id, Result: &message.ExtResult{Kind: message.ResultReturn, Value: seqValue(&r.Values, arg>>3)}})
				}
				base = r
			default:
				base = &message.Load{State: seqDump(m.dumps, arg, 0)}
			}
			b := encode(base)
			if b == nil {
				continue
			}
			rng := rand.New(rand.NewPCG(uint64(arg), uint64(next())))
			body = codectest.Mutate(rng, b)
			if len(body) == 0 {
				continue
			}
			// What the child reads: the body at the version it speaks (a
			// Configure at the version it declares, when served).
			dec, derr := p.cd.DecodeRequest(body, codec.Limits{})
			if derr == nil && dec.Body != nil {
				if c, ok := dec.Body.(*message.Configure); ok && c.ProtocolVersion != p.cd.Version() && served(c.ProtocolVersion) {
					cd, _ := codec.ForVersion(c.ProtocolVersion)
					dec, derr = cd.DecodeRequest(body, codec.Limits{})
				}
			}
			if derr == nil && dec.Body != nil {
				if _, ok := dec.Body.(*message.Load); ok && !p.picked {
					continue // the version it picks is the first Load's business (case 7)
				}
				req = dec.Body
				break
			}
			ev, _ := p.send(body)
			checkUndecodable(t, p, m, body, derr, ev)
			continue
		case 11:
			body = []byte{}
		case 12:
			req = &message.Shutdown{}
		case 13:
			// A torn frame: a prefix (or part of one) and less body than
			// it announces, then the end of the stream.
			var torn []byte
			torn = binary.LittleEndian.AppendUint32(torn, uint32(arg)+1)
			torn = append(torn, bytes.Repeat([]byte{0x0a}, int(arg)/2)...)
			if arg&1 != 0 {
				torn = torn[:arg%4]
			}
			p.in.Write(torn)
			p.in.Close()
			ev, _ := p.next()
			err := p.exit()
			if ev == nil {
				if err != nil && len(torn) == 0 {
					t.Fatalf("an end of stream between frames ended the child with %v", err)
				}
				if len(torn) != 0 {
					t.Fatalf("a torn frame ended the child with no FatalError (%v)", err)
				}
				return
			}
			fe, ok := ev.Body.(*message.FatalError)
			var ee *child.ExitError
			if !ok || !strings.HasPrefix(fe.Message, "malformed request frame: ") || !errors.As(err, &ee) || ee.Code != protocol.ExitProtocol {
				t.Fatalf("a torn frame: %s, exit %v", describe(ev.Body), err)
			}
			return
		default:
			// A prefix over the frame cap.
			body = nil
			p.in.Write(binary.LittleEndian.AppendUint32(nil, uint32(protocol.MaxFrameLen)+1+uint32(arg)))
			ev, _ := p.next()
			err := p.exit()
			var ee *child.ExitError
			if ev == nil || !errors.As(err, &ee) || ee.Code != protocol.ExitProtocol {
				t.Fatalf("an oversize prefix: %v, exit %v", ev, err)
			}
			if fe, ok := ev.Body.(*message.FatalError); !ok || !strings.HasPrefix(fe.Message, "malformed request frame: ") {
				t.Fatalf("an oversize prefix: %s", describe(ev.Body))
			}
			return
		}
		if req != nil && body == nil {
			if body = encode(req); body == nil {
				continue // not expressible at this version
			}
		}
		ev, prints := p.send(body)
		if testing.Verbose() {
			t.Logf("state %d: %T → %s (%d prints)", m.st, req, describeEv(ev), len(prints))
		}
		checkSeqReply(t, p, m, req, body, ev, prints, served)
	}
	if !p.done {
		ev, _ := p.send(encode(&message.Shutdown{}))
		if ev == nil || ev.Body.EventKind() != message.KindOk {
			t.Fatalf("Shutdown: %v", ev)
		}
		if err := p.exit(); err != nil {
			t.Fatalf("Shutdown ended the child with %v", err)
		}
	}
}

// seqDump is the state of a Load: a dump the session made, as is,
// mutated, truncated, wrapped in a relay envelope or not a dump at all.
func seqDump(dumps [][]byte, arg, pos byte) []byte {
	var d []byte
	if len(dumps) > 0 {
		d = bytes.Clone(dumps[int(arg)%len(dumps)])
	}
	switch arg >> 4 % 8 {
	case 1:
		if len(d) > 0 {
			d[int(pos)*len(d)/256] ^= 1 << (arg & 7)
		}
	case 2:
		d = d[:len(d)*int(pos)/256]
	case 3:
		d = append(d, pos, arg)
	case 4:
		return []byte("MONTY\x00\x01\x00garbage")
	case 5:
		inner, _, err := split5(d)
		if err != nil {
			inner = d
		}
		us := uint64(pos) << 50
		c := &message.Configure{ProtocolVersion: protocol.Version5, Limits: &message.ResourceLimits{MaxFeedDurationMicros: &us}}
		env, _ := codecv5.AppendRequest(nil, &message.ParentRequest{Body: c})
		out := append([]byte(nil), dumpMagic5...)
		out = binary.AppendUvarint(out, uint64(len(env)))
		out = append(out, env...)
		out = binary.AppendUvarint(out, uint64(pos)<<56)
		return append(out, inner...)
	case 6:
		// The inner dump of a relay envelope, bare.
		if inner, _, err := split5(d); err == nil {
			return inner
		}
	case 7:
		return nil
	}
	return d
}

// checkSeqReply checks one reply against the state machine and moves the
// model.
func checkSeqReply(t *testing.T, p *seqParent, m *seqModel, req message.Request, body []byte, ev *message.ChildEvent, prints []*message.ChildEvent, served func(uint32) bool) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("state %d (%s, call %d, pending %v), %T: "+format, append([]any{m.st, m.susp, m.callID, m.pending, req}, args...)...)
	}
	if ev == nil {
		fail("the child ended without an answer: %v", p.exit())
	}
	if len(prints) > 0 {
		switch req.(type) {
		case *message.Feed, *message.ResumeCall, *message.ResumeNameLookup, *message.ResumeFutures, *message.AbortFeed, *message.Load:
		default:
			fail("%d prints", len(prints))
		}
	}
	typ, msg, isErr := errText(ev)
	violation := isErr && typ == "RuntimeError" && strings.HasPrefix(msg, "protocol violation: ")
	refused := func(text string) {
		t.Helper()
		if !violation || msg != "protocol violation: "+text {
			fail("want the refusal %q, got %s", text, describe(ev.Body))
		}
	}
	before := m.st
	// outcome applies the end of a turn (Feed, resumes, Load).
	outcome := func(load bool) {
		t.Helper()
		switch b := ev.Body.(type) {
		case *message.FunctionCall:
			m.st, m.susp, m.callID, m.eager, m.pending = 3, message.KindFunctionCall, b.CallID, b.AllowEagerAwait, nil
			if b.AllowEagerAwait && p.cd.Version() == protocol.Version2 {
				fail("allow_eager_await at protocol 2")
			}
		case *message.OsCall:
			m.st, m.susp, m.callID, m.eager, m.pending = 3, message.KindOsCall, b.CallID, false, nil
		case *message.NameLookup:
			m.st, m.susp, m.eager, m.pending = 3, message.KindNameLookup, false, nil
		case *message.ResolveFutures:
			m.st, m.susp, m.eager, m.pending = 3, message.KindResolveFutures, false, b.PendingCallIDs
			if len(b.PendingCallIDs) == 0 {
				fail("ResolveFutures waiting on nothing")
			}
		case *message.Complete:
			if err := b.Values.Check(b.Value); err != nil {
				fail("Complete with an invalid value: %v", err)
			}
			m.st = 2
		case *message.Ok:
			if !load {
				fail("Ok ends a turn")
			}
			m.st = 2
		case *message.Error:
			if violation {
				return
			}
			if load {
				fail("a Load answered with a non-refusal Error: %s", msg)
			}
			m.st = 2
		case *message.TypingError:
			if _, ok := req.(*message.Feed); !ok {
				fail("TypingError ends a resume")
			}
			m.st = 2
		default:
			fail("answered with %s", describe(ev.Body))
		}
	}
	switch r := req.(type) {
	case nil:
		if len(body) == 0 {
			// An empty frame holds no kind.
			refused("request has no kind")
		} else if !violation {
			fail("an undecodable body answered %s", describe(ev.Body))
		}
	case *message.Configure:
		switch {
		case !served(r.ProtocolVersion):
			fe, ok := ev.Body.(*message.FatalError)
			if !ok || !strings.HasPrefix(fe.Message, "unsupported protocol version") && !strings.Contains(fe.Message, "protocol version") {
				fail("a refused version answered %s", describe(ev.Body))
			}
			var ee *child.ExitError
			if err := p.exit(); !errors.As(err, &ee) || ee.Code != protocol.ExitFatal {
				fail("a refused version ended with %v", err)
			}
			p.done = true
			return
		case m.st != 0:
			refused("Configure while a session already exists")
		case ev.Body.EventKind() == message.KindOk:
			m.st = 1
			p.cd, _ = codec.ForVersion(r.ProtocolVersion)
			p.picked = true
		case !violation:
			fail("Configure answered %s", describe(ev.Body))
		}
	case *message.Feed:
		switch m.st {
		case 0:
			refused("session has not been configured")
		case 3:
			refused("Feed without a session ready for input")
		default:
			m.st = 2
			if violation && !strings.HasPrefix(msg, "protocol violation: invalid inputs: ") &&
				!strings.HasPrefix(msg, "protocol violation: type checker failed: ") {
				fail("a Feed refused with %q", msg)
			}
			outcome(false)
		}
	case *message.ResumeCall:
		switch {
		case m.st != 3 || m.susp != message.KindFunctionCall && m.susp != message.KindOsCall:
			refused("ResumeCall without a suspended function/OS call")
		case r.CallID != m.callID:
			refused("ResumeCall call_id " + strconv.FormatUint(uint64(r.CallID), 10) + " does not match " + strconv.FormatUint(uint64(m.callID), 10))
		case r.Result == nil:
			refused("ResumeCall has no result")
		case r.Result.Kind == message.ResultNotHandled && m.susp == message.KindFunctionCall:
			refused("NotHandled is only valid answering a suspended OS call")
		default:
			if violation && !strings.HasPrefix(msg, "protocol violation: invalid result: ") {
				fail("refused with %q", msg)
			}
			outcome(false)
		}
	case *message.ResumeNameLookup:
		if m.st != 3 || m.susp != message.KindNameLookup {
			if !violation || msg != "protocol violation: ResumeNameLookup without a suspended name lookup" &&
				!strings.HasPrefix(msg, "protocol violation: invalid result: ") && !strings.HasPrefix(msg, "protocol violation: malformed request: ") {
				fail("want a refusal, got %s", describe(ev.Body))
			}
			break
		}
		if violation && !strings.HasPrefix(msg, "protocol violation: invalid result: ") && !strings.HasPrefix(msg, "protocol violation: malformed request: ") {
			fail("refused with %q", msg)
		}
		outcome(false)
	case *message.ResumeFutures:
		switch {
		case m.st == 3 && m.susp == message.KindResolveFutures:
			if violation && !strings.HasPrefix(msg, "protocol violation: invalid results: ") {
				fail("refused with %q", msg)
			}
			outcome(false)
		case m.st == 3 && m.susp == message.KindFunctionCall && m.eager:
			if violation {
				break
			}
			outcome(false)
		default:
			if !violation || msg != "protocol violation: ResumeFutures without suspended futures" &&
				!strings.HasPrefix(msg, "protocol violation: invalid results: ") {
				fail("want a refusal, got %s", describe(ev.Body))
			}
		}
	case *message.AbortFeed:
		switch {
		case m.st != 3:
			refused("AbortFeed without a suspended feed")
		case r.Exception == nil:
			refused("AbortFeed has no exception")
		default:
			if typ == "" || violation {
				fail("AbortFeed answered %s", describe(ev.Body))
			}
			m.st = 2
		}
	case *message.Dump:
		switch {
		case m.st == 0:
			refused("session has not been configured")
		case ev.Body.EventKind() == message.KindDumpResult:
			m.dumps = append(m.dumps, ev.Body.(*message.DumpResult).State)
			if len(m.dumps) > 4 {
				m.dumps = m.dumps[1:]
			}
			if m.st == 1 {
				m.st = 2
			}
		case isErr:
			if m.st == 1 {
				m.st = 2
			}
		default:
			fail("Dump answered %s", describe(ev.Body))
		}
	case *message.Load:
		switch {
		case m.st >= 2:
			refused("Load requires a session that has not started (a feed has already run)")
		case violation:
			// Refused: the state is as it was.
		default:
			outcome(true)
			if ev.RestoredScriptName == nil {
				fail("a Load's answer without restored_script_name")
			}
		}
	case *message.Reset:
		if ev.Body.EventKind() != message.KindOk {
			fail("Reset answered %s", describe(ev.Body))
		}
		m.st, m.pending, m.eager = 0, nil, false
	case *message.InstallDependencies:
		if !isErr || typ != "RuntimeError" || violation {
			fail("InstallDependencies answered %s", describe(ev.Body))
		}
	case *message.Shutdown:
		if ev.Body.EventKind() != message.KindOk || ev.MaxSuspensions != nil {
			fail("Shutdown answered %s", describe(ev.Body))
		}
		if err := p.exit(); err != nil {
			fail("Shutdown ended the child with %v", err)
		}
		p.done = true
		return
	}
	if fe, ok := ev.Body.(*message.FatalError); ok {
		fail("FatalError %q (exit %v)", fe.Message, p.exit())
	}
	// Stamps: on every turn-ending event once an interpreter exists,
	// never before (§8); never on Reset's Ok nor on Configure's. (An
	// undecodable body's refusal is not checked here.)
	want := m.st >= 2
	switch req.(type) {
	case nil:
		return
	case *message.Reset:
		want = false
	case *message.Configure:
		want = want && violation
	}
	if want != (ev.MaxSuspensions != nil) {
		fail("stamped %v, state %d → %d, %s", ev.MaxSuspensions != nil, before, m.st, describe(ev.Body))
	}
}

func describeEv(ev *message.ChildEvent) string {
	if ev == nil {
		return "nothing"
	}
	return describe(ev.Body)
}

// checkUndecodable checks the answer to a body that did not decode (err,
// or a request with no kind): a refusal, which leaves the state as it was,
// except that a Feed whose inputs fail their conversion (a structural
// error of a Feed) counts as run, as any refused Feed in the configured
// state.
func checkUndecodable(t *testing.T, p *seqParent, m *seqModel, body []byte, err error, ev *message.ChildEvent) {
	t.Helper()
	if ev == nil {
		t.Fatalf("state %d: the child ended on an undecodable body (%v): %v", m.st, err, p.exit())
	}
	_, msg, isErr := errText(ev)
	if !isErr || !strings.HasPrefix(msg, "protocol violation: ") {
		t.Fatalf("state %d: an undecodable body (%v) answered %s", m.st, err, describe(ev.Body))
	}
	var de *codec.DecodeError
	if errors.As(err, &de) && de.Structural && message.RequestKind(peek.DecodedRequest(body)) == message.KindFeed && m.st == 1 {
		m.st = 2
	}
}
