//go:build linux

package session

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport"
)

// This file pins down what an unsolicited (stray) event can and cannot do.
// The protocol has no request ids: an event is an answer because it is the
// first turn-ending event read while a request is outstanding. So the
// parent checks, before each request and right after each answer, that
// nothing else is waiting. A stray the child writes while no request is
// outstanding, or right behind an answer, is then always caught and never
// reaches a caller. An event the child writes while a request is
// outstanding is that request's answer, whichever moment the child picked
// to write it: a child that writes a stale value then has simply answered
// with it (it could send any value), and its late real answer is caught as
// a stray at the next request.

// pipeChild is an in-process worker over real OS pipes (so that written
// frames wait in the kernel, as with a process), scripted by the test.
type pipeChild struct {
	parent *transport.Stream
	in     *transport.Stream // the child's end: reads requests
	out    *transport.Stream // the child's end: writes events
	codec  codec.Codec
	files  []*os.File
}

// fionread is a pipe read end that can say whether bytes are waiting.
type fionread struct{ *os.File }

func (f fionread) Pending() bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var avail int32
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&avail)))
	})
	return avail > 0
}

func newPipeChild(t *testing.T) *pipeChild {
	t.Helper()
	reqR, reqW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := codec.ForVersion(2)
	p := &pipeChild{
		parent: transport.NewStream(fionread{evR}, reqW, 0),
		in:     transport.NewStream(reqR, nil, 0),
		out:    transport.NewStream(nil, evW, 0),
		codec:  c,
		files:  []*os.File{reqR, reqW, evR, evW},
	}
	t.Cleanup(func() {
		for _, f := range p.files {
			f.Close()
		}
	})
	return p
}

func (p *pipeChild) Conn() transport.Conn { return p.parent }
func (p *pipeChild) Kill() error {
	p.files[0].Close()
	p.files[3].Close()
	return nil
}
func (p *pipeChild) Close(context.Context) error { p.Kill(); return p.parent.Close() }
func (p *pipeChild) Lost(l transport.Loss) error { return &goChildGone{op: l.Op, err: l.Err} }

// next reads the next request.
func (p *pipeChild) next(t *testing.T) *message.ParentRequest {
	body, err := p.in.ReadFrame()
	if err != nil {
		t.Errorf("child read: %v", err)
		return nil
	}
	req, err := p.codec.DecodeRequest(body, codec.Limits{})
	if err != nil {
		t.Errorf("child decode: %v", err)
	}
	return req
}

// send writes events; together when several, in one write.
func (p *pipeChild) send(t *testing.T, evs ...*message.ChildEvent) {
	var all []byte
	for _, e := range evs {
		b, err := p.codec.AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, byte(len(b)), byte(len(b)>>8), byte(len(b)>>16), byte(len(b)>>24))
		all = append(all, b...)
	}
	if _, err := p.files[3].Write(all); err != nil {
		t.Errorf("child write: %v", err)
	}
}

// strayCases script the child after its Configure; each returns what the
// parent should see for the second feed.
func TestStrayEventNeverAnswersALaterRequest(t *testing.T) {
	const secret = 424242 // the first feed's value, which must not leak into the second
	cases := []struct {
		name string
		// child runs the child's side of the two feeds; proceed is closed
		// once the parent has the first answer, written once the stray is
		// in the pipe.
		child func(t *testing.T, p *pipeChild, proceed <-chan struct{}, written chan<- struct{})
		// firstOK: the first feed returns secret; else it fails as a stray.
		firstOK bool
	}{
		{"behind the answer", func(t *testing.T, p *pipeChild, _ <-chan struct{}, written chan<- struct{}) {
			p.next(t)
			p.send(t, completeInt(secret), completeInt(secret))
			close(written)
		}, false},
		{"between turns", func(t *testing.T, p *pipeChild, proceed <-chan struct{}, written chan<- struct{}) {
			p.next(t)
			p.send(t, completeInt(secret))
			<-proceed
			p.send(t, completeInt(secret)) // before the parent's next request
			close(written)
		}, true},
		{"unsolicited ok between turns", func(t *testing.T, p *pipeChild, proceed <-chan struct{}, written chan<- struct{}) {
			p.next(t)
			p.send(t, completeInt(secret))
			<-proceed
			p.send(t, ev(&message.Ok{}))
			close(written)
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPipeChild(t)
			configured := make(chan struct{})
			proceed, written := make(chan struct{}), make(chan struct{})
			go func() {
				p.next(t) // Configure
				p.send(t, ev(&message.Ok{}))
				close(configured)
				c.child(t, p, proceed, written)
			}()
			s, err := Attach(bg, p, 2, Config{Logger: quietLogger})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			<-configured
			first, err := s.Feed(bg, "first")
			close(proceed)
			<-written // barrier: the stray is in the pipe
			var pe *ProtocolError
			if c.firstOK {
				if err != nil || first.Body.(*message.Complete).Values.Node(first.Body.(*message.Complete).Value).Int() != secret {
					t.Fatalf("first feed: %v %v", first, err)
				}
				second, err := s.Feed(bg, "second")
				if !errors.As(err, &pe) || !errors.Is(err, ErrStrayEvent) {
					t.Fatalf("second feed got %v, %v; want the stray caught", second, err)
				}
			} else if !errors.As(err, &pe) || !errors.Is(err, ErrStrayEvent) {
				t.Fatalf("first feed got %v, %v; want the stray caught", first, err)
			}
			if s.State() != StateClosed {
				t.Fatalf("state %v: the worker must be discarded", s.State())
			}
			if n := strings.Count(pe.Error(), "no request outstanding"); n != 1 {
				t.Errorf("%q says it %d times", pe.Error(), n)
			}
		})
	}
}

