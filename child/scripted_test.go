package child

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// scripted is an Engine over a tiny script language, for testing the
// state machine without an interpreter. A feed's code is a list of
// space-separated ops run in order until one suspends:
//
//	print:TEXT  print TEXT and a newline     err:TEXT  print TEXT to stderr
//	raw:TEXT    print TEXT (no newline)      big:N     print N bytes
//	call        FunctionCall f()             eager     FunctionCall awaited at once
//	os          OsCall read_text /data/x     lookup    NameLookup x
//	futures     ResolveFutures on the last call
//	error       Error ValueError("boom")     typing    TypingError
//	block       wait until the test sends on gate
//	bigresult:N complete with an N-byte string
//	bigcall:N   FunctionCall with an N-byte string argument
//	die:N       the interpreter dies: the turn fails with ExitError N
//	fatdump:N   later dumps carry N bytes of padding
//	badabort    AbortFeed is answered with Complete, not an Error
//	printloop   print lines until the turn's context is done (or gate
//	            closes), then fail with its cause
//
// The feed completes with the last resumed value (None when there is
// none). A dump holds the ops left to run.
type scripted struct {
	cfg      *message.Configure
	started  bool
	ops      []string
	nextID   uint32
	lastID   uint32
	last     value.Graph
	lastSet  bool
	lastRoot value.NodeID
	micros   uint64
	loaded   *uint64
	name     string
	closed   bool
	resets   int
	gate     chan struct{}
	died     protocol.ExitCode
	ctx      context.Context
	ctxErr   error
	pad      int
	badAbort bool
	failed   error // fail:TEXT: the engine's own error
}

func (e *scripted) Configure(_ context.Context, c *message.Configure) error {
	e.cfg = c
	return nil
}

func (e *scripted) Feed(ctx context.Context, f *message.Feed, out Output) (message.Event, error) {
	e.ctx = ctx
	e.started = true
	e.ops = strings.Fields(f.Code)
	e.lastSet = false
	return e.outcome(out)
}

// outcome runs the ops and reports a death (die:N) as the turn's error.
func (e *scripted) outcome(out Output) (message.Event, error) {
	ev := e.run(out)
	if e.died != 0 {
		return nil, &ExitError{Code: e.died}
	}
	if e.failed != nil {
		return nil, e.failed
	}
	if e.ctxErr != nil {
		return nil, e.ctxErr
	}
	return ev, nil
}

func (e *scripted) run(out Output) message.Event {
	e.micros += 10
	for len(e.ops) > 0 {
		op := e.ops[0]
		e.ops = e.ops[1:]
		name, arg, _ := strings.Cut(op, ":")
		switch name {
		case "print":
			out.Print(message.StreamStdout, arg+"\n")
		case "raw":
			out.Print(message.StreamStdout, arg)
		case "err":
			out.Print(message.StreamStderr, arg+"\n")
		case "big":
			out.Print(message.StreamStdout, strings.Repeat("x", atoi(arg)))
		case "bigresult":
			e.last = value.Graph{}
			e.lastRoot = e.last.Add(value.Str(strings.Repeat("r", atoi(arg))))
			e.lastSet = true
		case "bigcall":
			e.lastID = e.nextID
			e.nextID++
			fc := &message.FunctionCall{FunctionName: "f", CallID: e.lastID}
			fc.Args = []value.NodeID{fc.Values.Add(value.Str(strings.Repeat("a", atoi(arg))))}
			return fc
		case "block":
			<-e.gate
		case "badabort":
			e.badAbort = true
		case "fatdump":
			e.pad = atoi(arg)
		case "die":
			e.died = protocol.ExitCode(atoi(arg))
			return nil
		case "fail":
			e.failed = errors.New(strings.ReplaceAll(arg, "_", "\xff"))
			return nil
		case "printloop":
			for e.ctx.Err() == nil {
				out.Print(message.StreamStdout, "again\n")
				select {
				case <-e.gate: // the test gave up
					e.ctxErr = errors.New("stopped by the test")
					return nil
				default:
				}
			}
			e.ctxErr = context.Cause(e.ctx)
			return nil
		case "call", "eager":
			e.lastID = e.nextID
			e.nextID++
			return &message.FunctionCall{FunctionName: "f", CallID: e.lastID, AllowEagerAwait: name == "eager"}
		case "os":
			e.lastID = e.nextID
			e.nextID++
			return &message.OsCall{CallID: e.lastID, Op: message.OpReadText, Path: "/data/x"}
		case "lookup":
			return &message.NameLookup{Name: "x"}
		case "futures":
			return &message.ResolveFutures{PendingCallIDs: []uint32{e.lastID}}
		case "error":
			return &message.Error{Exception: message.NewException("ValueError", "boom")}
		case "typing":
			return &message.TypingError{Diagnostics: "error[invalid-assignment]"}
		}
	}
	c := &message.Complete{}
	if e.lastSet {
		c.Values = e.last
		c.Value = e.lastRoot
	} else {
		c.Value = c.Values.Add(value.None())
	}
	return c
}

