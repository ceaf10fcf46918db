package codecv4

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"unsafe"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/codectest"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

func repeatBytes(n int, elem ...byte) []byte {
	out := make([]byte, 0, n*len(elem))
	for range n {
		out = append(out, elem...)
	}
	return out
}

// attackFrames are frames made of many cheap entries that grow a lot when
// decoded, with the innermost path segment their failure names.
func attackFrames(n int) []struct {
	name    string
	request bool
	frame   []byte
	seg     string
} {
	exc := append(pb(nil).str(1, "ValueError"), repeatBytes(n, 0x1a, 0x00)...)
	return []struct {
		name    string
		request bool
		frame   []byte
		seg     string
	}{
		{"traceback", false, pb(nil).msg(7, pb(nil).msg(1, exc)), "RaisedException.traceback: Error.exception: ChildEvent.kind"},
		{"print", false, pb(nil).msg(1, repeatBytes(n, 0x0a, 0x00)), "Print.segments: ChildEvent.kind"},
		{"futures", true, pb(nil).msg(6, repeatBytes(n, 0x0a, 0x00)), "ResumeFutures.results: ParentRequest.kind"},
		{"inputs", true, pb(nil).msg(3, repeatBytes(n, 0x12, 0x00)), "Feed.inputs: ParentRequest.kind"},
		{"requirements", true, pb(nil).msg(2, repeatBytes(n, 0x0a, 0x00)), "InstallDependencies.requirements: ParentRequest.kind"},
		{"nodes", false, completeFrame(0, pb(repeatBytes(n, 0x12, 0x02, 0x12, 0x00))), "Complete.values: ChildEvent.kind"},
		{"list_ids", false, completeFrame(0, node(pb(nil).msg(11, repeatBytes(n, 0x08, 0x00)))), "MontyNode.kind: Complete.values: ChildEvent.kind"},
		{"dict_pairs", false, completeFrame(0, node(pb(nil).msg(14, repeatBytes(n, 0x0a, 0x00)))), "MontyNode.kind: Complete.values: ChildEvent.kind"},
		{"kwargs", false, pb(nil).msg(2, repeatBytes(n, 0x1a, 0x00)), "FunctionCall.kwargs: ChildEvent.kind"},
		{"pending", false, pb(nil).msg(5, repeatBytes(n, 0x08, 0x00)), "ResolveFutures.pending_call_ids: ChildEvent.kind"},
	}
}

func decodeAny(request bool, f []byte, l codec.Limits) (spent, error) {
	if request {
		_, b, err := decodeRequest(f, l)
		return b, err
	}
	_, b, err := decodeEvent(f, l)
	return b, err
}

func TestWrapperAttacksAreBounded(t *testing.T) {
	for _, a := range attackFrames(100_000) {
		t.Run(a.name, func(t *testing.T) {
			b, err := decodeAny(a.request, a.frame, lim(4096))
			if !errors.Is(err, codec.ErrBudget) {
				t.Fatalf("%v", err)
			}
			want := prefix + a.seg + ": frame exceeds decode memory budget"
			if err.Error() != want {
				t.Fatalf("error\n  %q\nwant\n  %q", err, want)
			}
			if !strings.Contains(err.Error(), strings.SplitN(a.seg, ": ", 2)[0]+": ") {
				t.Fatal("innermost segment missing")
			}
			if b.Charged() > 4096 {
				t.Fatalf("charged %d", b.Charged())
			}
		})
	}
}

// geometric is the charge of growing a vector to n elements of size elem:
// Σ over the capacities 4, 8, 16, … that the growth allocates.
func geometric(n int, elem int64) int64 {
	var total int64
	c := 0
	for i := 0; i < n; i++ {
		if i == c {
			c = budget.NextCap(c)
			total += int64(c) * elem
		}
	}
	return total
}

