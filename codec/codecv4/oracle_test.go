package codecv4

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/gomonty/monty/codec"
	pbv "github.com/gomonty/monty/internal/pb/montyv1"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// canonicalize rewrites protobuf bytes of message md with the fields of
// every message level in ascending field-number order (a stable sort, so
// repeated fields keep their order). protobuf-go writes oneof arms after
// the regular fields; the protocol's canonical form, and ours, puts them in
// their numeric place.
func canonicalize(t testing.TB, md protoreflect.MessageDescriptor, b []byte) []byte {
	type field struct {
		num protowire.Number
		raw []byte
	}
	var fs []field
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag in %s", md.FullName())
		}
		m := protowire.ConsumeFieldValue(num, wt, b[n:])
		if m < 0 {
			t.Fatalf("bad value in %s.%d", md.FullName(), num)
		}
		raw := b[:n+m]
		if fd := md.Fields().ByNumber(num); fd != nil && fd.Kind() == protoreflect.MessageKind && wt == protowire.BytesType {
			payload, _ := protowire.ConsumeBytes(b[n:])
			raw = protowire.AppendBytes(protowire.AppendTag(nil, num, wt), canonicalize(t, fd.Message(), payload))
		}
		fs = append(fs, field{num, raw})
		b = b[n+m:]
	}
	slices.SortStableFunc(fs, func(a, b field) int { return int(a.num) - int(b.num) })
	var out []byte
	for _, f := range fs {
		out = append(out, f.raw...)
	}
	return out
}

// checkCanonical verifies that every message level of b has its fields in
// ascending order, with only repeated fields appearing more than once (and
// then consecutively), no field unknown to the schema, and no
// implicit-presence scalar written at its zero value.
func checkCanonical(md protoreflect.MessageDescriptor, b []byte) error {
	last := protowire.Number(0)
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%s: bad tag", md.FullName())
		}
		fd := md.Fields().ByNumber(num)
		if fd == nil {
			return fmt.Errorf("%s: unknown field %d", md.FullName(), num)
		}
		if num < last || (num == last && !fd.IsList()) {
			return fmt.Errorf("%s: field %d after %d", md.FullName(), num, last)
		}
		last = num
		m := protowire.ConsumeFieldValue(num, wt, b[n:])
		val := b[n : n+m]
		implicit := !fd.HasPresence() && !fd.IsList()
		switch {
		case fd.Kind() == protoreflect.MessageKind:
			payload, _ := protowire.ConsumeBytes(val)
			if err := checkCanonical(fd.Message(), payload); err != nil {
				return fmt.Errorf("%s.%s: %w", md.Name(), fd.Name(), err)
			}
		case implicit && wt == protowire.VarintType:
			if v, _ := protowire.ConsumeVarint(val); v == 0 {
				return fmt.Errorf("%s.%s: zero written", md.Name(), fd.Name())
			}
		case implicit && wt == protowire.BytesType:
			if v, _ := protowire.ConsumeBytes(val); len(v) == 0 {
				return fmt.Errorf("%s.%s: empty written", md.Name(), fd.Name())
			}
		}
		if fd.IsList() && wt == protowire.BytesType && fd.Kind() != protoreflect.MessageKind &&
			fd.Kind() != protoreflect.StringKind && fd.Kind() != protoreflect.BytesKind {
			if v, _ := protowire.ConsumeBytes(val); len(v) == 0 {
				return fmt.Errorf("%s.%s: empty packed run", md.Name(), fd.Name())
			}
		}
		b = b[n+m:]
	}
	return nil
}

var eventDesc = (&pbv.ChildEvent{}).ProtoReflect().Descriptor()

