package codecv2

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func TestRegistered(t *testing.T) {
	c, ok := codec.ForVersion(2)
	if !ok || c.Version() != 2 {
		t.Fatalf("protocol 2 codec not registered: %v %v", c, ok)
	}
	if _, ok := c.(V2); !ok {
		t.Fatalf("registered codec is %T", c)
	}
}

// deepNest returns a MontyObject body nesting an int in n lists, built
// without recursion or quadratic copying.
func deepNest(n int) []byte {
	objLen := make([]int, n+1)
	listLen := make([]int, n+1)
	objLen[0] = 2 // int 1
	for k := 1; k <= n; k++ {
		listLen[k] = 1 + protowire.SizeVarint(uint64(objLen[k-1])) + objLen[k-1]
		objLen[k] = 1 + protowire.SizeVarint(uint64(listLen[k])) + listLen[k]
	}
	b := make([]byte, 0, objLen[n])
	for k := n; k >= 1; k-- {
		b = protowire.AppendVarint(append(b, 0x5a), uint64(listLen[k]))
		b = protowire.AppendVarint(append(b, 0x0a), uint64(objLen[k-1]))
	}
	return append(b, oInt(1)...)
}

func wantDecodeError(t *testing.T, err error, text string) *codec.DecodeError {
	t.Helper()
	var de *codec.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("got %T %v, want *codec.DecodeError", err, err)
	}
	if !errors.Is(err, codec.ErrMalformed) {
		t.Errorf("error does not match codec.ErrMalformed")
	}
	if text != "" && err.Error() != text {
		t.Errorf("got  %q\nwant %q", err.Error(), text)
	}
	return de
}

func TestHostileNesting(t *testing.T) {
	obj := deepNest(1_000_000)
	_, _, err := DecodeValue(obj, codec.Limits{})
	wantDecodeError(t, err, "failed to decode Protobuf message: recursion limit reached")

	_, err = DecodeRequest(feedWith(obj), codec.Limits{})
	wantDecodeError(t, err, "failed to decode Protobuf message: NamedValue.value: Feed.inputs: ParentRequest.kind: recursion limit reached")

	_, err = DecodeEvent(ld(6, ld(1, obj)), codec.Limits{})
	wantDecodeError(t, err, "failed to decode Protobuf message: Complete.value: ChildEvent.kind: recursion limit reached")

	// Nested unknown groups are bounded the same way.
	var g []byte
	for i := 0; i < 1_000_000; i++ {
		g = protowire.AppendTag(g, 99, protowire.StartGroupType)
	}
	_, err = DecodeRequest(g, codec.Limits{})
	wantDecodeError(t, err, "failed to decode Protobuf message: recursion limit reached")
}

// TestDepthBoundary pins the limits probed on the worker (see MaxDepth).
func TestDepthBoundary(t *testing.T) {
	const rec = "failed to decode Protobuf message: NamedValue.value: Feed.inputs: ParentRequest.kind: recursion limit reached"
	cases := []struct {
		name string
		obj  []byte
		ok   bool
	}{
		{"int in 48 lists", nestLists(48, oInt(1)), true},
		{"int in 49 lists", nestLists(49, oInt(1)), false},
		{"None in 48 lists", nestLists(48, oNone()), true},
		{"None in 49 lists", nestLists(49, oNone()), false},
		{"49 lists, innermost empty", nestLists(49, nil), true},
		{"50 lists, innermost empty", nestLists(50, nil), false},
	}
	for _, tc := range cases {
		r, err := DecodeRequest(feedWith(tc.obj), codec.Limits{})
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			// What decodes also encodes, and to the same bytes.
			out, err := AppendRequest(nil, r)
			if err != nil || !bytes.Equal(out, feedWith(tc.obj)) {
				t.Errorf("%s: re-encode: %v", tc.name, err)
			}
			continue
		}
		wantDecodeError(t, err, rec)
	}
	dict := func(n int) []byte {
		o := oInt(1)
		for i := 0; i < n; i++ {
			o = oDict(oStr("a"), o)
		}
		return o
	}
	if _, err := DecodeRequest(feedWith(dict(32)), codec.Limits{}); err != nil {
		t.Errorf("32 dicts: %v", err)
	}
	_, err := DecodeRequest(feedWith(dict(33)), codec.Limits{})
	wantDecodeError(t, err, "failed to decode Protobuf message: "+strings.Repeat("Pair.value: ", 32)+
		"NamedValue.value: Feed.inputs: ParentRequest.kind: recursion limit reached")

	// An unknown field in a message at the limit is refused too (prost
	// checks the limit before skipping).
	inner := cat(oList(), vi(7, 1)) // list arm plus an unknown varint field 7 … at the innermost level
	_ = inner
	deep := nestLists(48, oNone())
	if _, err := DecodeRequest(feedWith(deep), codec.Limits{}); err != nil {
		t.Fatal(err)
	}
	unitUnknown := cat(ld(armNone, vi(7, 1))) // Unit carrying an unknown field
	_, err = DecodeRequest(feedWith(nestLists(48, unitUnknown)), codec.Limits{})
	wantDecodeError(t, err, rec)
	if _, err := DecodeRequest(feedWith(nestLists(47, unitUnknown)), codec.Limits{}); err != nil {
		t.Errorf("unknown field one level higher: %v", err)
	}
}

func listGraph(depth int, leaf value.Node) (*value.Graph, value.NodeID) {
	g := &value.Graph{}
	id := g.Add(leaf)
	for i := 0; i < depth; i++ {
		id = g.Add(value.List(id))
	}
	return g, id
}

func feedRequest(g *value.Graph, root value.NodeID) *message.ParentRequest {
	return &message.ParentRequest{Body: &message.Feed{Code: "v", Values: *g,
		Inputs: []message.NamedRef{{Name: "v", Value: root}}}}
}

func wantEncodeError(t *testing.T, dst, out []byte, err error, text string) {
	t.Helper()
	var ee *codec.EncodeError
	if !errors.As(err, &ee) {
		t.Fatalf("got %T %v, want *codec.EncodeError", err, err)
	}
	if !strings.Contains(err.Error(), text) {
		t.Errorf("error %q does not mention %q", err, text)
	}
	if !bytes.Equal(out, dst) || len(out) != len(dst) {
		t.Errorf("dst changed on error")
	}
}