// A child that writes a stale value while the next request is outstanding
// has answered that request with it: it is delivered, and the child's late
// real answer, once in the pipe, is caught as a stray before anything else
// is sent. (Had the parent sent the third request before that late answer
// arrived, the late answer would have been the third request's answer: the
// child picks its answers, and no protocol field ties an event to a
// request. It is the child's value either way, never another session's:
// across pool checkouts, Reset and Configure accept only Ok.)
func TestStaleAnswerWhileRequestOutstandingIsTheChildsAnswer(t *testing.T) {
	p := newPipeChild(t)
	late := make(chan struct{})
	go func() {
		p.next(t) // Configure
		p.send(t, ev(&message.Ok{}))
		p.next(t) // first feed
		p.send(t, completeInt(1))
		// Wait for the second request to be in the pipe, then answer
		// "stale" before reading it, then answer it for real.
		for !(fionread{p.files[0]}).Pending() {
			runtime.Gosched()
		}
		p.send(t, completeInt(1))
		p.next(t)
		p.send(t, completeInt(2))
		close(late)
	}()
	s, err := Attach(bg, p, 2, Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Feed(bg, "first"); err != nil {
		t.Fatal(err)
	}
	second, err := s.Feed(bg, "second")
	if err != nil {
		// The stale answer and the real one may arrive together: then the
		// second is caught behind the first.
		if !errors.Is(err, ErrStrayEvent) {
			t.Fatalf("second feed: %v", err)
		}
		return
	}
	c := second.Body.(*message.Complete)
	if got := c.Values.Node(c.Value).Int(); got != 1 {
		t.Fatalf("second feed got %d", got)
	}
	<-late // barrier: the late answer is in the pipe
	if _, err := s.Feed(bg, "third"); !errors.Is(err, ErrStrayEvent) {
		t.Fatalf("third feed: %v; want the late answer caught as a stray", err)
	}
}

// Detach fences its Reset: a child that answers one request twice (an
// unsolicited Ok taken for Reset's answer) is caught before the worker can
// serve another session, instead of shifting every later answer by one.
func TestDetachFenceCatchesShiftedAnswers(t *testing.T) {
	p := newPipeChild(t)
	go func() {
		p.next(t) // Configure
		p.send(t, ev(&message.Ok{}))
		p.next(t) // Reset
		p.send(t, ev(&message.Ok{}))
		p.send(t, ev(&message.Ok{})) // one too many
		// The fence, unless the parent already caught the extra Ok
		// right behind the first and dropped the worker.
		if _, err := p.in.ReadFrame(); err == nil {
			p.send(t, violation("session has not been configured"))
		}
	}()
	s, err := Attach(bg, p, 2, Config{Logger: quietLogger})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Detach(bg); !errors.Is(err, ErrProtocol) {
		t.Fatalf("Detach of a child that answered Reset twice: %v", err)
	}
	if s.State() != StateClosed {
		t.Fatalf("state %v", s.State())
	}
}
