package session

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
)

// This file shows that a session needs a transport.Conn and a Lifecycle,
// not a process: goChild is a Go function serving the protocol over
// net.Pipe, with transport.Stream at both ends, no pid, no binary, no exit
// status, and its own loss error.

// errGoChildGone is what goChild's lifecycle reports for a lost
// connection.
type goChildGone struct {
	op  transport.Op
	err error
}

func (e *goChildGone) Error() string         { return "go child gone while " + string(e.op) }
func (e *goChildGone) Unwrap() error         { return e.err }
func (e *goChildGone) SessionSurvives() bool { return false }

// goChild is an in-process worker: a goroutine answering requests over
// one end of a net.Pipe.
type goChild struct {
	parent *transport.Stream
	own    net.Conn // the child's end
	done   chan struct{}
	kill   sync.Once
}

// launchGoChild starts a goChild speaking version v; serve answers each
// decoded request with the events to send back, or nil to hang up.
func launchGoChild(v uint32, serve func(req *message.ParentRequest) []*message.ChildEvent) *goChild {
	a, b := net.Pipe()
	g := &goChild{parent: transport.NewStream(a, a, 0), own: b, done: make(chan struct{})}
	c, _ := codec.ForVersion(v)
	go func() {
		defer close(g.done)
		defer b.Close()
		conn := transport.NewStream(b, b, 0)
		for {
			body, err := conn.ReadFrame()
			if err != nil {
				return
			}
			req, err := c.DecodeRequest(body, codec.Limits{})
			if err != nil {
				return
			}
			evs := serve(req)
			if evs == nil {
				return
			}
			for _, e := range evs {
				out, err := c.AppendEvent(nil, e)
				if err != nil || conn.WriteFrame(out) != nil {
					return
				}
			}
		}
	}()
	return g
}

func (g *goChild) Conn() transport.Conn { return g.parent }

func (g *goChild) Kill() error {
	g.kill.Do(func() { g.own.Close() })
	return nil
}

func (g *goChild) Close(ctx context.Context) error {
	g.parent.Close()
	select {
	case <-g.done:
	case <-ctx.Done():
		g.Kill()
		<-g.done
	}
	return nil
}

func (g *goChild) Lost(l transport.Loss) error {
	<-g.done
	return &goChildGone{op: l.Op, err: l.Err}
}

func TestSessionOverInMemoryConn(t *testing.T) {
	var children []*goChild
	serve := func(req *message.ParentRequest) []*message.ChildEvent {
		switch b := req.Body.(type) {
		case *message.Configure, *message.Reset:
			return []*message.ChildEvent{ev(&message.Ok{})}
		case *message.Feed:
			switch b.Code {
			case "double(21)":
				return []*message.ChildEvent{funcCall("double", 1, 21)}
			case "hang up":
				return nil
			}
			pr := &message.Print{Segments: []message.PrintSegment{{Text: "hi\n"}}}
			return []*message.ChildEvent{ev(pr), completeInt(int64(len(b.Code)))}
		case *message.ResumeCall:
			c := &message.Complete{Values: b.Values, Value: b.Result.Value}
			return []*message.ChildEvent{stamp(ev(c), 1000)}
		}
		return nil
	}
	launch := Launch{ProtocolVersion: 2, Launcher: LauncherFunc(func(context.Context) (Peer, error) {
		g := launchGoChild(2, serve)
		children = append(children, g)
		return g, nil
	})}
	var out []string
	s, err := Start(bg, launch, Config{Logger: quietLogger, Print: func(_ message.PrintStream, text string) {
		out = append(out, text)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Pid() != 0 || s.Binary() != "" || s.Version() != 2 {
		t.Fatalf("pid %d binary %q version %d", s.Pid(), s.Binary(), s.Version())
	}

	reg := NewRegistry().MustRegister("double", func(n int) int { return 2 * n })
	r, err := s.Run(bg, "double(21)", WithFunctions(reg))
	if err != nil || r.Repr() != "42" {
		t.Fatalf("Run: %v %v", r, err)
	}
	ev, err := s.Feed(bg, "abc")
	if err != nil || ev.Body.EventKind() != message.KindComplete {
		t.Fatalf("Feed: %v %v", ev, err)
	}
	if len(out) != 1 || out[0] != "hi\n" {
		t.Fatalf("print %q", out)
	}
	if err := s.Reset(bg); err != nil {
		t.Fatal(err)
	}

	// The child hangs up: the loss is classified by its own lifecycle.
	_, err = s.Feed(bg, "hang up")
	var gone *goChildGone
	if !errors.As(err, &gone) || gone.op != transport.OpWaiting || Survives(err) {
		t.Fatalf("hang-up: %v", err)
	}
	if _, err := s.Feed(bg, "1"); !errors.Is(err, ErrClosed) || !errors.As(err, &gone) {
		t.Fatalf("after the loss: %v", err)
	}
	if len(children) != 1 {
		t.Fatalf("%d children launched", len(children))
	}
	<-children[0].done
}

// A Go child can be handed to Attach directly and taken back with Detach.
func TestAttachDetachInMemoryConn(t *testing.T) {
	g := launchGoChild(2, func(req *message.ParentRequest) []*message.ChildEvent {
		switch req.Body.(type) {
		case *message.Configure, *message.Reset:
			return []*message.ChildEvent{ev(&message.Ok{})}
		case *message.Dump: // after Reset, the worker has no session
			return []*message.ChildEvent{violation("session has not been configured")}
		case *message.Feed:
			c := &message.Complete{}
			c.Value = c.Values.Add(value.Str("ok"))
			return []*message.ChildEvent{stamp(ev(c), 1000)}
		}
		return nil
	})
	defer g.Close(bg)
	s, err := Attach(bg, g, 2, Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.Run(bg, "x"); err != nil || r.Repr() != "'ok'" {
		t.Fatalf("Run: %v %v", r, err)
	}
	p, err := s.Detach(bg)
	if err != nil || p != Peer(g) {
		t.Fatalf("Detach: %v %v", p, err)
	}
	s2, err := Attach(bg, p, 2, Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s2.Run(bg, "y"); err != nil || r.Repr() != "'ok'" {
		t.Fatalf("Run after re-attach: %v %v", r, err)
	}
	s2.Close()
}
