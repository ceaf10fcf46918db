package codecv2

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
	pb "github.com/gomonty/monty/internal/pb/montyp2v1"
	"github.com/gomonty/monty/message"
)

// TestMutatedFramesAgreeWithOracle mutates the recorded frames
// (codectest.Mutate: bytes and fields) and holds each decode to the
// generated protobuf code (codectest.CheckMutant): what we decode, the
// oracle decodes to the same message; what we refuse fails with a
// *codec.DecodeError. Mutants in which a value arm occurs twice are left
// to the live merge tests: there the worker departs from protobuf
// (armRepeats).
func TestMutatedFramesAgreeWithOracle(t *testing.T) {
	reqs := codectest.OracleSide{Name: "request",
		Decode: func(b []byte) (any, error) { return DecodeRequest(b, codec.Limits{}) },
		Encode: func(m any) ([]byte, error) { return AppendRequest(nil, m.(*message.ParentRequest)) },
		Oracle: func() proto.Message { return &pb.ParentRequest{} }}
	evs := codectest.OracleSide{Name: "event",
		Decode: func(b []byte) (any, error) { return DecodeEvent(b, codec.Limits{}) },
		Encode: func(m any) ([]byte, error) { return AppendEvent(nil, m.(*message.ChildEvent)) },
		Oracle: func() proto.Message { return &pb.ChildEvent{} }}
	var reqFrames, evFrames [][]byte
	for _, v := range loadVectors(t) {
		for _, sf := range v.sentFrames(t) {
			if len(sf.frame) <= 4<<10 {
				reqFrames = append(reqFrames, sf.frame)
			}
		}
		for _, h := range v.Responses {
			if b := unhex(t, h); len(b) <= 4<<10 {
				evFrames = append(evFrames, b)
			}
		}
	}
	if len(reqFrames) == 0 || len(evFrames) == 0 {
		t.Fatal("no recorded frames")
	}
	skip := func(md protoreflect.MessageDescriptor) func([]byte) bool {
		return func(f []byte) bool { return armRepeats(md, f) }
	}
	codectest.RunMutants(t, codectest.MutSeed(2), codectest.MutRounds(15), []codectest.MutantSet{
		{Side: reqs, Frames: reqFrames, Skip: skip(reqs.Oracle().ProtoReflect().Descriptor())},
		{Side: evs, Frames: evFrames, Skip: skip(evs.Oracle().ProtoReflect().Descriptor())},
	})
}

// armRepeats reports whether b, a message md, holds a MontyObject whose
// arms occur more than once once its occurrences merge: there the
// worker's hand-written MontyObject decodes each arm occurrence afresh
// (pobj; TestLiveMerge), where protobuf-go merges the arm.
func armRepeats(md protoreflect.MessageDescriptor, b []byte) bool {
	merged := map[protowire.Number][]byte{}
	var order []protowire.Number
	arms := 0
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, wt, b[n:])
		if m < 0 {
			return false
		}
		fd := md.Fields().ByNumber(num)
		if fd != nil && md.Name() == "MontyObject" {
			arms++
		}
		if fd != nil && fd.Kind() == protoreflect.MessageKind && wt == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[n:])
			if fd.IsList() {
				if armRepeats(fd.Message(), v) {
					return true
				}
			} else {
				if _, ok := merged[num]; !ok {
					order = append(order, num)
				}
				merged[num] = append(merged[num], v...)
			}
		}
		b = b[n+m:]
	}
	if arms > 1 {
		return true
	}
	for _, num := range order {
		if armRepeats(md.Fields().ByNumber(num).Message(), merged[num]) {
			return true
		}
	}
	return false
}
