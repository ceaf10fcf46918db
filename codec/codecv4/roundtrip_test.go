package codecv4

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func roundTripEvent(t *testing.T, e *message.ChildEvent) *message.ChildEvent {
	t.Helper()
	b := mustEncodeEvent(t, e)
	got, err := DecodeEvent(b, codec.Limits{})
	if err != nil {
		t.Fatalf("decode: %v\n% x", err, b)
	}
	if d := diff(e, got); d != "" {
		t.Fatalf("round trip differs: %s", d)
	}
	// Canonical: re-encoding the decoded value gives the same bytes.
	b2 := mustEncodeEvent(t, got)
	if !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs:\n% x\n% x", b, b2)
	}
	return got
}

func roundTripRequest(t *testing.T, r *message.ParentRequest) *message.ParentRequest {
	t.Helper()
	b := mustEncodeRequest(t, r)
	got, err := DecodeRequest(b, codec.Limits{})
	if err != nil {
		t.Fatalf("decode: %v\n% x", err, b)
	}
	if d := diff(r, got); d != "" {
		t.Fatalf("round trip differs: %s", d)
	}
	if b2 := mustEncodeRequest(t, got); !bytes.Equal(b, b2) {
		t.Fatalf("re-encoding differs:\n% x\n% x", b, b2)
	}
	return got
}

func TestRoundTripEveryNodeKind(t *testing.T) {
	seen := map[value.Kind]bool{}
	for _, c := range nodeCorpus() {
		t.Run(c.name, func(t *testing.T) {
			for _, n := range c.g.Nodes {
				seen[n.Kind] = true
			}
			got := roundTripEvent(t, &message.ChildEvent{Body: &message.Complete{Value: c.root, Values: c.g}})
			// Bare arenas round-trip too.
			ab, err := AppendArena(nil, &c.g, c.root)
			if err != nil {
				t.Fatal(err)
			}
			g, err := DecodeArena(ab, codec.Limits{}, c.root)
			if err != nil {
				t.Fatal(err)
			}
			if d := diff(&c.g, g); d != "" {
				t.Fatalf("bare arena: %s", d)
			}
			_ = got
		})
	}
	for k := value.KindEllipsis; k <= value.KindCycle; k++ {
		if k.Valid() && !seen[k] {
			t.Errorf("corpus lacks kind %v", k)
		}
	}
}

func TestFloatBitsSurvive(t *testing.T) {
	for _, bits := range []uint64{0x7ff8_0000_0000_0001, 0xfff8_0000_0000_0000, 0x7ff0_0000_0000_0001,
		math.Float64bits(math.Copysign(0, -1)), math.Float64bits(math.Inf(1)), math.Float64bits(math.Inf(-1))} {
		var g value.Graph
		g.Add(value.Node{Kind: value.KindFloat, Num: bits})
		got := roundTripEvent(t, &message.ChildEvent{Body: &message.Complete{Values: g}})
		if n := completeGraph(t, got).Nodes[0].Num; n != bits {
			t.Fatalf("bits %#x came back as %#x", bits, n)
		}
	}
}

func TestRoundTripEveryRequestKind(t *testing.T) {
	seen := map[message.RequestKind]bool{}
	for i, r := range requestCorpus() {
		if r.Body != nil {
			seen[r.Body.RequestKind()] = true
		}
		t.Run(fmt.Sprintf("%d_%T", i, r.Body), func(t *testing.T) { roundTripRequest(t, r) })
	}
	for k := message.KindConfigure; k <= message.KindAbortFeed; k++ {
		if !seen[k] {
			t.Errorf("corpus lacks %v", k)
		}
	}
}

func TestRoundTripEveryEventKind(t *testing.T) {
	seen := map[message.EventKind]bool{}
	ops := map[message.OsOp]bool{}
	for _, e := range eventCorpus() {
		if e.Body != nil {
			seen[e.Body.EventKind()] = true
		}
		if o, ok := e.Body.(*message.OsCall); ok {
			ops[o.Op] = true
		}
		roundTripEvent(t, e)
	}
	for k := message.KindPrint; k <= message.KindShutdownDump; k++ {
		if !seen[k] {
			t.Errorf("corpus lacks %v", k)
		}
	}
	for op := message.OpExists; op <= message.OpUrandom; op++ {
		if !ops[op] {
			t.Errorf("corpus lacks OS call %v", op)
		}
	}
}