func TestRepeatedFieldsAreChargedByTheGrowthRule(t *testing.T) {
	sz := func(v any) int64 { return int64(reflectSize(v)) }
	frame := pb(nil).msg(2, nil).msg(3, nil)
	fields := []struct {
		name    string
		request bool
		build   func(n int) []byte
		elem    int64
	}{
		{"Arena.nodes", false, func(n int) []byte { return completeFrame(0, pb(repeatBytes(n, 0x12, 0x02, 0x12, 0x00))) }, nodeBytes},
		{"Indexes.items", false, func(n int) []byte {
			return completeFrame(0, arenaOf(noneNode, node(pb(nil).msg(11, repeatBytes(n, 0x08, 0x00)))))
		}, budget.RefCost},
		{"NodePairs.pairs", false, func(n int) []byte {
			return completeFrame(0, arenaOf(noneNode, node(pb(nil).msg(14, repeatBytes(n, 0x0a, 0x00)))))
		}, budget.PairCost},
		{"NamedTupleNode.field_names", false, func(n int) []byte {
			return completeFrame(0, arenaOf(noneNode, node(pb(nil).msg(13, repeatBytes(n, 0x12, 0x00)))))
		}, sz("")},
		{"NamedTupleNode.values", false, func(n int) []byte {
			return completeFrame(0, arenaOf(noneNode, node(pb(nil).msg(13, repeatBytes(n, 0x18, 0x00)))))
		}, budget.RefCost},
		{"RaisedException.traceback", false, func(n int) []byte {
			// The type comes last so that the frames do not change how much
			// of the frame is left when it is copied.
			return pb(nil).msg(7, pb(nil).msg(1, pb(repeatBytes(n, append([]byte{0x1a, byte(len(frame))}, frame...)...)).str(1, "ValueError")))
		}, sz(message.StackFrame{})},
		{"Feed.inputs", true, func(n int) []byte { return pb(nil).msg(3, repeatBytes(n, 0x12, 0x00)) }, sz(message.NamedRef{})},
		{"ResumeFutures.results", true, func(n int) []byte { return pb(nil).msg(6, repeatBytes(n, 0x0a, 0x00)) }, sz(message.FutureResult{})},
		{"InstallDependencies.requirements", true, func(n int) []byte { return pb(nil).msg(2, repeatBytes(n, 0x0a, 0x00)) }, sz("")},
		{"Print.segments", false, func(n int) []byte { return pb(nil).msg(1, repeatBytes(n, 0x0a, 0x00)) }, sz(message.PrintSegment{})},
		{"FunctionCall.args", false, func(n int) []byte { return pb(nil).msg(2, repeatBytes(n, 0x10, 0x00)) }, budget.RefCost},
		{"FunctionCall.kwargs", false, func(n int) []byte { return pb(nil).msg(2, repeatBytes(n, 0x1a, 0x00)) }, budget.PairCost},
		{"ResolveFutures.pending_call_ids", false, func(n int) []byte { return pb(nil).msg(5, repeatBytes(n, 0x08, 0x00)) }, 4},
		{"ResolveFutures.pending_call_ids/packed", false, func(n int) []byte {
			if n == 0 {
				return pb(nil).msg(5, nil)
			}
			return pb(nil).msg(5, pb(nil).packed(1, make([]uint64, n)...))
		}, 4},
	}
	for _, f := range fields {
		t.Run(f.name, func(t *testing.T) {
			base, _ := decodeAny(f.request, f.build(0), codec.Limits{})
			for _, n := range []int{1, 4, 5, 16, 65} {
				fr := f.build(n)
				b, _ := decodeAny(f.request, fr, codec.Limits{})
				got := b.Charged() - base.Charged()
				if want := geometric(n, f.elem); got != want {
					t.Fatalf("%d elements: charged %d, want %d", n, got, want)
				}
				if _, err := decodeAny(f.request, fr, lim(b.Charged())); errors.Is(err, codec.ErrBudget) {
					t.Fatalf("%d elements: exact budget fails: %v", n, err)
				}
				if _, err := decodeAny(f.request, fr, lim(b.Charged()-1)); !errors.Is(err, codec.ErrBudget) {
					t.Fatalf("%d elements: budget-1 gives %v", n, err)
				}
			}
		})
	}
}