func TestEncodeDepthLimit(t *testing.T) {
	g, root := listGraph(48, value.Int(1))
	if _, err := AppendRequest(nil, feedRequest(g, root)); err != nil {
		t.Errorf("48 lists: %v", err)
	}
	g, root = listGraph(49, value.Int(1))
	dst := []byte("keep")
	out, err := AppendRequest(dst, feedRequest(g, root))
	wantEncodeError(t, dst, out, err, "NamedValue.value: the value reaches 101 protobuf message levels")

	// ResumeNameLookup.value sits one level higher than a Feed input.
	g, root = listGraph(49, value.Int(1))
	r := &message.ParentRequest{Body: &message.ResumeNameLookup{Kind: message.LookupValue, Value: root, Values: *g}}
	if _, err := AppendRequest(nil, r); err != nil {
		t.Errorf("ResumeNameLookup with 49 lists: %v", err)
	}
	// Bare values count from level 0.
	g, root = listGraph(50, value.Int(1))
	if _, err := AppendValue(nil, g, root, codec.Limits{}); err != nil {
		t.Errorf("bare value with 50 lists: %v", err)
	}
	g, root = listGraph(51, value.Int(1))
	_, err = AppendValue(nil, g, root, codec.Limits{})
	wantEncodeError(t, nil, nil, err, "102 protobuf message levels")
}

func TestEncodeBlowUp(t *testing.T) {
	// Each level holds the one below twice: the tree has 2^40 leaves.
	g := &value.Graph{}
	id := g.Add(value.Str("x"))
	for i := 0; i < 40; i++ {
		id = g.Add(value.List(id, id))
	}
	start := time.Now()
	dst := []byte{1, 2, 3}
	out, err := AppendRequest(dst, feedRequest(g, id))
	wantEncodeError(t, dst, out, err, "exceed the frame cap")
	_, err = AppendValue(nil, g, id, codec.Limits{})
	wantEncodeError(t, nil, nil, err, "exceed the frame cap")
	// Expanding the ladder would write 2^40 leaves, hours of work; the
	// refusal takes milliseconds. The bound leaves room for two CI cores
	// busy with -race builds, where a second has been too little for such
	// quick steps, and stays far below the wrong behaviour.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("refusing the ladder took %v", d)
	}
	// A small ladder expands fine, and decodes to 2^k leaves.
	g = &value.Graph{}
	id = g.Add(value.Int(7))
	for i := 0; i < 10; i++ {
		id = g.Add(value.List(id, id))
	}
	b, err := AppendValue(nil, g, id, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	g2, _, err := DecodeValue(b, codec.Limits{})
	if err != nil || g2.Len() != 1<<11-1 {
		t.Fatalf("expanded ladder: %v, %d nodes", err, g2.Len())
	}
	// The frame cap of the limits applies.
	big, root := listGraph(1, value.Bytes(make([]byte, 1000)))
	_, err = AppendRequestLimits(nil, feedRequest(big, root), codec.Limits{MaxFrameLen: 500})
	wantEncodeError(t, nil, nil, err, "frame cap of 500")
}

func TestEncodeInexpressible(t *testing.T) {
	g, root := listGraph(0, value.Int(1))
	cases := []struct {
		name string
		enc  func(dst []byte) ([]byte, error)
		text string
	}{
		{"cwd", func(dst []byte) ([]byte, error) {
			r := feedRequest(g, root)
			r.Body.(*message.Feed).Cwd = "/work"
			return AppendRequest(dst, r)
		}, "Feed.cwd"},
		{"eager await", func(dst []byte) ([]byte, error) {
			return AppendEvent(dst, &message.ChildEvent{Body: &message.FunctionCall{FunctionName: "f", AllowEagerAwait: true}})
		}, "allow_eager_await"},
		{"urandom", func(dst []byte) ([]byte, error) {
			return AppendEvent(dst, &message.ChildEvent{Body: &message.OsCall{Op: message.OpUrandom, Size: 8}})
		}, "urandom"},
		{"two segments", func(dst []byte) ([]byte, error) {
			return AppendEvent(dst, &message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{
				{Stream: message.StreamStdout, Text: "a"}, {Stream: message.StreamStderr, Text: "b"}}}})
		}, "exactly one segment"},
		{"no segment", func(dst []byte) ([]byte, error) {
			return AppendEvent(dst, &message.ChildEvent{Body: &message.Print{}})
		}, "exactly one segment"},
		{"uuid arm", func(dst []byte) ([]byte, error) {
			g := &value.Graph{Nodes: []value.Node{{Kind: 10}}}
			return AppendRequest(dst, feedRequest(g, 0))
		}, "uuid arm"},
		{"forward reference", func(dst []byte) ([]byte, error) {
			g := &value.Graph{Nodes: []value.Node{value.List(1), value.Int(1)}}
			return AppendRequest(dst, feedRequest(g, 0))
		}, "not below it"},
		{"root out of range", func(dst []byte) ([]byte, error) {
			return AppendRequest(dst, feedRequest(g, 5))
		}, "out of range"},
		{"bad utf-8 value", func(dst []byte) ([]byte, error) {
			g := &value.Graph{Nodes: []value.Node{value.Str("\xff")}}
			return AppendRequest(dst, feedRequest(g, 0))
		}, "UTF-8"},
		{"bad utf-8 code", func(dst []byte) ([]byte, error) {
			r := feedRequest(g, root)
			r.Body.(*message.Feed).Code = "\xfe"
			return AppendRequest(dst, r)
		}, "Feed.code is not valid UTF-8"},
		{"invalid date", func(dst []byte) ([]byte, error) {
			g := &value.Graph{Nodes: []value.Node{value.DateNode(value.Date{Year: 2023, Month: 2, Day: 29})}}
			return AppendRequest(dst, feedRequest(g, 0))
		}, "invalid value for Date.day: 29 is outside the range 1..=28"},
		{"instance of a builtin", func(dst []byte) ([]byte, error) {
			g := &value.Graph{}
			c := g.Add(value.BuiltinType("int"))
			k := g.Add(value.Str("a"))
			i := g.Add(value.ClassInstanceNode(value.ClassInstance{Class: c, Attrs: []value.Pair{{Key: k, Value: k}}}))
			return AppendRequest(dst, feedRequest(g, i))
		}, "not a sandbox or host class type"},
		{"nil body", func(dst []byte) ([]byte, error) {
			return AppendRequest(dst, &message.ParentRequest{Body: (*message.Feed)(nil)})
		}, "nil"},
		{"nil event", func(dst []byte) ([]byte, error) { return AppendEvent(dst, nil) }, "nil"},
		{"bad open mode", func(dst []byte) ([]byte, error) {
			return AppendEvent(dst, &message.ChildEvent{Body: &message.OsCall{Op: message.OpOpen, Path: "/x", Mode: "r+"}})
		}, `invalid file mode "r+"`},
	}
	for _, tc := range cases {
		dst := []byte("prefix")
		out, err := tc.enc(dst)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		t.Run(tc.name, func(t *testing.T) { wantEncodeError(t, dst, out, err, tc.text) })
	}
	// Stderr exists in the schema and is allowed.
	b, err := AppendEvent(nil, &message.ChildEvent{Body: &message.Print{Segments: []message.PrintSegment{{Stream: message.StreamStderr, Text: "e"}}}})
	if err != nil || !bytes.Equal(b, ld(1, vi(1, 2), sf(2, "e"))) {
		t.Errorf("stderr print: %x %v", b, err)
	}
}