func (e *scripted) Resume(_ context.Context, req message.Request, out Output) (message.Event, error) {
	switch r := req.(type) {
	case *message.AbortFeed:
		e.ops = nil
		if e.badAbort {
			return &message.Complete{Value: (&value.Graph{}).Add(value.None())}, nil
		}
		return &message.Error{Exception: r.Exception}, nil
	case *message.ResumeCall:
		switch r.Result.Kind {
		case message.ResultNotHandled:
			e.ops = nil
			return &message.Error{Exception: message.NewException("PermissionError", "no handler for /data/x")}, nil
		case message.ResultError:
			e.ops = nil
			return &message.Error{Exception: r.Result.Error}, nil
		case message.ResultReturn:
			e.keep(&r.Values, r.Result.Value)
		}
	case *message.ResumeNameLookup:
		if r.Kind == message.LookupValue {
			e.keep(&r.Values, r.Value)
		}
	case *message.ResumeFutures:
		for _, fr := range r.Results {
			if fr.Result.Kind == message.ResultReturn {
				e.keep(&r.Values, fr.Result.Value)
			}
		}
	}
	return e.outcome(out)
}

// keep makes root of g (copied) the feed's result.
func (e *scripted) keep(g *value.Graph, root value.NodeID) {
	e.last = value.Graph{}
	e.lastRoot = e.last.Append(g) + root
	e.lastSet = true
}

func (e *scripted) Dump(context.Context) (message.Event, error) {
	e.started = true
	return &message.DumpResult{State: []byte("dump:" + strings.Join(e.ops, " ") + strings.Repeat(" ", e.pad))}, nil
}

func (e *scripted) Load(_ context.Context, state []byte, out Output) (message.Event, error) {
	rest, ok := strings.CutPrefix(string(state), "dump:")
	if !ok {
		return nil, &Violation{Text: "failed to load session: not a scripted dump"}
	}
	e.started = true
	ms := uint64(7)
	e.loaded, e.name = &ms, "restored.py"
	if rest == "" {
		return &message.Ok{}, nil
	}
	e.ops = strings.Fields(rest)
	return e.run(out), nil
}

func (e *scripted) Reset(context.Context) error {
	e.cfg, e.started, e.ops, e.loaded, e.name = nil, false, nil, nil, ""
	e.resets++
	return nil
}

func (e *scripted) Stamps() Stamps {
	st := Stamps{TotalExecutionMicros: e.micros, MaxSuspensions: e.loaded, ScriptName: e.name}
	if e.cfg != nil && e.cfg.Limits != nil {
		st.MaxDurationMicros = e.cfg.Limits.MaxDurationMicros
	}
	return st
}

func (e *scripted) Close() error { e.closed = true; return nil }

// chanConn is an in-memory Conn: the test can see whether the child has
// written anything beyond what it read.
type chanConn struct {
	in   chan []byte
	out  chan []byte
	done chan struct{}
	once sync.Once
}

func newChanConn() *chanConn {
	return &chanConn{in: make(chan []byte, 1), out: make(chan []byte, 4096), done: make(chan struct{})}
}

