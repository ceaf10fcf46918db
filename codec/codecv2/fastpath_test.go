package codecv2

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The element fast paths (scalarItem, scalarRun) must decode exactly what
// the general path decodes: the same graph, the same error, under the same
// budget.

// decodeBoth decodes b as an event and as a bare value with and without
// the fast paths, under lim, and reports any difference.
func decodeBoth(b []byte, lim codec.Limits) error {
	type result struct {
		ev  any
		err string
	}
	run := func(off bool) (ev, val result) {
		noFastPaths = off
		defer func() { noFastPaths = false }()
		e, err := DecodeEvent(b, lim)
		ev = result{e, fmt.Sprint(err)}
		g, root, err := DecodeValue(b, lim)
		val = result{[]any{g, root}, fmt.Sprint(err)}
		return ev, val
	}
	fastEv, fastVal := run(false)
	slowEv, slowVal := run(true)
	if fastEv.err != slowEv.err || !sameDecoded(fastEv.ev, slowEv.ev) {
		return fmt.Errorf("event: fast %v (%s), general %v (%s)", fastEv.ev, fastEv.err, slowEv.ev, slowEv.err)
	}
	if fastVal.err != slowVal.err || !sameDecoded(fastVal.ev, slowVal.ev) {
		return fmt.Errorf("value: fast %v (%s), general %v (%s)", fastVal.ev, fastVal.err, slowVal.ev, slowVal.err)
	}
	return nil
}

// sameDecoded reports whether two decode results (an event, or a graph and
// root) are identical: graphs node for node, the rest field for field.
func sameDecoded(a, b any) bool {
	switch x := a.(type) {
	case *message.ChildEvent:
		y := b.(*message.ChildEvent)
		if x == nil || y == nil {
			return x == y
		}
		ga, _ := valueRoots(x.Body)
		gb, _ := valueRoots(y.Body)
		if (ga == nil) != (gb == nil) || ga != nil && !ga.Equal(gb) {
			return false
		}
		return sameEvent(x, y) == nil
	case []any:
		y := b.([]any)
		ga, gb := x[0].(*value.Graph), y[0].(*value.Graph)
		if (ga == nil) != (gb == nil) || ga != nil && !ga.Equal(gb) {
			return false
		}
		return x[1] == y[1]
	}
	return reflect.DeepEqual(a, b)
}

// fastPathSeeds are MontyObject bodies around the fast paths' edges.
func fastPathSeeds() [][]byte {
	items := [][]byte{
		oInt(0), oInt(-1), oInt(1 << 40), oInt(math.MinInt64), oInt(math.MaxInt64),
		vi(armBool, 0), vi(armBool, 7), vi(armBool, 1<<63),
		protowire.AppendFixed64(protowire.AppendTag(nil, armFloat, protowire.Fixed64Type), math.Float64bits(-2.5)),
		oNone(), ld(armEllipsis), ld(armNotImplemented), ld(armNone, vi(3, 1)),
		oStr(""), oStr("héllo"), oStr("\xff"), oStr(string(bytes.Repeat([]byte{'x'}, 125))),
		cat(oInt(1), oInt(2)),   // a repeated arm: merged by the general path
		cat(oInt(1), oStr("x")), // the last arm wins
		{0x28, 0x80},            // a varint running past the element
		{0x28, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, // overflow
		{0x29, 1, 2, 3, 4, 5, 6, 7, 8},                                     // int with the wrong wire type
		{0x20, 0x81, 0x00},                                                 // a non-minimal varint
		oList(oInt(3), oNone()),
	}
	var seeds [][]byte
	seeds = append(seeds, oList(items...), ld(armTuple, itemsOf(1, items)...))
	for _, it := range items {
		seeds = append(seeds, oList(it, oInt(5), it))
	}
	// Elements at and around the depth limit.
	for _, n := range []int{46, 47, 48, 49, 50, 98, 99, 100} {
		seeds = append(seeds, nestLists(n, oList(oInt(1), oNone(), oStr("s"))))
	}
	// An element whose length overshoots its list.
	l := oList(oInt(1), oInt(2))
	l[1]-- // the list's length
	seeds = append(seeds, l)
	return seeds
}

func TestFastPathsAgree(t *testing.T) {
	var frames [][]byte
	for _, o := range fastPathSeeds() {
		frames = append(frames, o, ld(6, ld(1, o)), ld(2, sf(1, "f"), ld(2, o), vi(4, 3)))
	}
	for _, v := range loadVectors(t) {
		for _, h := range v.Responses {
			frames = append(frames, unhex(t, h))
		}
	}
	for _, b := range frames {
		for _, lim := range []codec.Limits{{}, {MaxDecodeBytes: 200}, {MaxDecodeBytes: int64(40 * len(b))}} {
			if err := decodeBoth(b, lim); err != nil {
				t.Fatalf("%x (budget %d): %v", b, lim.MaxDecodeBytes, err)
			}
		}
	}
}

func FuzzFastPathsAgree(f *testing.F) {
	for _, o := range fastPathSeeds() {
		f.Add(ld(6, ld(1, o)), int64(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, budget int64) {
		if err := decodeBoth(b, codec.Limits{MaxDecodeBytes: budget}); err != nil {
			t.Fatal(err)
		}
	})
}