func TestBudget(t *testing.T) {
	items := make([][]byte, 10000)
	for i := range items {
		items[i] = oInt(int64(i))
	}
	frame := ld(6, ld(1, oList(items...)))
	if _, err := DecodeEvent(frame, codec.Limits{}); err != nil {
		t.Fatal(err)
	}
	_, err := DecodeEvent(frame, codec.Limits{MaxDecodeBytes: 64 << 10})
	if !errors.Is(err, codec.ErrBudget) {
		t.Fatalf("got %v, want a budget error", err)
	}
	wantDecodeError(t, err, "failed to decode Protobuf message: Complete.value: ChildEvent.kind: frame exceeds decode memory budget")

	// Each frame gets a fresh budget: the same limit admits a frame that
	// fits, however many came before.
	small := ld(6, ld(1, oList(items[:100]...)))
	for i := 0; i < 100; i++ {
		if _, err := DecodeEvent(small, codec.Limits{MaxDecodeBytes: 64 << 10}); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	// A packed run is charged before it is read.
	ids := ld(5, ld(1, bytes.Repeat([]byte{1}, 100000)))
	if _, err := DecodeEvent(ids, codec.Limits{MaxDecodeBytes: 100000}); !errors.Is(err, codec.ErrBudget) {
		t.Errorf("packed ids: %v", err)
	}
	// Strings and bytes are charged.
	if _, err := DecodeRequest(ld(3, sf(1, strings.Repeat("x", 5000))), codec.Limits{MaxDecodeBytes: 4000}); !errors.Is(err, codec.ErrBudget) {
		t.Errorf("long code: %v", err)
	}
	if _, err := DecodeRequest(ld(8, ld(1, make([]byte, 5000))), codec.Limits{MaxDecodeBytes: 4000}); !errors.Is(err, codec.ErrBudget) {
		t.Errorf("load state: %v", err)
	}
	// A frame over the frame cap is refused before decoding.
	_, err = DecodeEvent(frame, codec.Limits{MaxFrameLen: 100})
	wantDecodeError(t, err, "")
}

// TestDecodeErrors pins decode error texts, innermost field first. The
// expected texts were observed on the worker for the same bytes (the live
// test TestLiveDecodeErrors re-checks them).
func TestDecodeErrors(t *testing.T) {
	host := ld(1, sf(1, "W"), ld(2, ld(1, make([]byte, 16))), vi(3, 3))
	uid := ld(1, make([]byte, 16))
	for _, tc := range decodeErrorCases(host, uid) {
		_, err := DecodeRequest(feedWith(tc.obj), codec.Limits{})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		wantDecodeError(t, err, "failed to decode Protobuf message: "+tc.want)
	}

	// Errors outside values.
	for _, tc := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"garbage", []byte{0xff, 0xff, 0xff, 0xff}, "failed to decode Protobuf message: invalid varint"},
		{"truncated length", []byte{0x0a, 0xff}, "failed to decode Protobuf message: ParentRequest.kind: invalid varint"},
		{"underflow", []byte{0x1a, 0x10, 0x0a, 0x01}, "failed to decode Protobuf message: ParentRequest.kind: buffer underflow"},
		{"wire type", []byte{0x1a, 0x02, 0x08, 0x05}, "failed to decode Protobuf message: Feed.code: ParentRequest.kind: invalid wire type: Varint (expected LengthDelimited)"},
		{"utf-8", ld(3, ld(1, []byte{0xc3})), "failed to decode Protobuf message: Feed.code: ParentRequest.kind: invalid string value: data is not UTF-8 encoded"},
		{"tag 0", []byte{0x00}, "failed to decode Protobuf message: invalid tag value: 0"},
		{"wire type 7", []byte{0x0f}, "failed to decode Protobuf message: invalid wire type value: 7"},
		{"end group", []byte{0xf4, 0x01}, "failed to decode Protobuf message: unexpected end group tag"},
		{"end group on a known field", []byte{0x0c}, "failed to decode Protobuf message: ParentRequest.kind: invalid wire type: EndGroup (expected LengthDelimited)"},
		{"unknown group", []byte{0xf3, 0x01, 0x08, 0x01, 0xf4, 0x01}, ""},
		{"mismatched group", []byte{0xf3, 0x01, 0xfc, 0x01}, "failed to decode Protobuf message: unexpected end group tag"},
		{"overshoot", cat([]byte{0x1a, 0x02, 0x0a, 0x03}, []byte("abc")), "failed to decode Protobuf message: ParentRequest.kind: delimited length exceeded"},
		{"limits", ld(1, ld(2, vi(1, 1), []byte{0x3d, 0, 0, 0, 0})), ""},
		{"limits wire type", ld(1, ld(2, []byte{0x0d, 0, 0, 0, 0})), "failed to decode Protobuf message: ResourceLimits.max_duration_micros: Configure.limits: ParentRequest.kind: invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"trace parent", sf(20, "\xff"), "failed to decode Protobuf message: ParentRequest.trace_parent: invalid string value: data is not UTF-8 encoded"},
		{"result kind", ld(4, vi(1, 0), ld(2)), "missing required field ExtFunctionResult.kind"},
		{"lookup kind", ld(5), "missing required field ResumeNameLookup.kind"},
		{"future result", ld(6, ld(1, vi(1, 3))), "missing required field FutureResult.result"},
		{"future not handled", ld(6, ld(1, ld(2, ld(5)))), "invalid value for ExtFunctionResult.kind: NotHandled is only valid answering a suspended OS call"},
		{"unknown exception", ld(11, ld(1, sf(1, "HostTimeout"))), `unknown exception type "HostTimeout"`},
		{"frame needs start", ld(11, ld(1, sf(1, "ValueError"), ld(3, sf(1, "f"), ld(3)))), "missing required field StackFrame.start"},
		{"input without kind", ld(3, ld(2, sf(1, "v"), ld(2, ld(10, ld(1, make([]byte, 16)))))), `invalid input "v": missing required field MontyObject.kind`},
		{"return value without kind", ld(4, ld(2, ld(1))), "missing required field MontyObject.kind"},
		{"input without value", ld(3, ld(2, sf(1, "v"))), `input "v" has no value`},
		{"input empty, then set", ld(3, ld(2, sf(1, "v"), ld(2), ld(2, oInt(1)))), ""},
		{"return value empty, then set", ld(4, ld(2, ld(1), ld(1, oInt(7)))), ""},
		{"lookup value empty, then set", ld(5, ld(1), ld(1, oInt(7))), ""},
		{"lookup value without kind", ld(5, ld(1)), "missing required field MontyObject.kind"},
		{"second input without value", ld(3, ld(2, sf(1, "v"), ld(2, oInt(1))), ld(2, sf(1, "w"))), `input "w" has no value`},
		{"deep wire error", ld(4, ld(2, ld(2, ld(3, ld(2, []byte{0x0d, 0, 0, 0, 0}))))), "failed to decode Protobuf message: CodeLoc.line: StackFrame.start: RaisedException.traceback: ExtFunctionResult.kind: ResumeCall.result: ParentRequest.kind: invalid wire type: ThirtyTwoBit (expected Varint)"},
	} {
		_, err := DecodeRequest(tc.frame, codec.Limits{})
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		de := wantDecodeError(t, err, tc.want)
		if de != nil && de.Structural == strings.HasPrefix(tc.want, "failed") {
			t.Errorf("%s: structural = %v", tc.name, de.Structural)
		}
	}

	// Event-side conversions.
	for _, tc := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"no os call", ld(3, vi(1, 1)), "missing required field OsCall.call"},
		{"open mode", ld(3, ld(18, sf(1, "/x"), sf(2, "r+"))), `invalid file mode "r+"`},
		{"getenv default", ld(3, ld(21, sf(1, "HOME"))), "missing required field Getenv.default"},
		{"complete value", ld(6), "missing required field Complete.value"},
		{"error exception", ld(7), "missing required field Error.exception"},
		{"object id", ld(2, sf(1, "f"), ld(5, ld(1, []byte{1, 2}))), "failed to decode Protobuf message: ChildEvent.kind: invalid value for FunctionCall.object_id: uuid must be 16 bytes, got 2"},
		{"lookup object id", ld(4, sf(1, "x"), ld(2)), "invalid value for NameLookup.object_id: uuid must be 16 bytes, got 0"},
		// Upstream's parent names no FunctionCall field in a path.
		{"arg", ld(2, ld(2, oDate(2024, 2, 30))), "failed to decode Protobuf message: ChildEvent.kind: invalid value for Date.day: 30 is outside the range 1..=29"},
		{"kwarg", ld(2, ld(3, ld(1, oStr("k")))), "failed to decode Protobuf message: ChildEvent.kind: missing required field Pair.value"},
		{"text write", ld(3, ld(14, vi(1, 1))), "failed to decode Protobuf message: TextWrite.path: OsCall.call: ChildEvent.kind: invalid wire type: Varint (expected LengthDelimited)"},
		{"metadata", vi(21, 1)[:2], "failed to decode Protobuf message: ChildEvent.max_duration_micros: invalid varint"},
	} {
		_, err := DecodeEvent(tc.frame, codec.Limits{})
		wantDecodeError(t, err, tc.want)
	}
}