func TestPackedIDRunsReserveUpFront(t *testing.T) {
	list := func(ids ...uint64) []byte { return completeFrame(0, arenaOf(noneNode, node(nList(ids...)))) }
	_, base, _ := decodeEvent(list(), codec.Limits{})
	// 3 ids of 1, 2 and 3 bytes: a 6-byte run reserves 6 slots.
	_, b, err := decodeEvent(list(0, 300, 70000), codec.Limits{})
	if err != nil && !strings.Contains(err.Error(), "Arena") {
		t.Fatal(err)
	}
	if got, want := b.Charged()-base.Charged(), 6*budget.RefCost; got != want {
		t.Fatalf("charged %d, want %d", got, want)
	}
	// An empty packed run costs nothing.
	_, b, _ = decodeEvent(completeFrame(0, arenaOf(noneNode, node(pb(nil).msg(11, pb(nil).bytes(1, nil))))), codec.Limits{})
	if b.Charged() != base.Charged() {
		t.Fatalf("empty run charged %d", b.Charged()-base.Charged())
	}
	// Packed args reserve too.
	_, a0, _ := decodeEvent(pb(nil).msg(2, nil), codec.Limits{})
	_, a1, _ := decodeEvent(pb(nil).msg(2, pb(nil).packed(2, 1, 200)), codec.Limits{})
	if got := a1.Charged() - a0.Charged(); got != 3*budget.RefCost {
		t.Fatalf("args charged %d", got)
	}
}

func TestDuplicatesNeverRefund(t *testing.T) {
	// A string field repeated: every copy is charged (at least its length).
	one, _ := decodeAny(true, pb(nil).msg(3, pb(nil).str(1, "abcdef")), codec.Limits{})
	three, _ := decodeAny(true, pb(nil).msg(3, pb(nil).str(1, "abc").str(1, "abcdef").str(1, "x")), codec.Limits{})
	if three.Charged() < one.Charged()+3+1 {
		t.Fatalf("charges %d vs %d", three.Charged(), one.Charged())
	}
	// A displaced oneof payload keeps its charge.
	_, a, _ := decodeEvent(completeFrame(0, node(nInt(7))), codec.Limits{})
	_, b, _ := decodeEvent(completeFrame(0, node(append(nList(1, 2, 3, 4), nInt(7)...))), codec.Limits{})
	if b.Charged() < a.Charged()+4*budget.RefCost {
		t.Fatalf("displaced list refunded: %d vs %d", b.Charged(), a.Charged())
	}
}

func TestMalformedBuffersConsumeNoPayloadBudget(t *testing.T) {
	for _, f := range [][]byte{
		pb(nil).msg(3, []byte{0x0a, 0xff, 0xff, 0xff, 0x7f}),
		pb(nil).msg(3, []byte{0x0a, 0x10, 'a'}),
	} {
		_, b, err := decodeRequest(f, lim(1024))
		wantErr(t, err, prefix+"Feed.code: ParentRequest.kind: buffer underflow")
		feedOnly, _ := decodeAny(true, pb(nil).msg(3, nil), codec.Limits{})
		if b.Charged() != feedOnly.Charged() {
			t.Fatalf("charged %d, want %d", b.Charged(), feedOnly.Charged())
		}
	}
}

func TestOverlongDiagnosticsAreBounded(t *testing.T) {
	name := strings.Repeat("x", 1<<20)
	_, err := DecodeArena(node(pb(nil).str(26, name)), codec.Limits{})
	wantErr(t, err, prefix+"invalid wire value (error message exceeds 512 bytes)")
}

func reflectSize(v any) uintptr {
	switch x := v.(type) {
	case string:
		return unsafe.Sizeof(x)
	case message.StackFrame:
		return unsafe.Sizeof(x)
	case message.NamedRef:
		return unsafe.Sizeof(x)
	case message.FutureResult:
		return unsafe.Sizeof(x)
	case message.PrintSegment:
		return unsafe.Sizeof(x)
	}
	panic(fmt.Sprintf("%T", v))
}

