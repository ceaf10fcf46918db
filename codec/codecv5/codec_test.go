package codecv5_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/codec"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	codecv5 "github.com/gomonty/monty/codec/codecv5"
	pb5 "github.com/gomonty/monty/internal/pb/montyp5v1"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

func TestRegistered(t *testing.T) {
	c, ok := codec.ForVersion(protocol.Version5)
	if !ok || c.Version() != 5 || c != codecv5.Codec {
		t.Fatal("codec v5 not registered")
	}
	if got := codec.Versions(); got[0] != 5 || got[1] != 4 {
		t.Fatalf("versions %v", got)
	}
	hi, ok := codec.Highest(protocol.VersionRange{Min: 1, Max: 9})
	if !ok || hi.Version() != 5 {
		t.Fatalf("highest %v", hi)
	}
}

// TestSharedWithV4 checks that what protocol 5 kept is byte-identical to
// protocol 4, and what it moved is not.
func TestSharedWithV4(t *testing.T) {
	var g value.Graph
	root := g.Add(value.List(g.Add(value.Int(1)), g.Add(value.Str("two"))))
	same := []*message.ChildEvent{
		{Body: &message.Complete{Value: root, Values: g}, TotalExecutionMicros: 5},
		{Body: &message.Error{Exception: &message.RaisedException{Type: "ValueError", Message: value.Ptr("x")}}},
		{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "hi\n"}}}},
	}
	for _, e := range same {
		a, err4 := codecv4.AppendEvent(nil, e)
		b, err5 := codecv5.AppendEvent(nil, e)
		if err4 != nil || err5 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%T: v4 % x (%v), v5 % x (%v)", e.Body, a, err4, b, err5)
		}
	}
	getenv := &message.ChildEvent{Body: &message.OsCall{CallID: 1, Op: message.OpGetenv, Key: "K", Default: root, Values: g}}
	a, _ := codecv4.AppendEvent(nil, getenv)
	b, _ := codecv5.AppendEvent(nil, getenv)
	if bytes.Equal(a, b) {
		t.Fatal("OsCall.values did not move")
	}
	var o pb5.ChildEvent
	if err := proto.Unmarshal(b, &o); err != nil || o.GetOsCall().GetValues().GetNodeCount() != uint32(len(g.Nodes)) {
		t.Fatalf("the oracle finds no arena at 50: %v %v", err, &o)
	}
}

func TestDecodeIsBudgeted(t *testing.T) {
	big := bytes.Repeat([]byte{7}, 1<<20)
	frame, err := codecv5.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}, SessionID: big})
	if err != nil {
		t.Fatal(err)
	}
	_, err = codecv5.DecodeEvent(frame, codec.Limits{MaxDecodeBytes: 64 << 10})
	if !errors.Is(err, codec.ErrBudget) {
		t.Fatalf("err = %v, want ErrBudget", err)
	}
	e, err := codecv5.DecodeEvent(frame, codec.Limits{})
	if err != nil || !bytes.Equal(e.SessionID, big) {
		t.Fatalf("%v", err)
	}
}

func TestUnsupportedIsTyped(t *testing.T) {
	_, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: &message.Configure{
		Limits: &message.ResourceLimits{MaxDurationMicros: value.Ptr[uint64](1)}}})
	var ue *codec.UnsupportedError
	var ee *codec.EncodeError
	if !errors.Is(err, codec.ErrUnsupported) || !errors.As(err, &ue) || !errors.As(err, &ee) ||
		ue.Field != "ResourceLimits.MaxDurationMicros" || ue.Version != 5 {
		t.Fatalf("err = %v", err)
	}
}

// An encode refusal names the codec the caller used: at protocol 5 the
// checks shared with protocol 4 used to say "codecv4:".
func TestEncodeErrorsNameCodecV5(t *testing.T) {
	var g value.Graph
	g.Add(value.Int(1))
	for _, c := range []struct {
		name string
		enc  func() error
	}{
		{"graph", func() error {
			_, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: &message.Feed{Code: "x", Values: g,
				Inputs: []message.NamedRef{{Name: "x", Value: 5}}}})
			return err
		}},
		{"kind", func() error {
			_, err := codecv5.AppendRequest(nil, &message.ParentRequest{Body: &message.Configure{OsPolicy: &message.OsPolicy{Clock: 200}}})
			return err
		}},
		{"event", func() error {
			_, err := codecv5.AppendEvent(nil, &message.ChildEvent{Body: &message.Error{Exception: &message.RaisedException{
				Type: "UnicodeDecodeError", Data: &message.UnicodeErrorData{ObjectBytes: []byte{1}, ObjectStr: value.Ptr("x")}}}})
			return err
		}},
	} {
		err := c.enc()
		var ee *codec.EncodeError
		if !errors.As(err, &ee) || !strings.HasPrefix(err.Error(), "codecv5: ") || strings.Contains(err.Error(), "codecv4") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// Example decodes a protocol-5 system sleep and reads its delay.
func Example() {
	frame, err := codecv5.AppendEvent(nil, &message.ChildEvent{
		Body: &message.OsCall{CallID: 7, Op: message.OpSystemSleep, Seconds: 0.25,
			Position: &message.SourceRange{Filename: "<python-input-0>", Start: 0, End: 16}},
		FeedExecutionMicros: 1200,
	})
	if err != nil {
		panic(err)
	}
	ev, err := codecv5.DecodeEvent(frame, codec.Limits{})
	if err != nil {
		panic(err)
	}
	call := ev.Body.(*message.OsCall)
	pos := message.PositionOrZero(call.Position)
	fmt.Println(call.Op, message.SleepDuration(call.Seconds), pos.Filename, pos.Start, pos.End, ev.FeedExecutionMicros)
	// Output: system_sleep 250ms <python-input-0> 0 16 1200
}