type errCase struct {
	name string
	obj  []byte
	want string // "" when the value is accepted
}

// decodeErrorCases are Feed inputs with the worker's verdict on each.
func decodeErrorCases(host, uid []byte) []errCase {
	const p = "NamedValue.value: Feed.inputs: ParentRequest.kind: "
	thirty := func(f protowire.Number) []byte { return []byte{byte(f<<3 | 5), 0, 0, 0, 0} }
	badDate := oDate(2020, 2, 30)
	return []errCase{
		{"empty object in list", oList(nil), p + "missing required field MontyObject.kind"},
		{"int wire type", ld(armInt, nil), p + "invalid wire type: LengthDelimited (expected Varint)"},
		{"list wire type", vi(armList, 0), p + "invalid wire type: Varint (expected LengthDelimited)"},
		{"str utf-8", ld(armStr, []byte{0xff}), p + "invalid string value: data is not UTF-8 encoded"},
		{"overlong varint", cat([]byte{0x28}, bytes.Repeat([]byte{0xff}, 10), []byte{1}), p + "invalid varint"},
		{"bigint negative", ld(armBigInt, thirty(1)), "BigInt.negative: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"bigint magnitude", ld(armBigInt, thirty(2)), "BigInt.magnitude: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"object list items", ld(armList, thirty(1)), p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"named tuple values", ld(armNamedTuple, thirty(3)), p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"date year", ld(armDate, thirty(1)), "Date.year: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"date empty", ld(armDate), p + "invalid value for Date.year: 0 is outside the range 1..=9999"},
		{"time offset", ld(armTime, thirty(5)), "Time.offset_seconds: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"datetime minute", ld(armDateTime, thirty(5)), "DateTime.minute: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"timedelta days", ld(armTimeDelta, thirty(1)), "TimeDelta.days: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"timezone name", ld(armTimeZone, thirty(2)), "TimeZone.name: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"exception arg", ld(armException, thirty(2)), "Exception.arg: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"exception empty", ld(armException), p + `unknown exception type ""`},
		{"type field", ld(armType, thirty(3)), p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"instance field", ld(armClassInstance, thirty(2)), p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"function docstring", ld(armFunction, thirty(2)), "Function.docstring: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"file position", ld(armFileHandle, thirty(3)), "FileHandle.position: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"file empty", ld(armFileHandle), p + `invalid file mode ""`},
		{"cycle identity", ld(armCycle, thirty(1)), "Cycle.identity: " + p + "invalid wire type: ThirtyTwoBit (expected Varint)"},
		{"pair key", ld(armDict, ld(1, thirty(1))), "Pair.key: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"uuid data", ld(armType, ld(2, thirty(1))), "Uuid.data: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"instance attrs pair", ld(armClassInstance, ld(3, ld(1, thirty(1)))), "Pair.key: " + p + "invalid wire type: ThirtyTwoBit (expected LengthDelimited)"},
		{"instance only attrs", ld(armClassInstance, ld(3)), p + "missing required field ClassInstance.type"},
		{"instance builtin type", ld(armClassInstance, ld(1, sf(1, "int"), vi(3, 1))), p + "invalid value for ClassInstance.type: must be a class type, not a builtin"},
		{"instance no id", ld(armClassInstance, host), p + "missing required field ClassInstance.instance_id"},
		{"instance no attrs", ld(armClassInstance, host, ld(2, uid)), p + "missing required field ClassInstance.attrs"},
		{"instance short id", ld(armClassInstance, host, ld(2, ld(1, []byte("abc"))), ld(3)), p + "invalid value for ClassInstance.instance_id: uuid must be 16 bytes, got 3"},
		{"instance empty id", ld(armClassInstance, host, ld(2), ld(3)), p + "invalid value for ClassInstance.instance_id: uuid must be 16 bytes, got 0"},
		{"instance ok", ld(armClassInstance, host, ld(2, uid), ld(3)), ""},
		{"instance type no origin", ld(armClassInstance, ld(1, sf(1, "W"), ld(2, uid)), ld(2, uid), ld(3)), p + "invalid value for Type: origin must be specified"},
		{"instance type origin 99", ld(armClassInstance, ld(1, sf(1, "W"), ld(2, uid), vi(3, 99)), ld(2, uid), ld(3)), p + "invalid value for Type.origin: unknown origin 99"},
		{"instance type no id", ld(armClassInstance, ld(1, sf(1, "W"), vi(3, 3)), ld(2, uid), ld(3)), p + "invalid value for Type: a class type must carry an id"},
		{"type empty uuid", ld(armType, sf(1, "W"), ld(2), vi(3, 3)), p + "invalid value for Type.id: uuid must be 16 bytes, got 0"},
		{"builtin with attrs", ld(armType, sf(1, "int"), vi(3, 1), ld(5)), p + "invalid value for Type: a builtin type must not carry attrs"},
		{"builtin with bad id", ld(armType, sf(1, "int"), vi(3, 1), ld(2, ld(1, []byte("ab")))), p + "invalid value for Type: a builtin type must not carry an id"},
		{"origin -1", ld(armType, sf(1, "int"), vi(3, math.MaxUint64)), p + "invalid value for Type.origin: unknown origin -1"},
		{"origin 2^32+1 truncates to builtin", ld(armType, sf(1, "int"), vi(3, 1<<32+1)), ""},
		{"pair no value", ld(armDict, ld(1, ld(1, oStr("a")))), p + "missing required field Pair.value"},
		{"pair no key", ld(armDict, ld(1, ld(2, oInt(1)))), p + "missing required field Pair.key"},
		{"empty pair", ld(armDict, ld(1)), p + "missing required field Pair.key"},
		{"empty object as pair value", ld(armDict, ld(1, ld(1, oStr("a")), ld(2))), p + "missing required field MontyObject.kind"},
		{"empty object two dicts deep", oDict(oStr("a"), ld(armDict, ld(1, ld(1, oStr("a")), ld(2)))), "Pair.value: " + p + "missing required field MontyObject.kind"},
		{"empty object as pair key", ld(armDict, ld(1, ld(1), ld(2, oInt(1)))), p + "missing required field MontyObject.kind"},
		{"pair without value as a key", ld(armDict, ld(1, ld(1, ld(armDict, ld(1, ld(1, oStr("k"))))), ld(2, oInt(1)))), "Pair.key: " + p + "missing required field Pair.value"},
		{"bad date in list in dict", oDict(oStr("a"), oList(badDate)), "Pair.value: " + p + "invalid value for Date.day: 30 is outside the range 1..=29"},
		{"bad date in named tuple", ld(armNamedTuple, sf(1, "P"), sf(2, "x"), ld(3, badDate)), p + "invalid value for Date.day: 30 is outside the range 1..=29"},
		{"bad date in instance attrs", ld(armClassInstance, host, ld(2, uid), ld(3, ld(1, ld(1, oStr("a")), ld(2, badDate)))), "Pair.value: " + p + "invalid value for Date.day: 30 is outside the range 1..=29"},
		{"unknown exception in list", oList(ld(armException, sf(1, "Nope"))), p + `unknown exception type "Nope"`},
		{"unknown builtin in pair", oDict(oStr("a"), sf(armBuiltinFunction, "nosuch")), "Pair.value: " + p + `unknown builtin function "nosuch"`},
		{"bool 2", vi(armBool, 2), ""},
		{"year truncates to int32", ld(armDate, vi(1, 1<<32+5), vi(2, 1), vi(3, 1)), ""},
		{"month truncates to uint32", ld(armDate, vi(1, 2000), vi(2, 1<<32+1), vi(3, 1)), ""},
		{"negative year", ld(armDate, vi(1, math.MaxUint64), vi(2, 1), vi(3, 1)), p + "invalid value for Date.year: -1 is outside the range 1..=9999"},
		{"timezone range", ld(armTimeZone, vi(1, 86400)), p + "invalid value for TimeZone.offset_seconds: 86400 is outside the range -86399..=86399"},
		{"time name without offset", ld(armTime, sf(6, "X")), p + "invalid value for Time.timezone_name: timezone_name requires offset_seconds"},
		{"timedelta seconds", ld(armTimeDelta, vi(2, 90000)), p + "invalid value for TimeDelta.seconds: 90000 is outside the normalized range 0..86400"},
		{"unknown fields skipped", cat(vi(99, 1), oInt(3), ld(100, []byte("junk"))), ""},
	}
}

// mergeCase is a MontyObject body with its fields or arms repeated, and
// what it decodes to (show), or "error: " and the decode error's text.
type mergeCase struct {
	name, want string
	obj        []byte
}

// mergeCases are the released worker's merge semantics for a MontyObject,
// which TestLiveMerge checks against it: an object's occurrences merge
// (Pair.key twice), but every arm occurrence decodes afresh and is checked
// as it ends.
func mergeCases() []mergeCase {
	instance := ld(armClassInstance, ld(1, sf(1, "W"), ld(2, ld(1, make([]byte, 16))), vi(3, 3)), ld(2, ld(1, make([]byte, 16))), ld(3, ld(1, ld(1, oStr("a")), ld(2, oInt(1)))))
	return []mergeCase{
		{"list arm twice", "[2]", cat(oList(oInt(1)), oList(oInt(2)))},
		{"list then int", "5", cat(oList(oInt(1)), oInt(5))},
		{"int then list", "[1]", cat(oInt(5), oList(oInt(1)))},
		{"tuple then list", "[2]", cat(ld(armTuple, ld(1, oInt(1))), oList(oInt(2)))},
		{"date arm twice", "error: failed to decode Protobuf message: invalid value for Date.day: 0 is outside the range 1..=31", cat(ld(armDate, vi(1, 2020), vi(2, 5)), ld(armDate, vi(3, 7)))},
		{"date arm then a valid one", "date(2021, 6, 8)", cat(oDate(2020, 5, 7), oDate(2021, 6, 8))},
		{"bad date then int", "error: failed to decode Protobuf message: invalid value for Date.month: 0 is outside the range 1..=12", cat(ld(armDate, vi(1, 2020)), oInt(1))},
		{"time arm twice", "time(5, 0, 0, 0, off=naive, tz=-, fold=0)", cat(ld(armTime, vi(1, 1), vi(2, 2)), ld(armTime, vi(1, 5)))},
		{"date fields repeated in one arm", "date(2020, 5, 7)", ld(armDate, vi(1, 2020), vi(2, 9), vi(2, 5), vi(3, 7))},
		{"pair key twice", "{(2,): 9}", ld(armDict, ld(1, ld(1, ld(armTuple, ld(1, oInt(1)))), ld(2, oInt(9)), ld(1, ld(armTuple, ld(1, oInt(2))))))},
		{"pair key replaced", "{'k': 9}", ld(armDict, ld(1, ld(1, oList(oInt(1))), ld(2, oInt(9)), ld(1, oStr("k"))))},
		{"pair key empty then set", "{5: 2}", ld(armDict, ld(1, ld(1), ld(1, oInt(5)), ld(2, oInt(2))))},
		{"pair key objects merge, arms do not", "{time(0, 2, 0, 0, off=naive, tz=-, fold=0): 2}", ld(armDict, ld(1, ld(1, ld(armTime, vi(1, 1))), ld(1, ld(armTime, vi(2, 2))), ld(2, oInt(2))))},
		{"pair without a value", "error: failed to decode Protobuf message: missing required field Pair.value", ld(armDict, ld(1, ld(1)))},
		{"pair without a key", "error: failed to decode Protobuf message: missing required field Pair.key", ld(armDict, ld(1, ld(2)))},
		{"bigint arm twice", "big:18446744073709551616", cat(ld(armBigInt, vi(1, 1)), ld(armBigInt, ld(2, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0})))},
		{"bigint fields repeated in one arm", "big:-37038452180047562761", ld(armBigInt, ld(2, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}), vi(1, 1), ld(2, []byte{2, 2, 3, 4, 5, 6, 7, 8, 9}))},
		{"instance arm twice", "error: failed to decode Protobuf message: invalid value for Type: origin must be specified",
			cat(instance, ld(armClassInstance, ld(1, vi(4, 1)), ld(3, ld(1, ld(1, oStr("b")), ld(2, oInt(2))))))},
		{"instance type and attrs repeated in one arm", "host:X(a=1, b=2)",
			ld(armClassInstance, ld(1, sf(1, "W"), ld(2, ld(1, make([]byte, 16))), vi(3, 3)), ld(1, sf(1, "X")), ld(2, ld(1, make([]byte, 16))), ld(3, ld(1, ld(1, oStr("a")), ld(2, oInt(1)))), ld(3, ld(1, ld(1, oStr("b")), ld(2, oInt(2)))))},
		{"named tuple arm twice", "(y=2)", cat(ld(armNamedTuple, sf(1, "P"), sf(2, "x"), ld(3, oInt(1))), ld(armNamedTuple, sf(2, "y"), ld(3, oInt(2))))},
		{"timezone arm twice", "timezone(120, -)", cat(ld(armTimeZone, vi(1, 60), sf(2, "X")), ld(armTimeZone, vi(1, 120)))},
	}
}

