package codecv4

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/codectest"
	pb5 "github.com/gomonty/monty/internal/pb/montyp5v1"
	pbv "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/message"
)

// mutSides are c's requests and events for codectest.CheckMutant, with
// the generated types of c's schema.
func mutSides(c Coder) (req, ev codectest.OracleSide) {
	v5 := c.dialect() == dialect5
	req = codectest.OracleSide{Name: "request",
		Decode: func(b []byte) (any, error) { return c.DecodeRequest(b, codec.Limits{}) },
		Encode: func(m any) ([]byte, error) { return c.AppendRequest(nil, m.(*message.ParentRequest)) },
		Oracle: func() proto.Message {
			if v5 {
				return &pb5.ParentRequest{}
			}
			return &pbv.ParentRequest{}
		}}
	ev = codectest.OracleSide{Name: "event",
		Decode: func(b []byte) (any, error) { return c.DecodeEvent(b, codec.Limits{}) },
		Encode: func(m any) ([]byte, error) { return c.AppendEvent(nil, m.(*message.ChildEvent)) },
		Oracle: func() proto.Message {
			if v5 {
				return &pb5.ChildEvent{}
			}
			return &pbv.ChildEvent{}
		}}
	if v5 {
		req.Name, ev.Name = "request5", "event5"
	}
	return req, ev
}

// TestMutatedFramesAgreeWithOracle mutates valid frames of every message
// kind, at protocols 4 and 5 (codectest.Mutate: bytes and fields), and
// holds each decode to the generated protobuf code (codectest.CheckMutant):
// what we decode, the oracle decodes to the same message; what we refuse
// fails with a *codec.DecodeError (where the oracle accepts, for prost's
// wire-type rule and the leaf and conversion checks).
func TestMutatedFramesAgreeWithOracle(t *testing.T) {
	type set struct {
		side   codectest.OracleSide
		frames [][]byte
	}
	req4, ev4 := mutSides(V4{})
	req5, ev5 := mutSides(V5())
	var sets [4]set
	sets[0].side, sets[1].side, sets[2].side, sets[3].side = req4, ev4, req5, ev5
	for _, r := range requestCorpus() {
		sets[0].frames = append(sets[0].frames, mustEncodeRequest(t, r))
		sets[2].frames = append(sets[2].frames, mustEncode5Request(t, to5Request(r)))
	}
	for _, r := range request5Corpus() {
		sets[2].frames = append(sets[2].frames, mustEncode5Request(t, r))
	}
	for _, e := range eventCorpus() {
		sets[1].frames = append(sets[1].frames, mustEncodeEvent(t, e))
		sets[3].frames = append(sets[3].frames, mustEncode5Event(t, to5Event(e)))
	}
	for _, e := range event5Corpus() {
		sets[3].frames = append(sets[3].frames, mustEncode5Event(t, e))
	}
	for _, c := range nodeCorpus() {
		sets[1].frames = append(sets[1].frames, mustEncodeEvent(t, &message.ChildEvent{Body: &message.Complete{Value: c.root, Values: c.g}}))
	}
	var ms []codectest.MutantSet
	for _, s := range sets {
		ms = append(ms, codectest.MutantSet{Side: s.side, Frames: s.frames})
	}
	codectest.RunMutants(t, codectest.MutSeed(5), codectest.MutRounds(300), ms)
}
