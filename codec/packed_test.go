package codec_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/codecv2"
	"github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/codec/codecv5"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// packedInputs converts Go values whose integer slices value.FromGo holds
// packed (value.Node.Ints), and some it cannot pack, into one graph.
func packedInputs(t *testing.T) (value.Graph, []value.NodeID) {
	t.Helper()
	shared := []int32{7, -7, 70000}
	big := make([]int64, 5000)
	for i := range big {
		big[i] = int64(i*i) - 1<<40
	}
	type row struct {
		Name string
		IDs  []int
		Raw  []uint64
	}
	vals := []any{
		[]int64{1, -2, math.MaxInt64, math.MinInt64},
		big,
		[][]int32{shared, shared, {1}},
		row{Name: "r", IDs: []int{3, 2, 1}, Raw: []uint64{math.MaxUint64, 5}}, // Raw: a bigint, not packed
		[]uint64{1, 2, math.MaxInt64},
		[3]int16{-1, 0, 1},
		map[string][]uint16{"a": {1, 65535}, "b": nil},
		[]any{[]uint8{1, 2}, []int8{-128, 127}, "x"},
		// Class and instance attributes and named tuple items refer to
		// packed lists too.
		&value.ObjectValue{
			Class:      value.ClassValue{Name: "P", ID: value.NewUUID(), Attrs: []value.Attr{{Name: "dims", Value: []int{2, 3}}}},
			InstanceID: value.NewUUID(),
			Attrs:      []value.Attr{{Name: "xs", Value: []int32{9, 8, 7}}, {Name: "n", Value: 1}},
		},
		value.NamedTupleValue{TypeName: "T", Fields: []string{"a", "b"}, Values: []any{[]int64{4, 5}, shared}},
		// Floats, with a NaN payload, -0, infinities and float32 values.
		[]float64{math.Float64frombits(0x7ff8_0000_dead_beef), math.Copysign(0, -1), math.Inf(1), math.Inf(-1), 1e-310, 2.5},
		[2][]float32{{1.5, -0.25}, {float32(math.Pi)}},
	}
	var g value.Graph
	var roots []value.NodeID
	for _, v := range vals {
		id, err := value.FromGo(&g, v)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, id)
	}
	var ints, floats bool
	for i := range g.Nodes {
		ints = ints || g.Nodes[i].Ints() != nil
		floats = floats || g.Nodes[i].Floats() != nil
	}
	if !ints || !floats {
		t.Fatalf("FromGo packed ints %v, floats %v", ints, floats)
	}
	return g, roots
}