func TestDeepListChainInsideFeed(t *testing.T) {
	var g value.Graph
	x := g.Add(value.List())
	for range 9999 {
		x = g.Add(value.List(x))
	}
	r := roundTripRequest(t, &message.ParentRequest{Body: &message.Feed{Code: "len(x)", Inputs: []message.NamedRef{{Name: "x", Value: x}}, Values: g}})
	if n := len(r.Body.(*message.Feed).Values.Nodes); n != 10000 {
		t.Fatalf("%d nodes", n)
	}
}

func TestSharedLadderIsSmall(t *testing.T) {
	var g value.Graph
	x := g.Add(value.Int(7))
	for range 20 {
		x = g.Add(value.List(x, x))
	}
	if len(g.Nodes) != 21 {
		t.Fatal(len(g.Nodes))
	}
	b, err := AppendArena(nil, &g, x)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= 200 {
		t.Fatalf("21-node ladder encodes to %d bytes", len(b))
	}
	got, err := DecodeArena(b, codec.Limits{}, x)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(&g, got); d != "" {
		t.Fatal(d)
	}
}

func TestExecutedCycleBytes(t *testing.T) {
	// a = []; a.append(a); [a, a] exports as [cycle "[...]", list[0], list[1,1]].
	var g value.Graph
	c := g.Add(value.Cycle("[...]"))
	a := g.Add(value.List(c))
	g.Add(value.List(a, a))
	b, err := AppendArena(nil, &g, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0x08, 0x03,
		0x12, 0x08, 0xf2, 0x01, 0x05, '[', '.', '.', '.', ']',
		0x12, 0x05, 0x5a, 0x03, 0x0a, 0x01, 0x00,
		0x12, 0x06, 0x5a, 0x04, 0x0a, 0x02, 0x01, 0x01}
	if !bytes.Equal(b, want) {
		t.Fatalf("got  % x\nwant % x", b, want)
	}
}

func TestCanonicalBytes(t *testing.T) {
	cases := []struct {
		name string
		n    value.Node
		want []byte // the node message payload
	}{
		{"none", value.None(), []byte{0x12, 0x00}},
		{"false", value.Bool(false), []byte{0x20, 0x00}},
		{"int0", value.Int(0), []byte{0x28, 0x00}},
		{"str_empty", value.Str(""), []byte{0x42, 0x00}},
		{"float0", value.Float(0), []byte{0x39, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"list_empty", value.List(), []byte{0x5a, 0x00}},
		{"bigint0", value.Node{Kind: value.KindBigInt}.WithExt(new(big.Int)), []byte{0x32, 0x03, 0x12, 0x01, 0x00}},
		{"bigint-1", value.Node{Kind: value.KindBigInt}.WithExt(bigFromString("-1")), []byte{0x32, 0x05, 0x08, 0x01, 0x12, 0x01, 0x01}},
		{"builtin_type", value.BuiltinType("int"), []byte{0xba, 0x01, 0x07, 0x0a, 0x03, 'i', 'n', 't', 0x18, 0x01}},
		{"timezone_utc", value.TimeZoneNode(value.TimeZone{}), []byte{0xaa, 0x01, 0x00}},
		{"time_offset0", value.TimeNode(value.Time{Offset: value.Ptr[int32](0), TZName: value.Ptr("")}), []byte{0x92, 0x01, 0x04, 0x28, 0x00, 0x32, 0x00}},
		{"date_negative_never_happens_but_int32", value.DateNode(value.Date{Year: 2024, Month: 2, Day: 29}), []byte{0x8a, 0x01, 0x07, 0x08, 0xe8, 0x0f, 0x10, 0x02, 0x18, 0x1d}},
	}
	for _, c := range cases {
		var g value.Graph
		g.Add(c.n)
		b, err := AppendArena(nil, &g)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := append([]byte{0x08, 0x01, 0x12, byte(len(c.want))}, c.want...)
		if !bytes.Equal(b, want) {
			t.Errorf("%s:\n got  % x\n want % x", c.name, b, want)
		}
	}

	// A class instance always writes instance_id and attrs; class_type 0
	// is left out; a class type writes id and origin but no empty attrs.
	var g value.Graph
	cls := g.Add(value.TypeNode(value.Type{ID: uuidB, Origin: value.OriginHost}))
	g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: uuidA}))
	b, err := AppendArena(nil, &g)
	if err != nil {
		t.Fatal(err)
	}
	want := pb(nil).varint(1, 2).
		msg(2, pb(nil).msg(23, pb(nil).msg(2, pb(nil).bytes(1, uuidB[:])).varint(3, 3))).
		msg(2, pb(nil).msg(24, pb(nil).msg(2, pb(nil).bytes(1, uuidA[:])).msg(3, nil)))
	if !bytes.Equal(b, want) {
		t.Errorf("class instance:\n got  % x\n want % x", b, []byte(want))
	}

	// Envelope fields 20+ come after the arm.
	eb := mustEncodeEvent(t, &message.ChildEvent{Body: &message.Ok{}, TotalExecutionMicros: 1, MaxDurationMicros: value.Ptr[uint64](0),
		MaxSuspensions: value.Ptr[uint64](2), RestoredScriptName: value.Ptr("s")})
	if w := []byte{0x52, 0x00, 0xa0, 0x01, 0x01, 0xa8, 0x01, 0x00, 0xb0, 0x01, 0x02, 0xba, 0x01, 0x01, 's'}; !bytes.Equal(eb, w) {
		t.Errorf("event stamps:\n got  % x\n want % x", eb, w)
	}
	rb := mustEncodeRequest(t, &message.ParentRequest{Body: &message.Dump{}, TraceParent: value.Ptr("tp")})
	if w := []byte{0x3a, 0x00, 0xa2, 0x01, 0x02, 't', 'p'}; !bytes.Equal(rb, w) {
		t.Errorf("trace_parent:\n got  % x\n want % x", rb, w)
	}
}

