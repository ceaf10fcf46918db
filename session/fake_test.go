package session

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomonty/monty/codec"
	_ "github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// This file is an in-process stand-in for a `monty subprocess` child: a
// goroutine that decodes requests with the protocol-2 codec and answers
// them from a test's script, over io.Pipe. The session talks to it through
// a real transport.Stream; its lifecycle (fakeLife, shared with the
// goroutine-free seqChild of the fuzz tests) stands for the kill ladder
// and the death classification of a process, so the session's state
// handling can be tested without a real worker.

// fakeLife is the part of a fake worker's lifecycle both fakes share: the
// recorded exit and the classification of a loss the way package worker
// classifies a process's.
type fakeLife struct {
	mu     sync.Mutex
	exit   worker.Exit
	exited bool
}

func (l *fakeLife) setExit(e worker.Exit) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.exited {
		l.exit, l.exited = e, true
	}
}

func (l *fakeLife) exitStatus() worker.Exit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.exit
}

// classify turns a loss into the error a process would give, with exit.
func classify(loss transport.Loss, exit worker.Exit) error {
	if loss.Announced {
		return &worker.CrashError{Reason: worker.Announced, Message: loss.Message, Exit: exit}
	}
	if exit.Code == int(protocol.ExitOOM) {
		return &worker.MemoryLimitError{Exit: exit}
	}
	return &worker.CrashError{Reason: worker.Vanished, Context: loss.Op, Exit: exit, Err: loss.Err}
}

// fakeReply is how the fake answers one request.
type fakeReply struct {
	events []*message.ChildEvent
	raw    [][]byte // frames written after the events, verbatim
	hang   bool     // then never answer again until killed
	exit   int      // then exit with this status; -1 keeps serving
}

func reply(evs ...*message.ChildEvent) fakeReply { return fakeReply{events: evs, exit: -1} }

type fakeHandler func(req *message.ParentRequest) fakeReply

type fakeChild struct {
	fakeLife
	codec   codec.Codec
	handler fakeHandler

	reqR, evR *io.PipeReader
	reqW, evW *io.PipeWriter
	in        *swapReader       // what the parent reads: evR, unless a test swaps it
	conn      *transport.Stream // the parent's end

	reqMu sync.Mutex
	reqs  []*message.ParentRequest

	killCh    chan struct{}
	killOnce  sync.Once
	done      chan struct{}
	closeOnce sync.Once
}

func newFake(version uint32, maxFrameLen int, h fakeHandler) *fakeChild {
	c, _ := codec.ForVersion(version)
	f := &fakeChild{codec: c, handler: h, killCh: make(chan struct{}), done: make(chan struct{})}
	f.reqR, f.reqW = io.Pipe()
	f.evR, f.evW = io.Pipe()
	f.in = &swapReader{r: f.evR}
	f.conn = transport.NewStream(f.in, f.reqW, maxFrameLen)
	go f.serve()
	return f
}

func (f *fakeChild) serve() {
	defer close(f.done)
	defer f.evW.Close()
	r := frame.NewReader(f.reqR, 0)
	w := frame.NewWriter(f.evW, 0)
	for {
		b, err := r.ReadFrame()
		if err != nil {
			if err == io.EOF {
				f.setExit(worker.Exit{Code: 0})
			} else {
				f.setExit(worker.Exit{Code: int(protocol.ExitProtocol)})
			}
			return
		}
		req, err := f.codec.DecodeRequest(b, codec.Limits{})
		if err != nil {
			panic("fake child got an undecodable request: " + err.Error())
		}
		f.reqMu.Lock()
		f.reqs = append(f.reqs, req)
		f.reqMu.Unlock()
		rep := f.handler(req)
		for _, ev := range rep.events {
			body, err := f.codec.AppendEvent(nil, ev)
			if err != nil {
				panic("fake child cannot encode its event: " + err.Error())
			}
			if w.WriteFrame(body) != nil {
				return
			}
		}
		for _, raw := range rep.raw {
			if w.WriteFrame(raw) != nil {
				return
			}
		}
		if rep.hang {
			<-f.killCh
			return
		}
		if rep.exit >= 0 {
			f.setExit(worker.Exit{Code: rep.exit})
			return
		}
	}
}

func (f *fakeChild) requests() []*message.ParentRequest {
	f.reqMu.Lock()
	defer f.reqMu.Unlock()
	return append([]*message.ParentRequest(nil), f.reqs...)
}

func (f *fakeChild) count(k message.RequestKind) int {
	n := 0
	for _, r := range f.requests() {
		if r.Body != nil && r.Body.RequestKind() == k {
			n++
		}
	}
	return n
}

func (f *fakeChild) Conn() transport.Conn { return f.conn }

// swapReader is a reader a test may replace while the parent is idle.
type swapReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (s *swapReader) Read(b []byte) (int, error) {
	s.mu.Lock()
	r := s.r
	s.mu.Unlock()
	return r.Read(b)
}

func (s *swapReader) set(r io.Reader) {
	s.mu.Lock()
	s.r = r
	s.mu.Unlock()
}
func (f *fakeChild) Pid() int { return 4242 }