func (c *chanConn) ReadFrame() ([]byte, error) {
	select {
	case b, ok := <-c.in:
		if !ok {
			return nil, io.EOF
		}
		return b, nil
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *chanConn) WriteFrame(b []byte) error {
	select {
	case <-c.done:
		return errors.New("closed")
	default:
	}
	c.out <- append([]byte(nil), b...)
	return nil
}

func (c *chanConn) Close() error { c.once.Do(func() { close(c.done) }); return nil }

// Pending reports false: a channel pair cannot look ahead.
func (c *chanConn) Pending() bool { return false }

// MaxFrameLen is the protocol's cap.
func (c *chanConn) MaxFrameLen() int { return protocol.MaxFrameLen }

// parent drives Serve over a chanConn.
type parent struct {
	t      testing.TB
	conn   *chanConn
	eng    *scripted
	codec  codec.Codec
	result chan error
	prints []message.Print
}

func startChild(t testing.TB, version uint32, opts Options) *parent {
	t.Helper()
	cd, ok := codec.ForVersion(version)
	if !ok {
		t.Fatalf("no codec %d", version)
	}
	p := &parent{t: t, conn: newChanConn(), eng: &scripted{gate: make(chan struct{})}, codec: cd, result: make(chan error, 1)}
	go func() { p.result <- Serve(context.Background(), p.conn, p.eng, opts) }()
	t.Cleanup(func() {
		p.conn.Close()
		<-p.result
	})
	return p
}

// raw sends one frame body and returns the turn-ending event, recording
// the Print events before it.
func (p *parent) raw(body []byte) *message.ChildEvent {
	p.t.Helper()
	p.conn.in <- body
	p.prints = p.prints[:0]
	for {
		var b []byte
		select {
		case b = <-p.conn.out:
		case err := <-p.result:
			p.result <- err
			// A child that wrote its last event and ended makes both
			// cases ready: read what it wrote first.
			select {
			case b = <-p.conn.out:
			default:
				p.t.Fatalf("child ended: %v", err)
			}
		}
		ev, err := p.codec.DecodeEvent(b, codec.Limits{})
		if err != nil {
			p.t.Fatalf("child sent an undecodable event: %v", err)
		}
		if pr, ok := ev.Body.(*message.Print); ok {
			if ev.MaxSuspensions != nil || ev.TotalExecutionMicros != 0 {
				p.t.Fatal("a Print event carries stamps")
			}
			p.prints = append(p.prints, *pr)
			continue
		}
		if ev.Body == nil {
			p.t.Fatal("child sent an event with no kind")
		}
		if n := len(p.conn.out); n != 0 {
			p.t.Fatalf("child wrote %d frames after the turn-ending event", n)
		}
		return ev
	}
}

func (p *parent) do(req message.Request) *message.ChildEvent {
	p.t.Helper()
	b, err := p.codec.AppendRequest(nil, &message.ParentRequest{Body: req})
	if err != nil {
		p.t.Fatalf("encode %T: %v", req, err)
	}
	return p.raw(b)
}

func (p *parent) configure() {
	p.t.Helper()
	if ev := p.do(&message.Configure{ProtocolVersion: p.codec.Version()}); ev.Body.EventKind() != message.KindOk {
		p.t.Fatalf("Configure: %v", describe(ev))
	}
}

func (p *parent) feed(code string) *message.ChildEvent {
	p.t.Helper()
	return p.do(&message.Feed{Code: code})
}

func describe(ev *message.ChildEvent) string {
	if e, ok := ev.Body.(*message.Error); ok {
		return "Error " + e.Exception.Type + ": " + e.Exception.Msg()
	}
	if f, ok := ev.Body.(*message.FatalError); ok {
		return "FatalError " + f.Message
	}
	if ev.Body == nil {
		return "no kind"
	}
	return ev.Body.EventKind().String()
}

var codecLimits = codec.Limits{}

func (p *parent) exit() error {
	p.t.Helper()
	select {
	case err := <-p.result:
		p.result <- err
		return err
	case <-time.After(10 * time.Second):
		p.t.Fatal("child did not end")
	}
	return nil
}

// codecFor returns the codec of the highest version opts allow.
func codecFor(opts Options) (codec.Codec, bool) {
	v := uint32(protocol.Version)
	if len(opts.Versions) > 0 {
		v = opts.Versions[len(opts.Versions)-1]
	}
	return codec.ForVersion(v)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