func TestTimedeltaNormalization(t *testing.T) {
	// Only normalized timedeltas exist on the wire; the encoder refuses
	// the rest like the decoder does.
	var g value.Graph
	g.Add(value.TimeDeltaNode(value.TimeDelta{Days: -1, Seconds: -1}))
	if _, err := AppendArena(nil, &g); err == nil {
		t.Fatal("unnormalized timedelta encoded")
	}
}

func TestFileModeIsNormalized(t *testing.T) {
	var g value.Graph
	g.Add(value.FileHandleNode(value.FileHandle{Path: "/x", Mode: "rt"}))
	b, err := AppendArena(nil, &g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeArena(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if m := got.Nodes[0].Ext().(*value.FileHandle).Mode; m != "r" {
		t.Fatalf("mode %q", m)
	}
}

func TestEncodeRejectsInvalidGraphs(t *testing.T) {
	var g value.Graph
	g.Add(value.List(0))
	_, err := AppendEvent(nil, &message.ChildEvent{Body: &message.Complete{Values: g}})
	if _, ok := err.(*codec.EncodeError); !ok || err.Error() != "codecv4: invalid value graph: invalid value for Arena: value node 0 references node 0, which is not below it" {
		t.Fatalf("%T %v", err, err)
	}
	_, err = AppendEvent(nil, &message.ChildEvent{Body: &message.Complete{Value: 3}})
	if _, ok := err.(*codec.EncodeError); !ok {
		t.Fatalf("root out of range: %T %v", err, err)
	}
	dst := []byte("prefix")
	out, err := AppendRequest(dst, &message.ParentRequest{Body: &message.Feed{Inputs: []message.NamedRef{{Value: 0}}}})
	if err == nil || string(out) != "prefix" {
		t.Fatalf("%q %v", out, err)
	}
}

func TestEncodeEnforcesFrameCap(t *testing.T) {
	e := &message.ChildEvent{Body: &message.DumpResult{State: make([]byte, 1000)}}
	dst := []byte{1, 2, 3}
	out, err := AppendEventLimits(dst, e, codec.Limits{MaxFrameLen: 1000})
	if err == nil || !bytes.Equal(out, []byte{1, 2, 3}) {
		t.Fatalf("%v %x", err, out)
	}
	if err.Error() != "codecv4: ChildEvent: frame of 1006 bytes exceeds maximum of 1000 bytes" {
		t.Fatal(err)
	}
	if _, err := AppendEventLimits(nil, e, codec.Limits{MaxFrameLen: 1006}); err != nil {
		t.Fatal(err)
	}
	r := &message.ParentRequest{Body: &message.Load{State: make([]byte, 1000)}}
	if _, err := AppendRequestLimits(nil, r, codec.Limits{MaxFrameLen: 1002}); err == nil {
		t.Fatal("oversize request encoded")
	}
}

func TestRegistered(t *testing.T) {
	c, ok := codec.ForVersion(4)
	if !ok || c.Version() != 4 {
		t.Fatal("codec v4 not registered")
	}
	b, err := c.AppendEvent(nil, &message.ChildEvent{Body: &message.Ok{}})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := c.DecodeEvent(b, codec.Limits{}); err != nil || e.Body.EventKind() != message.KindOk {
		t.Fatal(e, err)
	}
	b, err = c.AppendRequest(nil, &message.ParentRequest{Body: &message.Reset{}})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := c.DecodeRequest(b, codec.Limits{}); err != nil || r.Body.RequestKind() != message.KindReset {
		t.Fatal(r, err)
	}
}
