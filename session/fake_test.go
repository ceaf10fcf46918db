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
	_ "github.com/gomonty/monty/codec/v2"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
	"github.com/gomonty/monty/worker"
)

// This file is an in-process stand-in for a `monty subprocess` child: a
// goroutine that decodes requests with the protocol-2 codec and answers
// them from a test's script, over io.Pipe. It implements the session's
// child interface, including the kill ladder and death classification, so
// the session's state handling can be tested without a real worker.

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
	codec   codec.Codec
	handler fakeHandler

	reqR, evR *io.PipeReader
	reqW, evW *io.PipeWriter
	pr        *frame.Reader
	pw        *frame.Writer

	mu     sync.Mutex
	reqs   []*message.ParentRequest
	exit   worker.Exit
	exited bool

	killCh    chan struct{}
	killOnce  sync.Once
	done      chan struct{}
	closeOnce sync.Once
}

func newFake(version uint32, h fakeHandler) *fakeChild {
	c, _ := codec.ForVersion(version)
	f := &fakeChild{codec: c, handler: h, killCh: make(chan struct{}), done: make(chan struct{})}
	f.reqR, f.reqW = io.Pipe()
	f.evR, f.evW = io.Pipe()
	f.pr = frame.NewReader(f.evR, 0)
	f.pw = frame.NewWriter(f.reqW, 0)
	go f.serve()
	return f
}

func (f *fakeChild) setExit(e worker.Exit) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.exited {
		f.exit, f.exited = e, true
	}
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
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		f.mu.Unlock()
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
	f.mu.Lock()
	defer f.mu.Unlock()
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

func (f *fakeChild) ReadFrame() ([]byte, error)   { return f.pr.ReadFrame() }
func (f *fakeChild) WriteFrame(body []byte) error { return f.pw.WriteFrame(body) }
func (f *fakeChild) Pid() int                     { return 4242 }

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

func (f *fakeChild) settle() worker.Exit {
	select {
	case <-f.done:
	case <-time.After(protocol.FatalExitGrace):
		f.Kill()
		<-f.done
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.exit
}

func (f *fakeChild) Announced(msg string) error {
	return &worker.CrashError{Reason: worker.Announced, Message: msg, Exit: f.settle()}
}

func (f *fakeChild) Vanished(op string, cause error) error {
	exit := f.settle()
	if exit.Code == int(protocol.ExitOOM) {
		return &worker.MemoryLimitError{Exit: exit}
	}
	return &worker.CrashError{Reason: worker.Vanished, Context: op, Exit: exit, Err: cause}
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

// fakeSpawner starts a fresh fake child with handler h for every worker the
// session asks for, recording them.
type fakeSpawner struct {
	mu       sync.Mutex
	children []*fakeChild
	bin      string
	handler  func(n int) fakeHandler
	version  uint32 // the codec the fakes decode with; 0 means 2
}

func (fs *fakeSpawner) spawner() spawner {
	return spawner{
		resolve: func(string) (string, error) { return fs.bin, nil },
		start: func(ctx context.Context, cfg worker.Config) (child, error) {
			fs.mu.Lock()
			defer fs.mu.Unlock()
			v := fs.version
			if v == 0 {
				v = 2
			}
			f := newFake(v, fs.handler(len(fs.children)))
			fs.children = append(fs.children, f)
			return f, nil
		},
	}
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
	if cfg.ProtocolVersion == 0 {
		cfg.ProtocolVersion = 2
	}
	fs := &fakeSpawner{bin: fakeBinary(t), version: cfg.ProtocolVersion,
		handler: func(int) fakeHandler { return withConfigure(h) }}
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	s, err := start(context.Background(), cfg, fs.spawner())
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
