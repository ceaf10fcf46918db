package child_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gomonty/monty/child"
	"github.com/gomonty/monty/codec"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/transport"
	"github.com/gomonty/monty/value"
)

// shout is a toy interpreter: every snippet evaluates to itself in upper
// case, after printing its length.
type shout struct{ micros uint64 }

func (e *shout) Configure(context.Context, *message.Configure) error { return nil }

func (e *shout) Feed(_ context.Context, f *message.Feed, out child.Output) (message.Event, error) {
	e.micros++
	out.Print(message.StreamStdout, fmt.Sprintf("%d bytes\n", len(f.Code)))
	c := &message.Complete{}
	c.Value = c.Values.Add(value.Str(strings.ToUpper(f.Code)))
	return c, nil
}

func (e *shout) Resume(context.Context, message.Request, child.Output) (message.Event, error) {
	return nil, &child.Violation{Text: "shout never suspends"}
}

func (e *shout) Dump(context.Context) (message.Event, error) {
	return &message.DumpResult{State: []byte("shout")}, nil
}

func (e *shout) Load(context.Context, []byte, child.Output) (message.Event, error) {
	return &message.Ok{}, nil
}

func (e *shout) Reset(context.Context) error { return nil }
func (e *shout) Stamps() child.Stamps        { return child.Stamps{TotalExecutionMicros: e.micros} }
func (e *shout) Close() error                { return nil }

// Serve a toy engine over in-memory pipes, the way `montygo subprocess`
// serves the relay engine over stdin and stdout.
func ExampleServe() {
	reqR, reqW := io.Pipe()
	evR, evW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		conn := transport.NewStream(reqR, evW, 0)
		done <- child.Serve(context.Background(), conn, &shout{}, child.Options{})
		conn.Close()
	}()

	fw, fr := frame.NewWriter(reqW, 0), frame.NewReader(evR, 0)
	for _, req := range []message.Request{
		&message.Configure{ProtocolVersion: 4},
		&message.Feed{Code: "hello"},
		&message.Shutdown{},
	} {
		b, _ := codecv4.Codec.AppendRequest(nil, &message.ParentRequest{Body: req})
		fw.WriteFrame(b)
		for {
			body, _ := fr.ReadFrame()
			ev, _ := codecv4.Codec.DecodeEvent(body, codec.Limits{})
			switch b := ev.Body.(type) {
			case *message.Print:
				fmt.Print("print: ", b.Segments[0].Text)
				continue
			case *message.Complete:
				fmt.Println("complete:", b.Values.Repr(b.Value))
			default:
				fmt.Println(b.EventKind())
			}
			break
		}
	}
	fmt.Println("served:", <-done)
	// Output:
	// Ok
	// print: 5 bytes
	// complete: 'HELLO'
	// Ok
	// served: <nil>
}
