package codecv2

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// TestEncodeDepthAgreesWithDecode checks, at every place a value root sits
// in a request or event, that the encoder refuses exactly the values the
// worker's decoder would refuse for depth: a value nested d lists deep is
// encoded by us, and marshalled by protobuf-go (which has no such limit),
// for depths around the limit; our encode must fail exactly when decoding the
// oracle's bytes fails. The encoder works out each place's message level
// from the schema (chk), so a place given the wrong level shows here.
func TestEncodeDepthAgreesWithDecode(t *testing.T) {
	places := []struct {
		name    string
		request func(g *value.Graph, id value.NodeID) *message.ParentRequest
		event   func(g *value.Graph, id value.NodeID) *message.ChildEvent
	}{
		{name: "Feed.inputs", request: func(g *value.Graph, id value.NodeID) *message.ParentRequest {
			return &message.ParentRequest{Body: &message.Feed{Code: "v", Values: *g, Inputs: []message.NamedRef{{Name: "v", Value: id}}}}
		}},
		{name: "ResumeCall.result", request: func(g *value.Graph, id value.NodeID) *message.ParentRequest {
			return &message.ParentRequest{Body: &message.ResumeCall{CallID: 1, Values: *g,
				Result: &message.ExtResult{Kind: message.ResultReturn, Value: id}}}
		}},
		{name: "ResumeNameLookup.value", request: func(g *value.Graph, id value.NodeID) *message.ParentRequest {
			return &message.ParentRequest{Body: &message.ResumeNameLookup{Kind: message.LookupValue, Value: id, Values: *g}}
		}},
		{name: "ResumeFutures.results", request: func(g *value.Graph, id value.NodeID) *message.ParentRequest {
			return &message.ParentRequest{Body: &message.ResumeFutures{Values: *g, Results: []message.FutureResult{
				{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: id}}}}}
		}},
		{name: "FunctionCall.args", event: func(g *value.Graph, id value.NodeID) *message.ChildEvent {
			return &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", Values: *g, Args: []value.NodeID{id}}}
		}},
		{name: "FunctionCall.kwargs key", event: func(g *value.Graph, id value.NodeID) *message.ChildEvent {
			k := g.Add(value.Str("k"))
			return &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", Values: *g, Kwargs: []value.Pair{{Key: id, Value: k}}}}
		}},
		{name: "FunctionCall.kwargs value", event: func(g *value.Graph, id value.NodeID) *message.ChildEvent {
			k := g.Add(value.Str("k"))
			return &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", Values: *g, Kwargs: []value.Pair{{Key: k, Value: id}}}}
		}},
		{name: "OsCall.getenv", event: func(g *value.Graph, id value.NodeID) *message.ChildEvent {
			return &message.ChildEvent{Body: &message.OsCall{CallID: 1, Op: message.OpGetenv, Key: "K", Default: id, Values: *g}}
		}},
		{name: "Complete.value", event: func(g *value.Graph, id value.NodeID) *message.ChildEvent {
			return &message.ChildEvent{Body: &message.Complete{Value: id, Values: *g}}
		}},
	}
	for _, p := range places {
		refusals := 0
		// Each list is two message levels (MontyObject, ObjectList); an
		// empty list as the innermost value is one level more than an int,
		// so the two leaves between them try every level.
		for d := 0; d < 18; d++ {
			leaf := value.Int(1)
			if d%2 == 1 {
				leaf = value.List()
			}
			g, id := listGraph(44+d/2, leaf)
			var ours error
			var oracle []byte
			var decodeErr error
			if p.request != nil {
				r := p.request(g, id)
				_, ours = AppendRequest(nil, r)
				oracle = mustMarshal(t, pbRequest(r))
				_, decodeErr = DecodeRequest(oracle, codec.Limits{})
			} else {
				e := p.event(g, id)
				_, ours = AppendEvent(nil, e)
				oracle = mustMarshal(t, pbEvent(e))
				_, decodeErr = DecodeEvent(oracle, codec.Limits{})
			}
			if (ours == nil) != (decodeErr == nil) {
				t.Errorf("%s, %d lists around %v: encode error %v, decode of the same value's bytes %v", p.name, 44+d/2, leaf.Kind, ours, decodeErr)
			}
			if ours != nil {
				refusals++
			}
		}
		if refusals == 0 || refusals == 18 {
			t.Errorf("%s: the limit is not within 44 to 52 lists (%d refusals); the test shows nothing", p.name, refusals)
		}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(fmt.Errorf("oracle marshal: %w", err))
	}
	return b
}
