//go:build unix

package relay

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/worker"
)

// serve5Worker is serve5 over an inner worker configured with wc, whose
// turns report a child that ended instead of failing the test; stop ends
// the child (the test's cleanup does too).
func serve5Worker(t *testing.T, wc worker.Config) (do func(message.Request) (*message.ChildEvent, bool), stop func()) {
	t.Helper()
	wc.Binary, wc.Logger = testenv.Worker(t), quiet
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	fr, fw := frame.NewReader(outR, 0), frame.NewWriter(inW, 0)
	eng := New(Config{Worker: wc, Logger: quiet})
	conn := transport.NewStream(inR, outW, 0)
	result := make(chan error, 1)
	go func() {
		err := child.Serve(context.Background(), conn, eng, child.Options{Logger: quiet, Versions: child.SupportedVersions})
		conn.Close()
		result <- err
	}()
	var once sync.Once
	stop = func() { once.Do(func() { inW.Close(); outR.Close(); <-result }) }
	t.Cleanup(stop)
	return func(req message.Request) (*message.ChildEvent, bool) {
		t.Helper()
		b, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: req})
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteFrame(b); err != nil {
			return nil, false
		}
		for {
			body, err := fr.ReadFrame()
			if err != nil {
				return nil, false
			}
			ev, err := codecv5.DecodeEvent(body, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ev.Body.(*message.Print); !ok {
				return ev, true
			}
		}
	}, stop
}

// At protocol 5 over the protocol-2 worker the relay answers the
// sandbox's datetime.now() itself, and the answer echoes the timezone's
// name, so it is a little larger than the call that asked. When the
// answer could not be sent (over the frame cap), the relay reported a
// violation of the parent's Feed, which left Serve's session ready while
// the inner worker still sat at the date call: every later Feed was
// refused ("Feed without a session ready for input") until a Reset. Now
// the call is answered with the ValueError a host answer that cannot be
// sent raises, at the call, and the session goes on.
//
// A frame cap of 4 KiB on the inner connection stands for the protocol's
// 256 MiB; the name grows a byte at a time until the call itself no
// longer fits, passing the lengths where only the answer is too large.
func TestV5ClockAnswerTooLargeRaises(t *testing.T) {
	const frameCap = 4096
	raised := 0
	for n := frameCap - 64; n < frameCap; n++ {
		do, stop := serve5Worker(t, worker.Config{MaxFrameLen: frameCap})
		if ev, ok := do(configure5(nil, nil)); !ok || ev.Body.EventKind() != message.KindOk {
			t.Fatal("Configure refused")
		}
		code := "import datetime\nz = datetime.timezone(datetime.timedelta(0), 'x' * " + strconv.Itoa(n) + ")\nd = datetime.datetime.now(z)\n1"
		ev, ok := do(&message.Feed{Code: code})
		if !ok || ev.Body.EventKind() == message.KindFatalError {
			// The call itself is over this cap (the worker's own is the
			// protocol's): the inner worker is lost.
			stop()
			break
		}
		switch b := ev.Body.(type) {
		case *message.Complete:
		case *message.Error:
			if strings.HasPrefix(b.Exception.Msg(), "protocol violation: ") {
				t.Fatalf("name of %d: the Feed was refused, its call unanswered: %s", n, describe(b))
			}
			if b.Exception.Type != "ValueError" || !strings.Contains(b.Exception.Msg(), "exceeds") {
				t.Fatalf("name of %d: %s", n, describe(b))
			}
			raised++
		default:
			t.Fatalf("name of %d: %s", n, describe(ev.Body))
		}
		if ev, ok := do(&message.Feed{Code: "1 + 1"}); !ok {
			t.Fatalf("name of %d: the child ended", n)
		} else {
			wantRepr(t, ev, "2")
		}
		stop() // one worker at a time
	}
	if raised == 0 {
		t.Fatal("no name length made the answer alone too large")
	}
}