func (f *fakeChild) Kill() error {
	f.killOnce.Do(func() {
		f.setExit(worker.Exit{Code: -1, Signal: syscall.SIGKILL})
		close(f.killCh)
		f.reqR.CloseWithError(syscall.EPIPE)
		f.evW.Close()
	})
	return nil
}

func (f *fakeChild) Close(ctx context.Context) error {
	f.closeOnce.Do(func() {
		f.reqW.Close()
		select {
		case <-f.done:
		case <-time.After(100 * time.Millisecond):
			f.Kill()
		case <-ctx.Done():
			f.Kill()
		}
		<-f.done
		f.evR.Close()
		f.reqR.Close()
	})
	return nil
}

// Lost waits (like a process, up to the fatal-exit grace) for the fake to
// stop serving and classifies the loss.
func (f *fakeChild) Lost(l transport.Loss) error {
	select {
	case <-f.done:
	case <-time.After(protocol.FatalExitGrace):
		f.Kill()
		<-f.done
	}
	return classify(l, f.exitStatus())
}

// quietLogger keeps expected warnings (discarded workers) out of the test
// output.
var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeBinary is a file whose stat the version cache keys on.
func fakeBinary(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "monty")
	if err := os.WriteFile(p, []byte("fake"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeSpawner is a Launcher starting a fresh fake child with handler h
// for every worker the session asks for, recording them.
type fakeSpawner struct {
	mu          sync.Mutex
	children    []*fakeChild
	bin         string
	handler     func(n int) fakeHandler
	version     uint32 // the codec the fakes decode with; 0 means 2
	maxFrameLen int
}

// Binary names the fake's binary, which keys the version cache.
func (fs *fakeSpawner) Binary() string { return fs.bin }

// Launch starts the next fake child.
func (fs *fakeSpawner) Launch(ctx context.Context) (Peer, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	v := fs.version
	if v == 0 {
		v = 2
	}
	f := newFake(v, fs.maxFrameLen, fs.handler(len(fs.children)))
	fs.children = append(fs.children, f)
	return f, nil
}

// launch returns a Launch over the spawner, pinned to version (0
// negotiates).
func (fs *fakeSpawner) launch(version uint32) Launch {
	return Launch{Launcher: fs, ProtocolVersion: version}
}

func (fs *fakeSpawner) last() *fakeChild {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.children[len(fs.children)-1]
}

// withConfigure answers Configure with Ok and everything else with h.
func withConfigure(h fakeHandler) fakeHandler {
	return func(req *message.ParentRequest) fakeReply {
		if _, ok := req.Body.(*message.Configure); ok {
			return reply(ev(&message.Ok{}))
		}
		return h(req)
	}
}

// startFake starts a protocol-2 session over one fake child.
func startFake(t *testing.T, cfg Config, h fakeHandler) (*Session, *fakeChild) {
	t.Helper()
	return startFakeOpts(t, fakeOpts{}, cfg, h)
}

// fakeOpts are the launch settings of a fake session.
type fakeOpts struct {
	version     uint32 // 0 means 2
	maxFrameLen int
}

// startFakeOpts starts a session over one fake child with o's settings.
func startFakeOpts(t *testing.T, o fakeOpts, cfg Config, h fakeHandler) (*Session, *fakeChild) {
	t.Helper()
	if o.version == 0 {
		o.version = 2
	}
	fs := &fakeSpawner{bin: fakeBinary(t), version: o.version, maxFrameLen: o.maxFrameLen,
		handler: func(int) fakeHandler { return withConfigure(h) }}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	s, err := Start(context.Background(), fs.launch(o.version), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, fs.last()
}

// Event builders.

func ev(b message.Event) *message.ChildEvent { return &message.ChildEvent{Body: b} }

func stamp(e *message.ChildEvent, maxSusp uint64) *message.ChildEvent {
	e.TotalExecutionMicros = 10
	e.MaxSuspensions = &maxSusp
	return e
}

func completeInt(n int64) *message.ChildEvent {
	c := &message.Complete{}
	c.Value = c.Values.Add(value.Int(n))
	return stamp(ev(c), protocol.DefaultMaxSuspensions)
}

func funcCall(name string, id uint32, args ...int64) *message.ChildEvent {
	fc := &message.FunctionCall{FunctionName: name, CallID: id}
	for _, a := range args {
		fc.Args = append(fc.Args, fc.Values.Add(value.Int(a)))
	}
	return stamp(ev(fc), protocol.DefaultMaxSuspensions)
}

func pyError(typ, msg string) *message.ChildEvent {
	exc := message.NewException(typ, msg)
	exc.Traceback = []message.StackFrame{{Filename: "<python-input-0>", Start: message.CodeLoc{Line: 1, Column: 1},
		End: message.CodeLoc{Line: 1, Column: 2}, FrameName: value.Ptr("<module>")}}
	return stamp(ev(&message.Error{Exception: exc}), protocol.DefaultMaxSuspensions)
}

func violation(text string) *message.ChildEvent {
	return ev(&message.Error{Exception: message.NewException("RuntimeError", "protocol violation: "+text)})
}