// heapFrames are valid frames of many shapes, for measuring real
// allocation against the charge.
func heapFrames(t *testing.T) []struct {
	name    string
	request bool
	frame   []byte
} {
	type fr = struct {
		name    string
		request bool
		frame   []byte
	}
	var out []fr
	ev := func(name string, e *message.ChildEvent) { out = append(out, fr{name, false, mustEncodeEvent(t, e)}) }
	rq := func(name string, r *message.ParentRequest) {
		out = append(out, fr{name, true, mustEncodeRequest(t, r)})
	}

	var ints value.Graph
	ids := make([]value.NodeID, 100_000)
	for i := range ids {
		ids[i] = ints.Add(value.Int(int64(i) * 7919))
	}
	ev("int_list", &message.ChildEvent{Body: &message.Complete{Value: ints.Add(value.List(ids...)), Values: ints}})

	var dict value.Graph
	pairs := make([]value.Pair, 20_000)
	for i := range pairs {
		k := dict.Add(value.Str(fmt.Sprintf("key-%d", i)))
		v := dict.Add(value.Str(strings.Repeat("v", i%200)))
		pairs[i] = value.Pair{Key: k, Value: v}
	}
	ev("str_dict", &message.ChildEvent{Body: &message.Complete{Value: dict.Add(value.Dict(pairs...)), Values: dict}})

	var chain value.Graph
	x := chain.Add(value.List())
	for range 20_000 {
		x = chain.Add(value.List(x))
	}
	rq("chain_feed", &message.ParentRequest{Body: &message.Feed{Code: "x", Inputs: []message.NamedRef{{Name: "x", Value: x}}, Values: chain}})

	var mixed value.Graph
	for range 200 {
		for _, c := range nodeCorpus() {
			off := value.NodeID(len(mixed.Nodes))
			mixed.Append(&c.g)
			_ = off
		}
	}
	ev("mixed", &message.ChildEvent{Body: &message.Complete{Value: 0, Values: mixed}})

	var excs []message.FutureResult
	for i := range 2000 {
		excs = append(excs, message.FutureResult{CallID: uint32(i), Result: &message.ExtResult{Kind: message.ResultError, Error: fullException()}})
	}
	rq("futures", &message.ParentRequest{Body: &message.ResumeFutures{Results: excs}})

	segs := make([]message.PrintSegment, 5000)
	for i := range segs {
		segs[i] = message.PrintSegment{Stream: message.StreamStdout, Text: strings.Repeat("p", i%50)}
	}
	ev("print", &message.ChildEvent{Body: &message.Print{Segments: segs}})
	ev("big_bytes", &message.ChildEvent{Body: &message.DumpResult{State: make([]byte, 3<<20)}})
	// No node_count hint: the node vector grows step by step.
	out = append(out, fr{"unhinted", false, completeFrame(0, pb(repeatBytes(100_000, noneNode...)))})
	return out
}

// heapSlack is the constant the budget does not cover: the decoder's own
// state, error values, and the allocator rounding a large vector up to whole
// pages (vectors are charged capacity × element size, as the protocol says).
const heapSlack = 16 << 10

// decoderOverhead is what a small decode allocates without charging it:
// the decoder's and the budget's own state.
const decoderOverhead = 128

func TestRealAllocationStaysWithinTheBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation")
	}
	for _, f := range heapFrames(t) {
		b, err := decodeAny(f.request, f.frame, codec.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		charged := b.Charged()
		var derr error
		got := codectest.Measure(func() { _, derr = decodeAny(f.request, f.frame, lim(charged)) })
		if derr != nil {
			t.Fatalf("%s: %v", f.name, derr)
		}
		t.Logf("%-10s frame %8d B, charged %9d B, allocated %9d B", f.name, len(f.frame), charged, got)
		if limit := uint64(charged) + heapSlack; got > limit {
			t.Errorf("%s: allocated %d > charged %d + slack", f.name, got, charged)
		}
	}
	for _, a := range attackFrames(100_000) {
		got := codectest.Measure(func() { decodeAny(a.request, a.frame, lim(4096)) })
		if got > 4096+heapSlack {
			t.Errorf("attack %s: allocated %d bytes under a 4096-byte budget", a.name, got)
		}
	}
}