// TestMerge checks merge semantics for repeated occurrences: protobuf's
// for the generated messages, the worker's for MontyObject (mergeCases).
func TestMerge(t *testing.T) {
	// Oneof: the last arm wins.
	r, err := DecodeRequest(cat(ld(3, sf(1, "1")), ld(9)), codec.Limits{})
	if _, ok := r.Body.(*message.Reset); err != nil || !ok {
		t.Errorf("feed+reset: %T %v", r.Body, err)
	}
	r, err = DecodeRequest(cat(ld(9), ld(3, sf(1, "7"))), codec.Limits{})
	if f, ok := r.Body.(*message.Feed); err != nil || !ok || f.Code != "7" {
		t.Errorf("reset+feed: %T %v", r.Body, err)
	}
	// The same arm merges: scalars are replaced, repeated fields appended.
	r, err = DecodeRequest(cat(
		ld(3, sf(1, "a"), ld(2, sf(1, "x"), ld(2, oInt(1)))),
		ld(3, sf(1, "b"), ld(2, sf(1, "y"), ld(2, oInt(2))), vi(3, 1))), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f := r.Body.(*message.Feed)
	if f.Code != "b" || len(f.Inputs) != 2 || !f.SkipTypeCheck || show(&f.Values, f.Inputs[1].Value) != "2" {
		t.Errorf("feed merge: %+v", f)
	}
	for _, tc := range mergeCases() {
		g, root, err := DecodeValue(tc.obj, codec.Limits{})
		got := "error: " + fmt.Sprint(err)
		if err == nil {
			if err := g.CheckStructure(root); err != nil {
				t.Fatalf("%s: structure: %v", tc.name, err)
			}
			got = show(g, root)
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
	// Complete.value twice merges (the object), its arms do not; an
	// ExtFunctionResult arm switch resets.
	ev, err := DecodeEvent(ld(6, ld(1, oList(oInt(1))), ld(1, oList(oInt(2)))), codec.Limits{})
	if c := ev.Body.(*message.Complete); err != nil || show(&c.Values, c.Value) != "[2]" {
		t.Errorf("complete merge: %v", err)
	}
	ev, err = DecodeEvent(ld(6, ld(1, oInt(1)), ld(1)), codec.Limits{})
	if c := ev.Body.(*message.Complete); err != nil || show(&c.Values, c.Value) != "1" {
		t.Errorf("complete then an empty object: %v", err)
	}
	ev, err = DecodeEvent(ld(6, ld(1), ld(1, oInt(1))), codec.Limits{})
	if err != nil || show(&ev.Body.(*message.Complete).Values, ev.Body.(*message.Complete).Value) != "1" {
		t.Errorf("an empty object, then complete: %v", err)
	}
	if _, err := DecodeEvent(ld(6, ld(1)), codec.Limits{}); err == nil || err.Error() != "missing required field MontyObject.kind" {
		t.Errorf("complete with no kind: %v", err)
	}
	r, err = DecodeRequest(ld(4, ld(2, ld(1, oInt(1))), ld(2, vi(3, 4))), codec.Limits{})
	if rc := r.Body.(*message.ResumeCall); err != nil || rc.Result.Kind != message.ResultFuture || rc.Result.Future != 4 {
		t.Errorf("result switch: %+v %v", rc.Result, err)
	}
	// Packed and unpacked ids mix.
	ev, err = DecodeEvent(ld(5, ld(1, []byte{1, 2}), vi(1, 300)), codec.Limits{})
	if rf := ev.Body.(*message.ResolveFutures); err != nil || len(rf.PendingCallIDs) != 3 || rf.PendingCallIDs[2] != 300 {
		t.Errorf("pending ids: %+v %v", ev.Body, err)
	}
}

// TestRoundTripDomain encodes domain values of every kind and decodes them
// back.
func TestRoundTripDomain(t *testing.T) {
	g, roots := allKinds()
	r := &message.ParentRequest{Body: &message.Feed{Code: "x", Values: *g}, TraceParent: value.Ptr("00-abc-01")}
	f := r.Body.(*message.Feed)
	for i, id := range roots {
		f.Inputs = append(f.Inputs, message.NamedRef{Name: string(rune('a' + i)), Value: id})
	}
	b, err := AppendRequest(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := DecodeRequest(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f2 := r2.Body.(*message.Feed)
	for i, in := range f2.Inputs {
		if err := sameValue(g, roots[i], &f2.Values, in.Value); err != nil {
			t.Errorf("input %d (%s): %v", i, show(g, roots[i]), err)
		}
	}
	// NaN payload bits survive.
	nan := math.Float64frombits(0x7ff8000000000123)
	vg := &value.Graph{}
	id := vg.Add(value.Float(nan))
	vb, err := AppendValue(nil, vg, id, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if g2, id2, err := DecodeValue(vb, codec.Limits{}); err != nil || g2.Node(id2).Num != 0x7ff8000000000123 {
		t.Errorf("nan payload lost")
	}
	// Negative int32 values are ten-byte varints.
	vg = &value.Graph{}
	id = vg.Add(value.TimeDeltaNode(value.TimeDelta{Days: -1}))
	vb, _ = AppendValue(nil, vg, id, codec.Limits{})
	if want := cat([]byte{0xa2, 0x01, 0x0b, 0x08}, bytes.Repeat([]byte{0xff}, 9), []byte{0x01}); !bytes.Equal(vb, want) {
		t.Errorf("timedelta(-1): %x", vb)
	}
	// A cycle leaf keeps its identity and placeholder.
	vg = &value.Graph{}
	id = vg.Add(value.Node{Kind: value.KindCycle, Num: 3}.WithText("[...]"))
	vb, _ = AppendValue(nil, vg, id, codec.Limits{})
	if !bytes.Equal(vb, ld(armCycle, vi(1, 3), sf(2, "[...]"))) {
		t.Errorf("cycle: %x", vb)
	}
	// A small BigInt node is written as a plain int.
	vg = &value.Graph{}
	id = vg.Add(value.Node{Kind: value.KindBigInt}.WithExt(big.NewInt(-5)))
	vb, _ = AppendValue(nil, vg, id, codec.Limits{})
	if !bytes.Equal(vb, oInt(-5)) {
		t.Errorf("small bigint: %x", vb)
	}
}

// allKinds builds a graph holding one value of every kind an input may
// have, plus the output-only kinds.
func allKinds() (*value.Graph, []value.NodeID) {
	g := &value.Graph{}
	var roots []value.NodeID
	add := func(n value.Node) value.NodeID { id := g.Add(n); roots = append(roots, id); return id }
	big1, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
	big2 := new(big.Int).Neg(big1)
	add(value.None())
	add(value.Ellipsis())
	add(value.NotImplemented())
	add(value.Bool(false))
	add(value.Bool(true))
	add(value.Int(0))
	add(value.Int(math.MinInt64))
	add(value.BigIntNode(big1))
	add(value.BigIntNode(big2))
	add(value.Float(math.Inf(-1)))
	add(value.Float(math.Copysign(0, -1)))
	add(value.Str(""))
	add(value.Str("a\U0001F600b"))
	add(value.Bytes(nil))
	add(value.Bytes([]byte{0, 1, 2}))
	one := g.Add(value.Int(1))
	two := g.Add(value.Str("two"))
	add(value.List(one, two, one))
	add(value.Tuple())
	add(value.Set(one))
	add(value.FrozenSet(one, two))
	add(value.Dict(value.Pair{Key: two, Value: one}, value.Pair{Key: one, Value: two}))
	add(value.NamedTupleNode("P", []string{"x", ""}, one, two))
	add(value.DateNode(value.Date{Year: 2024, Month: 2, Day: 29}))
	add(value.TimeNode(value.Time{Hour: 23, Minute: 59, Second: 59, Microsecond: 999999, Offset: value.Ptr[int32](-3600), TZName: value.Ptr(""), Fold: 1}))
	add(value.DateTimeNode(value.DateTime{Year: 9999, Month: 12, Day: 31, Offset: value.Ptr[int32](0)}))
	add(value.TimeDeltaNode(value.TimeDelta{Days: -999999999, Seconds: 86399, Microseconds: 999999}))
	add(value.TimeZoneNode(value.TimeZone{Offset: -86399, Name: value.Ptr("X")}))
	add(value.TimeZoneNode(value.TimeZone{}))
	add(value.ExceptionNode(value.Exception{Type: "ValueError", Arg: value.Ptr("")}))
	add(value.ExceptionNode(value.Exception{Type: "KeyError"}))
	add(value.BuiltinType("int"))
	attr := g.Add(value.Str("KIND"))
	host := add(value.TypeNode(value.Type{Name: "Widget", ID: value.UUID{1, 2, 3}, Origin: value.OriginHost, IsDataclass: true,
		Attrs: []value.Pair{{Key: attr, Value: one}}}))
	plain := add(value.TypeNode(value.Type{Name: "Plain", ID: value.UUID{9}, Origin: value.OriginHost}))
	add(value.TypeNode(value.Type{Name: "ZeroID", Origin: value.OriginHost})) // an all-zero uuid is still an id
	add(value.TypeNode(value.Type{Name: "Empty", ID: value.UUID{8}, Origin: value.OriginSandbox, Attrs: []value.Pair{}}))
	add(value.ClassInstanceNode(value.ClassInstance{Class: host, InstanceID: value.UUID{4}, Attrs: []value.Pair{{Key: attr, Value: two}}}))
	add(value.ClassInstanceNode(value.ClassInstance{Class: plain, InstanceID: value.UUID{5}}))
	add(value.FunctionNode(value.Function{Name: "ext", Docstring: value.Ptr("doc")}))
	add(value.BuiltinFunction("len"))
	add(value.Path("rel/x"))
	add(value.FileHandleNode(value.FileHandle{Path: "/x", Mode: "ab", Position: 1 << 40}))
	add(value.Repr("<module 'math'>"))
	add(value.Node{Kind: value.KindCycle, Num: 1}.WithText("{...}"))
	return g, roots
}

// TestClassNodes checks how the Types nested in ClassInstances become
// graph nodes: one node per class within a message while the nested Types
// agree, separate nodes when they differ.
func TestClassNodes(t *testing.T) {
	uid := func(b byte) []byte { u := make([]byte, 16); u[0] = b; return ld(1, u) }
	inst := func(name string, class, id byte, extra ...[]byte) []byte {
		typ := ld(1, cat(append([][]byte{sf(1, name), ld(2, uid(class)), vi(3, 2)}, extra...)...))
		return ld(armClassInstance, typ, ld(2, uid(id)), ld(3))
	}
	g, root, err := DecodeValue(oList(inst("P", 1, 10), inst("P", 1, 11), inst("Q", 2, 12), inst("P2", 1, 13),
		inst("P", 1, 14, vi(4, 1)), inst("P", 1, 15, ld(5))), codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	items := g.Node(root).Refs()
	class := func(i int) value.NodeID { return g.Node(items[i]).Ext().(*value.ClassInstance).Class }
	if class(0) != class(1) {
		t.Errorf("instances of one class do not share the class node")
	}
	for i := 2; i < len(items); i++ {
		if class(i) == class(0) {
			t.Errorf("instance %d shares a class node with a different nested Type", i)
		}
	}
	if err := g.CheckStructure(root); err != nil {
		t.Error(err)
	}
	// Re-encoding writes the nested Type at each instance as it was sent.
	b, err := AppendValue(nil, g, root, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	g2, root2, err := DecodeValue(b, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sameValue(g, root, g2, root2); err != nil {
		t.Error(err)
	}
	if c := g2.Node(g2.Node(root2).Refs()[5]).Ext().(*value.ClassInstance).Class; g2.Node(c).Ext().(*value.Type).Attrs == nil {
		t.Errorf("present-but-empty class attrs lost")
	}
}

// TestNoAliasing checks that decoded messages own their data: the frame
// buffer may be reused as soon as a decode returns.
func TestNoAliasing(t *testing.T) {
	v := vectorByName(t, "error_unicode_decode_offset")
	for _, h := range append(v.Responses, vectorByName(t, "value_dict").Responses...) {
		frame := unhex(t, h)
		ev, err := DecodeEvent(frame, codec.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := AppendEvent(nil, ev)
		for i := range frame {
			frame[i] = 0xee
		}
		if got, _ := AppendEvent(nil, ev); !bytes.Equal(got, want) {
			t.Errorf("decoded event changed when the frame was overwritten")
		}
	}
	big := ld(6, ld(1, ld(armBigInt, vi(1, 1), ld(2, bytes.Repeat([]byte{0x7f}, 20)))))
	ev, _ := DecodeEvent(big, codec.Limits{})
	for i := range big {
		big[i] = 0
	}
	c := ev.Body.(*message.Complete)
	if s := show(&c.Values, c.Value); !strings.HasPrefix(s, "big:-") {
		t.Errorf("bigint: %s", s)
	}
}