// differential runs the three oracle checks on one message m, of which
// ours are our bytes and want the oracle's message built from the same
// data; decode is our decoder of the version.
func differential[M any](t *testing.T, m M, ours []byte, want proto.Message, decode func([]byte, codec.Limits) (M, error)) {
	t.Helper()
	md := want.ProtoReflect().Descriptor()
	// (a) the oracle reads our bytes as the message built from the same data,
	got := want.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(ours, got); err != nil {
		t.Fatalf("oracle cannot read our bytes: %v", err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("oracle read\n  %v\nwant\n  %v", got, want)
	}
	// and its bytes, put in canonical order, are ours exactly (this also
	// compares float bits, which proto.Equal does not for NaN).
	theirs, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if c := canonicalize(t, md, theirs); !bytes.Equal(c, ours) {
		t.Fatalf("bytes differ:\n ours   % x\n oracle % x", ours, c)
	}
	// (b) we read the oracle's bytes (in its own order) as the domain value,
	back, err := decode(theirs, codec.Limits{})
	if err != nil {
		t.Fatalf("cannot read oracle bytes: %v", err)
	}
	if d := diff(m, back); d != "" {
		t.Fatalf("decoded oracle bytes differ: %s", d)
	}
	// (c) and our bytes are canonical.
	if err := checkCanonical(md, ours); err != nil {
		t.Fatal(err)
	}
}

func differentialEvent(t *testing.T, e *message.ChildEvent) {
	t.Helper()
	differential(t, e, mustEncodeEvent(t, e), toPBEvent(e), DecodeEvent)
}

func differentialRequest(t *testing.T, r *message.ParentRequest) {
	t.Helper()
	differential(t, r, mustEncodeRequest(t, r), toPBRequest(r), DecodeRequest)
}

func TestOracleNodeCorpus(t *testing.T) {
	for _, c := range nodeCorpus() {
		t.Run(c.name, func(t *testing.T) {
			differentialEvent(t, &message.ChildEvent{Body: &message.Complete{Value: c.root, Values: c.g}})
			// The bare arena is byte-identical to the oracle's (Arena has no
			// oneof, so protobuf-go's order is already canonical).
			ours, err := AppendArena(nil, &c.g, c.root)
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := proto.Marshal(toPBArena(&c.g))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ours, theirs) {
				t.Fatalf("arena bytes differ:\n ours   % x\n oracle % x", ours, theirs)
			}
		})
	}
}

func TestOracleMessageCorpus(t *testing.T) {
	for i, r := range requestCorpus() {
		t.Run(fmt.Sprintf("request%d_%T", i, r.Body), func(t *testing.T) { differentialRequest(t, r) })
	}
	for i, e := range eventCorpus() {
		t.Run(fmt.Sprintf("event%d_%T", i, e.Body), func(t *testing.T) { differentialEvent(t, e) })
	}
}

func TestOracleCallPayloads(t *testing.T) {
	// FunctionCall("external", 3 args, 2 kwargs, call_id 42), with and
	// without object_id, eager or not: byte-identical both ways at the
	// FunctionCall level (no oneof there).
	var g value.Graph
	a := g.Add(value.Int(1))
	b := g.Add(value.Str("two"))
	c := g.Add(value.List(a, b))
	k1 := g.Add(value.Str("x"))
	k2 := g.Add(value.Str("y"))
	for _, obj := range []*value.UUID{nil, &uuid7} {
		for _, eager := range []bool{false, true} {
			fc := &message.FunctionCall{FunctionName: "external", Args: []value.NodeID{a, b, c},
				Kwargs: []value.Pair{{Key: k1, Value: a}, {Key: k2, Value: c}}, CallID: 42, ObjectID: obj, AllowEagerAwait: eager, Values: g}
			ours := mustEncodeEvent(t, &message.ChildEvent{Body: fc})
			theirs, err := proto.Marshal(toPBCall(fc))
			if err != nil {
				t.Fatal(err)
			}
			// ChildEvent{function_call = 2}: strip our key and length.
			payload, n := protowire.ConsumeBytes(ours[1:])
			if n < 0 || 1+n != len(ours) || !bytes.Equal(payload, theirs) {
				t.Fatalf("obj=%v eager=%v:\n ours   % x\n oracle % x", obj != nil, eager, payload, theirs)
			}
			differentialEvent(t, &message.ChildEvent{Body: fc})
		}
	}
	// OsCall getenv("HOME", default [None, 3]) and date_time_now(+3600 CET).
	var ge value.Graph
	ge.Add(value.None())
	ge.Add(value.Int(3))
	root := ge.Add(value.List(0, 1))
	for _, o := range []*message.OsCall{
		{CallID: 3, Op: message.OpGetenv, Key: "HOME", Default: root, Values: ge},
		{CallID: 4, Op: message.OpDateTimeNow, TZ: &value.TimeZone{Offset: 3600, Name: value.Ptr("CET")}},
	} {
		differentialEvent(t, &message.ChildEvent{Body: o})
	}
}

func TestOracleRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 20240229))
	for i := range 300 {
		g, root := randomGraph(r, 1+r.IntN(60))
		name := fmt.Sprintf("graph%d", i)
		t.Run(name, func(t *testing.T) {
			differentialEvent(t, &message.ChildEvent{Body: &message.Complete{Value: root, Values: g}, TotalExecutionMicros: r.Uint64()})
			switch i % 4 {
			case 0:
				differentialRequest(t, &message.ParentRequest{Body: &message.Feed{Code: "x", Inputs: []message.NamedRef{{Name: "x", Value: root}, {Name: "y", Value: 0}}, Values: g}})
			case 1:
				differentialEvent(t, &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", Args: []value.NodeID{root, 0, root}, Kwargs: []value.Pair{{Key: 0, Value: root}}, CallID: uint32(i), Values: g}})
			case 2:
				differentialRequest(t, &message.ParentRequest{Body: &message.ResumeCall{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}, Values: g}})
			default:
				differentialRequest(t, &message.ParentRequest{Body: &message.ResumeFutures{Results: []message.FutureResult{
					{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: root}},
					{CallID: 2, Result: &message.ExtResult{Kind: message.ResultReturn, Value: 0}}}, Values: g}})
			}
		})
	}
}

// TestOracleMergesLikeUs decodes hand-made frames with duplicate fields with
// both decoders and compares the results.
func TestOracleMergesLikeUs(t *testing.T) {
	cls := pb(nil).msg(2, uuidMsgOf(uuid16)).varint(3, 2).msg(5, pb(nil).msg(1, pb(nil).varint(2, 1)))
	arenas := []pb{
		arenaOf(noneNode, noneNode, node(append(nList(0), nList(1)...))),
		arenaOf(node(pb(nil).msg(17, pb(nil).varint(1, 2024).varint(2, 2)).msg(17, pb(nil).varint(3, 29)))),
		arenaOf(node(append(nList(1<<32-1), nInt(7)...))),
		arenaOf(noneNode, noneNode, node(nType(cls).msg(23, pb(nil).msg(5, pb(nil).msg(1, pb(nil).varint(1, 1)))))),
		arenaOf(node(append(append(nStr("abc"), pb(nil).str(29, "def")...), nStr("ghi")...))),
		arenaOf(node(pb(nil).msg(6, pb(nil).varint(1, 1).bytes(2, []byte{9})).msg(6, pb(nil).bytes(2, []byte{0, 0, 1, 0})))),
		append(arenaOf(noneNode), append(pb(nil).varint(1, 9), noneNode...)...),
	}
	for i, a := range arenas {
		frame := completeFrame(0, a)
		ours, err := DecodeEvent(frame, codec.Limits{})
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		var o pbv.ChildEvent
		if err := proto.Unmarshal(frame, &o); err != nil {
			t.Fatal(err)
		}
		if d := diff(ours, fromPBEvent(&o)); d != "" {
			t.Fatalf("%d: %s", i, d)
		}
	}
}