// Every codec writes a graph with packed items exactly as it writes the
// same graph unpacked, in requests and events alike, and leaves the
// caller's message as it was.
func TestPackedValuesEncodeAsUnpacked(t *testing.T) {
	codecs := []codec.Codec{codecv2.Codec, codecv4.Codec, codecv5.Codec}
	g, roots := packedInputs(t)
	u, ids := g.Unpack()
	if ids == nil || u.HasPacked() || len(u.Nodes) <= len(g.Nodes) {
		t.Fatalf("Unpack: %d nodes from %d, map %v", len(u.Nodes), len(g.Nodes), ids != nil)
	}
	for i, r := range roots {
		if g.Repr(r) != u.Repr(ids[r]) {
			t.Fatalf("root %d: packed %s, unpacked %s", i, g.Repr(r), u.Repr(ids[r]))
		}
	}
	feed := func(g value.Graph, m func(value.NodeID) value.NodeID) *message.Feed {
		f := &message.Feed{Code: "x", Values: g}
		for i, r := range roots {
			f.Inputs = append(f.Inputs, message.NamedRef{Name: "v" + string(rune('a'+i)), Value: m(r)})
		}
		return f
	}
	same := func(r value.NodeID) value.NodeID { return r }
	mapped := func(r value.NodeID) value.NodeID { return ids[r] }
	last := roots[len(roots)-1]
	reqs := []struct {
		name             string
		packed, unpacked message.Request
	}{
		{"Feed", feed(g, same), feed(*u, mapped)},
		{"ResumeCall", &message.ResumeCall{CallID: 3, Values: g, Result: &message.ExtResult{Kind: message.ResultReturn, Value: roots[1]}},
			&message.ResumeCall{CallID: 3, Values: *u, Result: &message.ExtResult{Kind: message.ResultReturn, Value: ids[roots[1]]}}},
		{"ResumeNameLookup", &message.ResumeNameLookup{Kind: message.LookupValue, Value: roots[2], Values: g},
			&message.ResumeNameLookup{Kind: message.LookupValue, Value: ids[roots[2]], Values: *u}},
		{"ResumeFutures", &message.ResumeFutures{Values: g, Results: []message.FutureResult{
			{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: roots[3]}},
			{CallID: 2, Result: &message.ExtResult{Kind: message.ResultReturn, Value: last}}}},
			&message.ResumeFutures{Values: *u, Results: []message.FutureResult{
				{CallID: 1, Result: &message.ExtResult{Kind: message.ResultReturn, Value: ids[roots[3]]}},
				{CallID: 2, Result: &message.ExtResult{Kind: message.ResultReturn, Value: ids[last]}}}}},
	}
	events := []struct {
		name             string
		packed, unpacked message.Event
	}{
		{"Complete", &message.Complete{Value: roots[4], Values: g}, &message.Complete{Value: ids[roots[4]], Values: *u}},
		{"OsCall", &message.OsCall{CallID: 1, Op: message.OpGetenv, Key: "K", Default: roots[6], Values: g},
			&message.OsCall{CallID: 1, Op: message.OpGetenv, Key: "K", Default: ids[roots[6]], Values: *u}},
		{"FunctionCall", &message.FunctionCall{FunctionName: "f", Args: roots[:3], Kwargs: []value.Pair{{Key: roots[7], Value: roots[5]}}, Values: g},
			&message.FunctionCall{FunctionName: "f", Args: []value.NodeID{ids[roots[0]], ids[roots[1]], ids[roots[2]]},
				Kwargs: []value.Pair{{Key: ids[roots[7]], Value: ids[roots[5]]}}, Values: *u}},
	}
	for _, c := range codecs {
		// same encodes a message packed and unpacked and compares the bytes.
		same := func(name string, enc func(packed bool) ([]byte, error)) {
			want, err := enc(false)
			if err != nil {
				t.Fatalf("v%d %s unpacked: %v", c.Version(), name, err)
			}
			got, err := enc(true)
			if err != nil {
				t.Fatalf("v%d %s packed: %v", c.Version(), name, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("v%d %s: packed encodes to %d bytes, unpacked to %d (or they differ)", c.Version(), name, len(got), len(want))
			}
		}
		for _, r := range reqs {
			same(r.name, func(packed bool) ([]byte, error) {
				body := r.unpacked
				if packed {
					body = r.packed
				}
				return c.AppendRequest(nil, &message.ParentRequest{Body: body})
			})
		}
		for _, e := range events {
			same(e.name, func(packed bool) ([]byte, error) {
				body := e.unpacked
				if packed {
					body = e.packed
				}
				return c.AppendEvent(nil, &message.ChildEvent{Body: body})
			})
		}
		// The decoded feed holds the values FromGo made.
		b, err := c.AppendRequest(nil, &message.ParentRequest{Body: reqs[0].packed})
		if err != nil {
			t.Fatal(err)
		}
		r, err := c.DecodeRequest(b, codec.Limits{})
		if err != nil {
			t.Fatalf("v%d: %v", c.Version(), err)
		}
		f := r.Body.(*message.Feed)
		for i, in := range f.Inputs {
			if got, want := f.Values.Repr(in.Value), g.Repr(roots[i]); got != want {
				t.Fatalf("v%d input %d: decoded %s, sent %s", c.Version(), i, got, want)
			}
		}
	}
	// The caller's messages are untouched.
	f := reqs[0].packed.(*message.Feed)
	if !f.Values.HasPacked() || f.Inputs[1].Value != roots[1] {
		t.Fatal("encoding modified the caller's Feed")
	}
	fc := events[2].packed.(*message.FunctionCall)
	if fc.Args[1] != roots[1] || fc.Kwargs[0].Key != roots[7] {
		t.Fatal("encoding modified the caller's FunctionCall")
	}
	if _, err := codecv4.AppendArena(nil, &g, roots...); err == nil {
		t.Fatal("AppendArena took a graph with packed items")
	}
}

// BenchmarkPackedInput converts a 1M-element []int64 with value.FromGo and
// encodes it as a Feed input, at each version: "packed" as FromGo makes
// it, "unpacked" with a node per int (the graph FromGo made before it
// packed, and the graph any decoder makes).
func BenchmarkPackedInput(b *testing.B) {
	xs := make([]int64, 1_000_000)
	for i := range xs {
		xs[i] = int64(i)
	}
	for _, c := range []codec.Codec{codecv2.Codec, codecv4.Codec} {
		for _, packed := range []bool{true, false} {
			name := "v" + string(rune('0'+c.Version())) + "/unpacked"
			if packed {
				name = "v" + string(rune('0'+c.Version())) + "/packed"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				var buf []byte
				for b.Loop() {
					var g value.Graph
					root, err := value.FromGo(&g, xs)
					if err != nil {
						b.Fatal(err)
					}
					gp := &g
					if !packed {
						gp, root = g.Unpacked(root)
					}
					buf, err = c.AppendRequest(buf[:0], &message.ParentRequest{Body: &message.Feed{
						Code: "len(xs)", Inputs: []message.NamedRef{{Name: "xs", Value: root}}, Values: *gp}})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
