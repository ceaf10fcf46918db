package codecv2

import (
	"errors"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestProtocol5FieldsRefused checks that protocol 2 refuses, with
// codec.ErrUnsupported, every protocol-5 field the peer would have to act
// on, and leaves out only the informational source positions.
func TestProtocol5FieldsRefused(t *testing.T) {
	u := value.Ptr[uint64]
	for i, r := range []*message.ParentRequest{
		{Body: &message.Configure{ProtocolVersion: 2, Limits: &message.ResourceLimits{MaxFeedDurationMicros: u(1)}}},
		{Body: &message.Configure{ProtocolVersion: 2, Limits: &message.ResourceLimits{MaxTotalSleepMicros: u(1)}}},
		{Body: &message.Configure{ProtocolVersion: 2, OsPolicy: &message.OsPolicy{Clock: message.ClockFixed}}},
		{Body: &message.Configure{ProtocolVersion: 2, Profile: value.Ptr("x")}},
	} {
		if _, err := AppendRequest(nil, r); !errors.Is(err, codec.ErrUnsupported) {
			t.Errorf("request %d: err = %v", i, err)
		}
	}
	for i, e := range []*message.ChildEvent{
		{Body: &message.Ok{}, FeedExecutionMicros: 3},
		{Body: &message.Ok{}, SessionID: []byte("id")},
		{Body: &message.OsCall{Op: message.OpAsyncSleep, Seconds: 1}},
		{Body: &message.OsCall{Op: message.OpTime}},
	} {
		if _, err := AppendEvent(nil, e); !errors.Is(err, codec.ErrUnsupported) {
			t.Errorf("event %d: err = %v", i, err)
		}
	}
	// A position is informational: protocol 2 leaves it out.
	pos := &message.SourceRange{Filename: "<string>", End: 3}
	b, err := AppendEvent(nil, &message.ChildEvent{Body: &message.NameLookup{Name: "x", Position: pos}})
	if err != nil {
		t.Fatal(err)
	}
	e, err := DecodeEvent(b, codec.Limits{})
	if err != nil || e.Body.(*message.NameLookup).Position != nil || e.Body.(*message.NameLookup).Name != "x" {
		t.Fatalf("%v %+v", err, e)
	}
}