func TestEachFrameHasItsOwnBudget(t *testing.T) {
	valid := completeFrame(0, fillArena(40, 0, nil))
	_, b, err := decodeEvent(valid, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	l := lim(b.Charged())
	for i, f := range [][]byte{valid, {0x00}, valid, valid} {
		_, err := DecodeEvent(f, l)
		if (err == nil) != (i != 1) {
			t.Fatalf("frame %d: %v", i, err)
		}
	}
	// Concurrent decodes do not share budgets (run with -race).
	done := make(chan error)
	for range 8 {
		go func() {
			var err error
			for range 50 {
				if _, err = DecodeEvent(valid, l); err != nil {
					break
				}
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestTimezoneNamesAreCharged(t *testing.T) {
	name := strings.Repeat("z", 500)
	for _, mk := range []func(string) pb{
		func(n string) pb {
			return pb(nil).msg(19, pb(nil).varint(1, 2020).varint(2, 1).varint(3, 1).varint(8, 0).str(9, n))
		},
		func(n string) pb { return pb(nil).msg(18, pb(nil).varint(5, 0).str(6, n)) },
		func(n string) pb { return pb(nil).msg(21, pb(nil).str(2, n)) },
	} {
		_, short, err := decodeArena(node(mk("")), codec.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, long, err := decodeArena(node(mk(name)), codec.Limits{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := long.Charged() - short.Charged(); d < 500 {
			t.Fatalf("a 500-byte name adds %d", d)
		}
	}
}

func TestBigIntsArePreflighted(t *testing.T) {
	for n := range 128 {
		for _, zeros := range []int{0, 256} {
			mag := make([]byte, zeros+n)
			for i := zeros; i < len(mag); i++ {
				mag[i] = byte(i*7 + 1)
			}
			want := new(big.Int).SetBytes(mag)
			want.Neg(want)
			a := node(pb(nil).msg(6, pb(nil).varint(1, 1).bytes(2, mag)))
			g, b, err := decodeArena(a, codec.Limits{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Nodes[0].BigInt(); got.Cmp(want) != 0 {
				t.Fatalf("len %d+%d: %v != %v", zeros, n, got, want)
			}
			if _, err := DecodeArena(a, lim(b.Charged()-1)); !errors.Is(err, codec.ErrBudget) {
				t.Fatalf("len %d+%d: budget-1 gives %v", zeros, n, err)
			}
			if got := codectest.Measure(func() { decodeArena(a, lim(b.Charged()), nil) }); !raceEnabled && got > uint64(b.Charged())+decoderOverhead {
				t.Fatalf("len %d+%d: allocated %d, charged %d", zeros, n, got, b.Charged())
			}
		}
	}
}

func TestValueAllocationsAreMeasuredIndependently(t *testing.T) {
	mk := func(x func(g *value.Graph) value.Node) value.Graph {
		var g value.Graph
		attr := g.Add(value.Str("attr"))
		none := g.Add(value.None())
		cls := g.Add(value.TypeNode(value.Type{Name: "C", ID: uuidA, Origin: value.OriginHost}))
		_, _, _ = attr, none, cls
		g.Add(x(&g))
		return g
	}
	mag := make([]byte, 513)
	for i := range mag {
		mag[i] = byte(i + 1)
	}
	cases := map[string]func(g *value.Graph) value.Node{
		"none": func(*value.Graph) value.Node { return value.None() },
		"list33": func(*value.Graph) value.Node {
			ids := make([]value.NodeID, 33)
			for i := range ids {
				ids[i] = value.NodeID(i % 3)
			}
			return value.List(ids...)
		},
		"dict9": func(*value.Graph) value.Node {
			ps := make([]value.Pair, 9)
			for i := range ps {
				ps[i] = value.Pair{Key: 0, Value: value.NodeID(i % 3)}
			}
			return value.Dict(ps...)
		},
		"named_tuple": func(*value.Graph) value.Node { return value.NamedTupleNode("T", []string{"a", "b"}, 0, 1) },
		"class_type": func(*value.Graph) value.Node {
			return value.TypeNode(value.Type{Name: "D", ID: uuidB, Origin: value.OriginSandbox, Attrs: []value.Pair{{Key: 0, Value: 1}}})
		},
		"class_instance": func(*value.Graph) value.Node {
			return value.ClassInstanceNode(value.ClassInstance{Class: 2, InstanceID: uuidB, Attrs: []value.Pair{{Key: 0, Value: 1}}})
		},
		"bigint513": func(*value.Graph) value.Node {
			return value.Node{Kind: value.KindBigInt}.WithExt(new(big.Int).Neg(new(big.Int).SetBytes(mag)))
		},
	}
	for name, x := range cases {
		g := mk(x)
		a, err := AppendArena(nil, &g)
		if err != nil {
			t.Fatal(err)
		}
		got, b, err := decodeArena(a, codec.Limits{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := diff(&g, got); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
		if _, err := DecodeArena(a, lim(b.Charged()-1)); !errors.Is(err, codec.ErrBudget) {
			t.Fatalf("%s: budget-1 gives %v", name, err)
		}
		if alloc := codectest.Measure(func() { decodeArena(a, lim(b.Charged()), nil) }); !raceEnabled && alloc > uint64(b.Charged())+decoderOverhead {
			t.Fatalf("%s: allocated %d, charged %d", name, alloc, b.Charged())
		}
	}
}
