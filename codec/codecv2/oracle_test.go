package codecv2

import (
	"fmt"
	"math/big"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/codec"
	pb "github.com/gomonty/monty/internal/pb/montyp2v1"
	"github.com/gomonty/monty/internal/pb/pbconv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The generated protobuf-go types of internal/pb/montyp2v1 serve as an
// independent reference: a domain message converted to them by the code
// below must equal what proto.Unmarshal makes of our bytes, and what
// proto.Marshal makes of them (in protobuf-go's own field order) must
// decode with our decoder to the same domain message.

func pbUUID(id value.UUID) *pb.Uuid { return &pb.Uuid{Data: append([]byte(nil), id[:]...)} }

func pbDict(g *value.Graph, ps []value.Pair) *pb.Dict {
	d := &pb.Dict{}
	for _, p := range ps {
		d.Pairs = append(d.Pairs, &pb.Pair{Key: pbObject(g, p.Key), Value: pbObject(g, p.Value)})
	}
	return d
}

func pbType(g *value.Graph, t *value.Type) *pb.Type {
	x := &pb.Type{Name: t.Name, Origin: pb.TypeOrigin(t.Origin), IsDataclass: t.IsDataclass}
	if t.Origin != value.OriginBuiltin {
		x.Id = pbUUID(t.ID)
	}
	if t.Attrs != nil {
		x.Attrs = pbDict(g, t.Attrs)
	}
	return x
}

func pbObject(g *value.Graph, id value.NodeID) *pb.MontyObject {
	o := &pb.MontyObject{}
	switch n := &g.Nodes[id]; {
	case pbconv.Node(o.ProtoReflect(), g, n, values{}):
	case n.Kind == value.KindBigInt && n.BigInt().IsInt64():
		o.Kind = &pb.MontyObject_Int{Int: n.BigInt().Int64()}
	case n.Kind == value.KindBigInt:
		b := n.BigInt()
		o.Kind = &pb.MontyObject_Bigint{Bigint: &pb.BigInt{Negative: b.Sign() < 0, Magnitude: new(big.Int).Abs(b).Bytes()}}
	case n.Kind == value.KindType:
		o.Kind = &pb.MontyObject_Type{Type: pbType(g, n.Ext().(*value.Type))}
	case n.Kind == value.KindClassInstance:
		ci := n.Ext().(*value.ClassInstance)
		o.Kind = &pb.MontyObject_ClassInstance{ClassInstance: &pb.ClassInstance{
			Type: pbType(g, g.Nodes[ci.Class].Ext().(*value.Type)), InstanceId: pbUUID(ci.InstanceID), Attrs: pbDict(g, ci.Attrs)}}
	case n.Kind == value.KindCycle:
		o.Kind = &pb.MontyObject_Cycle{Cycle: &pb.Cycle{Identity: n.Num, Placeholder: n.Text()}}
	default:
		panic(fmt.Sprintf("pbObject: kind %s", n.Kind))
	}
	return o
}

// values converts protocol 2's values: a MontyObject tree in place, no
// arena.
type values struct{}

func (values) Value(_ protoreflect.FieldDescriptor, g *value.Graph, id value.NodeID) protoreflect.Value {
	return protoreflect.ValueOfMessage(pbObject(g, id).ProtoReflect())
}

func (values) Arena(protoreflect.Message, *value.Graph) {}

func pbRequest(r *message.ParentRequest) *pb.ParentRequest {
	return pbconv.New[*pb.ParentRequest](pbconv.Request, r, values{})
}

func pbEvent(e *message.ChildEvent) *pb.ChildEvent {
	return pbconv.New[*pb.ChildEvent](pbconv.Event, e, values{})
}

var stock = proto.MarshalOptions{Deterministic: true}

// checkOracle cross-checks one domain message m both ways: encode and
// decode are our codec's, toPB the oracle's conversion; same compares what
// we decoded of protobuf-go's bytes with m, given our bytes.
func checkOracle[M any](t *testing.T, where string, m M, encode func([]byte, M) ([]byte, error), toPB func(M) proto.Message,
	decode func([]byte, codec.Limits) (M, error), same func(ours []byte, back M) error) {
	t.Helper()
	ours, err := encode(nil, m)
	if err != nil {
		t.Errorf("%s: encode: %v", where, err)
		return
	}
	want := toPB(m)
	got := want.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(ours, got); err != nil {
		t.Errorf("%s: generated types refuse our bytes: %v", where, err)
		return
	}
	if !proto.Equal(got, want) {
		t.Errorf("%s: generated view of our bytes differs\n got %v\nwant %v", where, got, want)
	}
	theirs, err := stock.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decode(theirs, codec.Limits{})
	if err != nil {
		t.Errorf("%s: our decoder refuses protobuf-go's bytes: %v", where, err)
		return
	}
	if err := same(ours, back); err != nil {
		t.Errorf("%s: %v", where, err)
	}
}

func checkEventOracle(t *testing.T, where string, ev *message.ChildEvent) {
	t.Helper()
	checkOracle(t, where, ev, AppendEvent, func(e *message.ChildEvent) proto.Message { return pbEvent(e) }, DecodeEvent,
		func(_ []byte, back *message.ChildEvent) error { return sameEvent(back, cloneEvent(t, ev)) })
}

func checkRequestOracle(t *testing.T, where string, r *message.ParentRequest) {
	t.Helper()
	checkOracle(t, where, r, AppendRequest, func(r *message.ParentRequest) proto.Message { return pbRequest(r) }, DecodeRequest,
		func(ours []byte, back *message.ParentRequest) error {
			again, err := DecodeRequest(ours, codec.Limits{})
			if err != nil {
				return err
			}
			return sameRequest(back, again)
		})
}

// cloneEvent round-trips an event through our codec so that comparisons
// can clear its graph without touching the original.
func cloneEvent(t *testing.T, ev *message.ChildEvent) *message.ChildEvent {
	t.Helper()
	b, err := AppendEvent(nil, ev)
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeEvent(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestOracleRecorded cross-checks every recorded frame with the generated
// types: their decoding must agree with ours, and protobuf-go's
// re-encoding (oneof arms after the other fields) must decode with ours to
// the same message.
func TestOracleRecorded(t *testing.T) {
	n := 0
	for _, v := range loadVectors(t) {
		for i, h := range v.Responses {
			frame := unhex(t, h)
			ev, err := DecodeEvent(frame, codec.Limits{})
			if err != nil {
				t.Fatalf("%s: %v", v.Name, err)
			}
			rec := new(pb.ChildEvent)
			if err := proto.Unmarshal(frame, rec); err != nil {
				t.Errorf("%s: response %d: generated types refuse it: %v", v.Name, i, err)
				continue
			}
			if want := pbEvent(ev); !proto.Equal(rec, want) {
				t.Errorf("%s: response %d: decoders disagree\n generated %v\n ours      %v", v.Name, i, rec, want)
			}
			checkEventOracle(t, fmt.Sprintf("%s: response %d", v.Name, i), ev)
			n++
		}
		for i, sf := range v.sentFrames(t) {
			r, err := DecodeRequest(sf.frame, codec.Limits{})
			if err != nil || unknownFields[v.Name] != "" {
				continue // refused frames are covered by TestReplayRequests
			}
			rec := new(pb.ParentRequest)
			if err := proto.Unmarshal(sf.frame, rec); err != nil {
				t.Errorf("%s: request %d: generated types refuse it: %v", v.Name, i, err)
				continue
			}
			// A value arm repeated decodes afresh in the worker and in
			// ours, where protobuf-go merges it (armRepeats).
			if want := pbRequest(r); !proto.Equal(rec, want) && valueNormalised[v.Name] == "" &&
				!armRepeats(rec.ProtoReflect().Descriptor(), sf.frame) {
				t.Errorf("%s: request %d: decoders disagree\n generated %v\n ours      %v", v.Name, i, rec, want)
			}
			checkRequestOracle(t, fmt.Sprintf("%s: request %d", v.Name, i), r)
			n++
		}
	}
	t.Logf("%d frames cross-checked", n)
}

// TestOracleConstructed cross-checks messages built in Go, covering every
// value kind and every message.
func TestOracleConstructed(t *testing.T) {
	g, roots := allKinds()
	feed := &message.Feed{Code: "v", Values: *g, SkipTypeCheck: true}
	for i, id := range roots {
		feed.Inputs = append(feed.Inputs, message.NamedRef{Name: fmt.Sprint("v", i), Value: id})
	}
	exc := &message.RaisedException{Type: "UnicodeDecodeError", Message: value.Ptr("m"),
		Traceback: []message.StackFrame{{Filename: "f.py", Start: message.CodeLoc{Line: 1, Column: 2}, End: message.CodeLoc{Line: 1, Column: 5},
			FrameName: value.Ptr("<module>"), PreviewLine: value.Ptr("abcdef"), HideCaret: true},
			{Filename: "g.py", HideFrameName: true}},
		Data: &message.UnicodeErrorData{Encoding: "utf-8", ObjectBytes: []byte{0xff}, Start: 0, End: 1, Reason: "r"}}
	jexc := &message.RaisedException{Type: "json.JSONDecodeError", Data: &message.JSONErrorData{Msg: "x", Doc: value.Ptr(""), Lineno: 1, Colno: 1}}
	requests := []*message.ParentRequest{
		{Body: &message.Configure{ScriptName: "main.py", Limits: &message.ResourceLimits{MaxDurationMicros: value.Ptr[uint64](0),
			MaxMemoryBytes: value.Ptr[uint64](1 << 40), GCInterval: value.Ptr[uint64](7), MaxRecursionDepth: value.Ptr[uint64](50),
			MaxSuspensions: value.Ptr[uint64](0)}, TypeCheck: true, TypeCheckStubs: value.Ptr(""), MontyVersion: "0.0.23",
			AssertMessageAnnotations: value.Ptr[uint32](0), TypeCheckFormat: message.TypeCheckFormat(0xffffffff),
			TypeCheckColor: true, ProtocolVersion: 2, PrintFlushIntervalMs: value.Ptr[uint32](0)}},
		{Body: &message.Configure{Limits: &message.ResourceLimits{}}},
		{Body: &message.InstallDependencies{Requirements: []string{"", "numpy"}}},
		{Body: feed, TraceParent: value.Ptr("")},
		{Body: &message.ResumeCall{CallID: 7, Values: *g, Result: &message.ExtResult{Kind: message.ResultReturn, Value: roots[len(roots)-3]}}},
		{Body: &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultError, Error: exc}}},
		{Body: &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultFuture}}},
		{Body: &message.ResumeCall{Result: &message.ExtResult{Kind: message.ResultNotFound}}},
		{Body: &message.ResumeCall{CallID: 1 << 31, Result: &message.ExtResult{Kind: message.ResultNotHandled}}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupValue, Value: roots[0], Values: *g}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupUndefined}},
		{Body: &message.ResumeNameLookup{Kind: message.LookupError, Error: jexc}},
		{Body: &message.ResumeFutures{Values: *g, Results: []message.FutureResult{
			{CallID: 0, Result: &message.ExtResult{Kind: message.ResultReturn, Value: roots[5]}},
			{CallID: 3, Result: &message.ExtResult{Kind: message.ResultFuture, Future: 3}}}}},
		{Body: &message.Dump{}},
		{Body: &message.Load{State: []byte("MONTY\x00")}},
		{Body: &message.Reset{}},
		{Body: &message.Shutdown{}},
		{Body: &message.AbortFeed{Exception: &message.RaisedException{Type: "TimeoutError", Message: value.Ptr("")}}},
		{},
	}
	for i, r := range requests {
		checkRequestOracle(t, fmt.Sprintf("request %d (%T)", i, r.Body), r)
	}
	uid := value.UUID{0xaa, 1}
	events := []*message.ChildEvent{
		{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStdout, Text: "hé\n"}}}},
		{Body: &message.Print{Segments: []message.PrintSegment{{}}}},
		{Body: &message.FunctionCall{FunctionName: "grow", Args: roots[:10], Kwargs: []value.Pair{{Key: roots[11], Value: roots[20]}},
			CallID: 3, ObjectID: &uid, Values: *g}, TotalExecutionMicros: 5, MaxSuspensions: value.Ptr[uint64](1000)},
		{Body: &message.FunctionCall{FunctionName: "f"}},
		{Body: &message.NameLookup{Name: "x", ObjectID: &uid}},
		{Body: &message.NameLookup{}},
		{Body: &message.ResolveFutures{PendingCallIDs: []uint32{2, 0, 1 << 31}}},
		{Body: &message.ResolveFutures{}},
		{Body: &message.Complete{Value: roots[len(roots)-1], Values: *g}, MaxDurationMicros: value.Ptr[uint64](0),
			RestoredScriptName: value.Ptr("")},
		{Body: &message.Error{Exception: exc}},
		{Body: &message.Error{Exception: jexc}},
		{Body: &message.TypingError{Diagnostics: "error[x]"}},
		{Body: &message.DumpResult{State: []byte{1, 2}}},
		{Body: &message.Ok{}},
		{Body: &message.FatalError{Message: "bye"}},
		{Body: &message.ShutdownDump{}},
		{Body: &message.ShutdownDump{Dump: value.Ptr([]byte{})}},
		{TotalExecutionMicros: 1},
	}
	for op := message.OpExists; op <= message.OpDateTimeNow; op++ {
		oc := &message.OsCall{CallID: uint32(op), Op: op, Path: "/p", Dst: "/q", Text: "t", Data: []byte{9},
			Mode: "rb", Parents: true, ExistOK: true, Key: "HOME"}
		switch op {
		case message.OpGetenv:
			gg := &value.Graph{}
			oc.Default = gg.Add(value.None())
			oc.Values = *gg
		case message.OpDateTimeNow:
			oc.TZ = &value.TimeZone{Offset: -3600, Name: value.Ptr("X")}
		}
		// Fields an op does not carry are not encoded; clear them so the
		// decoded message compares equal.
		clearUnused(oc)
		events = append(events, &message.ChildEvent{Body: oc})
	}
	events = append(events, &message.ChildEvent{Body: &message.OsCall{Op: message.OpDateTimeNow, TZ: &value.TimeZone{}}})
	for i, ev := range events {
		checkEventOracle(t, fmt.Sprintf("event %d (%T)", i, ev.Body), ev)
	}
}

func clearUnused(o *message.OsCall) {
	keep := *o
	*o = message.OsCall{CallID: keep.CallID, Op: keep.Op, Values: keep.Values}
	if keep.Op <= message.OpRmdir {
		o.Path = keep.Path
	}
	switch keep.Op {
	case message.OpWriteText, message.OpAppendText:
		o.Path, o.Text = keep.Path, keep.Text
	case message.OpWriteBytes, message.OpAppendBytes:
		o.Path, o.Data = keep.Path, keep.Data
	case message.OpOpen:
		o.Path, o.Mode = keep.Path, keep.Mode
	case message.OpMkdir:
		o.Path, o.Parents, o.ExistOK = keep.Path, keep.Parents, keep.ExistOK
	case message.OpRename:
		o.Path, o.Dst = keep.Path, keep.Dst
	case message.OpGetenv:
		o.Key, o.Default = keep.Key, keep.Default
	case message.OpDateTimeNow:
		o.TZ = keep.TZ
	}
}
