package value

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const cpythonDigitsMessage = "Exceeds the limit (4300 digits) for integer string conversion; use sys.set_int_max_str_digits() to increase the limit"

func TestIntStrDigitsLimit(t *testing.T) {
	ten := big.NewInt(10)
	for _, digits := range []int{1, 4299, 4300, 4301, 4302, 9000} {
		// The smallest and the largest int of that many digits, both signs.
		lo := new(big.Int).Exp(ten, big.NewInt(int64(digits-1)), nil)
		hi := new(big.Int).Sub(new(big.Int).Mul(lo, ten), big.NewInt(1))
		for _, v := range []*big.Int{lo, hi, new(big.Int).Neg(lo), new(big.Int).Neg(hi)} {
			g := &Graph{}
			item := g.Add(BigIntNode(v))
			root := g.Add(List(g.Add(Int(1)), item))
			got, err := g.ReprChecked(root)
			if digits <= MaxIntStrDigits {
				if want := "[1, " + v.String() + "]"; err != nil || got != want {
					t.Fatalf("%d digits: ReprChecked = %.40q, %v", digits, got, err)
				}
				continue
			}
			var de *IntStrDigitsError
			if !errors.As(err, &de) || got != "" {
				t.Fatalf("%d digits: ReprChecked = %.40q, %v; want an *IntStrDigitsError", digits, got, err)
			}
			if err.Error() != cpythonDigitsMessage || de.PythonType() != "ValueError" || de.Bits != v.BitLen() {
				t.Fatalf("%d digits: error %q (%s, %d bits)", digits, err, de.PythonType(), de.Bits)
			}
			if _, err := g.StrChecked(item); !errors.As(err, &de) {
				t.Fatalf("%d digits: StrChecked error %v", digits, err)
			}
			want := "[1, <int of " + strconv.Itoa(v.BitLen()) + " bits: more than 4300 digits>]"
			if got := g.Repr(root); got != want {
				t.Fatalf("%d digits: Repr = %q, want %q", digits, got, want)
			}
		}
	}
}

// The bit-length shortcut must agree with counting the digits, in
// particular at the bit lengths where the digit count crosses the limit.
func TestCheckIntDigitsAgreesWithTheDigitCount(t *testing.T) {
	for bits := 14270; bits <= 14320; bits++ {
		one := big.NewInt(1)
		lo := new(big.Int).Lsh(one, uint(bits-1))
		hi := new(big.Int).Sub(new(big.Int).Lsh(one, uint(bits)), one)
		for _, v := range []*big.Int{lo, hi} {
			over := len(v.Text(10)) > MaxIntStrDigits
			if err := checkIntDigits(v); (err != nil) != over {
				t.Fatalf("%d bits, %d digits: checkIntDigits = %v", bits, len(v.Text(10)), err)
			}
		}
	}
}

// A billion-bit int fails at once: nothing is converted.
func TestReprOfAHugeIntDoesNotConvert(t *testing.T) {
	v := new(big.Int).Lsh(big.NewInt(3), 1<<27) // 16 MiB of magnitude
	g := &Graph{}
	root := g.Add(List(g.Add(BigIntNode(v))))
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := g.ReprChecked(root); err == nil {
			t.Fatal("no error")
		}
	})
	// A decimal conversion would allocate hundreds of times (and take
	// minutes); the check allocates the error and a few small buffers.
	if allocs > 10 {
		t.Fatalf("ReprChecked allocated %v times", allocs)
	}
}

// Shared sub-values (protocol 4 can send them) would print exponentially
// much text; the output is bounded by a linear function of the graph.
func TestReprOfSharedSubvaluesIsBounded(t *testing.T) {
	g := &Graph{}
	id := g.Add(Str(strings.Repeat("x", 100)))
	for range 64 {
		id = g.Add(List(id, id))
	}
	if _, err := g.ReprChecked(id); !errors.Is(err, ErrReprTooLarge) {
		t.Fatalf("ReprChecked error = %v, want ErrReprTooLarge", err)
	}
	if _, err := g.StrChecked(id); !errors.Is(err, ErrReprTooLarge) {
		t.Fatalf("StrChecked error = %v, want ErrReprTooLarge", err)
	}
	got := g.Repr(id)
	bound := reprFloor + int(reprBound(g)) + 4096
	if len(got) > bound || !strings.HasSuffix(got, "...") {
		t.Fatalf("Repr: %d bytes (bound %d), ends %q", len(got), bound, got[max(0, len(got)-10):])
	}
	// A tree-shaped value of the same kind is far from the bound.
	h := &Graph{}
	var items []NodeID
	for range 20_000 {
		items = append(items, h.Add(Str(strings.Repeat("\x00", 100))))
	}
	root := h.Add(List(items...))
	s, err := h.ReprChecked(root)
	if err != nil || len(s) != 20_000*(400+2)+2*(20_000-1)+2 {
		t.Fatalf("tree: %d bytes, %v", len(s), err)
	}
}

// A tree of large leaves is far from the bound too: the bound counts an
// int's digits (it once did not, and [10**3999 + i for i in range(1000)]
// was refused as too large).
func TestReprOfLargeLeavesIsNotRefused(t *testing.T) {
	g := &Graph{}
	base := new(big.Int).Exp(big.NewInt(10), big.NewInt(MaxIntStrDigits-1), nil)
	var items []NodeID
	for i := range 1000 {
		x := new(big.Int).Add(base, big.NewInt(int64(i)))
		if i%2 == 1 {
			x.Neg(x)
		}
		items = append(items, g.Add(BigIntNode(x)))
	}
	root := g.Add(List(items...))
	want := 1000*MaxIntStrDigits + 500 + 2*999 + 2
	for name, render := range map[string]func(NodeID) (string, error){"ReprChecked": g.ReprChecked, "StrChecked": g.StrChecked} {
		if s, err := render(root); err != nil || len(s) != want {
			t.Fatalf("%s: %d bytes, %v; want %d", name, len(s), err, want)
		}
	}
	if s := g.Repr(root); len(s) != want || strings.HasSuffix(s, "...") {
		t.Fatalf("Repr: %d bytes", len(s))
	}

	// Aware datetimes (about 114 bytes of repr each, more than the
	// constant a node used to count) and their extreme field values.
	off, name := int32(-3600*5), strings.Repeat("z", 10)
	maxOff := int32(-86399)
	for _, n := range []Node{
		DateTimeNode(DateTime{Year: 2024, Month: 1, Day: 2, Hour: 3, Minute: 4, Second: 5, Microsecond: 123456, Offset: &off}),
		DateTimeNode(DateTime{Year: math.MinInt32, Month: math.MaxUint32, Day: math.MaxUint32, Hour: math.MaxUint32, Minute: math.MaxUint32, Second: math.MaxUint32, Microsecond: math.MaxUint32, Offset: &maxOff, TZName: &name}),
		TimeNode(Time{Hour: math.MaxUint32, Minute: math.MaxUint32, Second: math.MaxUint32, Microsecond: math.MaxUint32, Offset: &maxOff, TZName: &name, Fold: 1}),
		TimeDeltaNode(TimeDelta{Days: math.MinInt32, Seconds: math.MinInt32, Microseconds: math.MinInt32}),
		TimeZoneNode(TimeZone{Offset: math.MinInt32, Name: &name}),
		DateNode(Date{Year: math.MinInt32, Month: math.MaxUint32, Day: math.MaxUint32}),
	} {
		g := &Graph{}
		items := make([]NodeID, 100_000)
		for i := range items {
			items[i] = g.Add(n)
		}
		root := g.Add(List(items...))
		one := g.Repr(items[0])
		if s, err := g.ReprChecked(root); err != nil || len(s) != len(items)*(len(one)+2) {
			t.Fatalf("%d × %s: %d bytes, %v", len(items), one, len(s), err)
		}
	}
}

// --- algorithmic complexity -------------------------------------------------

// A shape builds a value whose wire form takes about size bytes.
type shape struct {
	name  string
	build func(size int) (*Graph, NodeID)
	// dst is a fresh ToGo destination of the shape's natural Go type.
	dst func() any
	// floor, when set, replaces walkFloor as the shape's reference (a
	// hash map as large as the value's, for a dict).
	floor func(g *Graph, id NodeID)
}

// walkFloor is the reference every operation is measured against: one
// linear pass over the graph that reads every node and writes its text
// (and two bytes per reference) to a growing buffer, the memory traffic
// of a rendering. A tier that falls out of the CPU caches (the 10 MiB
// graphs do, the 1 MiB ones mostly do not) slows it as much as the
// operation, so the growth allowed is scaled by the floor's own growth:
// a linear operation then grows about as the floor does, a quadratic one
// ten times more.
func walkFloor(g *Graph, _ NodeID) {
	var buf []byte
	for i := range g.Nodes {
		n := &g.Nodes[i]
		buf = append(buf, n.Text()...)
		buf = append(buf, byte(n.Kind), byte(n.Num))
		for range n.Refs() {
			buf = append(buf, ',', ' ')
		}
		if b := n.Bytes(); b != nil {
			buf = append(buf, b...)
		}
	}
	sinkLen = len(buf)
}

var sinkLen int

func shapes() []shape {
	rng := rand.New(rand.NewPCG(1, 2))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	return []shape{
		{"bigint", func(size int) (*Graph, NodeID) {
			g := &Graph{}
			return g, g.Add(BigIntNode(new(big.Int).SetBytes(randBytes(size))))
		}, func() any { return new(*big.Int) }, nil},
		{"str", func(size int) (*Graph, NodeID) {
			// Mixed text: ASCII, escapes, multi-byte runes, invalid bytes.
			var b strings.Builder
			for b.Len() < size {
				b.WriteString("abc\n'\"é\x01\u2028😀\xff")
			}
			g := &Graph{}
			return g, g.Add(Str(b.String()))
		}, func() any { return new(string) }, nil},
		{"bytes", func(size int) (*Graph, NodeID) {
			g := &Graph{}
			return g, g.Add(Bytes(randBytes(size)))
		}, func() any { return new([]byte) }, nil},
		{"wide_list", func(size int) (*Graph, NodeID) {
			// An int item takes about 9 bytes on the wire.
			g := &Graph{}
			items := make([]NodeID, size/9)
			for i := range items {
				items[i] = g.Add(Int(int64(i) << 20))
			}
			return g, g.Add(List(items...))
		}, func() any { return new([]int64) }, nil},
		{"big_dict", func(size int) (*Graph, NodeID) {
			// An entry (str key, int value) takes about 24 bytes.
			g := &Graph{}
			n := size / 24
			refs := make([]NodeID, 0, 2*n)
			for i := range n {
				refs = append(refs, g.Add(Str("key"+strconv.Itoa(i))), g.Add(Int(int64(i))))
			}
			return g, g.Add(Node{Kind: KindDict}.WithRefs(refs))
		}, func() any { return new(map[string]int64) }, func(g *Graph, id NodeID) {
			refs := g.Nodes[id].Refs()
			m := make(map[string]any, len(refs)/2)
			for i := 0; i+1 < len(refs); i += 2 {
				m[g.Nodes[refs[i]].Text()] = int64(g.Nodes[refs[i+1]].Num)
			}
		}},
		{"deep_nesting", func(size int) (*Graph, NodeID) {
			// A level (a list holding the level below and an int) takes
			// about 16 bytes.
			g := &Graph{}
			id := g.Add(None())
			for i := range size / 16 {
				id = g.Add(List(id, g.Add(Int(int64(i)))))
			}
			return g, id
		}, func() any { return new(any) }, nil},
		{"instances", func(size int) (*Graph, NodeID) {
			// A dataclass instance with two attributes takes about 48 bytes.
			g := &Graph{}
			cls := g.Add(TypeNode(Type{Name: "Point", Origin: OriginSandbox, IsDataclass: true, ID: UUID{1}}))
			x, y := g.Add(Str("x")), g.Add(Str("y"))
			n := size / 48
			items := make([]NodeID, n)
			for i := range items {
				items[i] = g.Add(ClassInstanceNode(ClassInstance{Class: cls, InstanceID: UUID{byte(i), byte(i >> 8), byte(i >> 16), 1},
					Attrs: []Pair{{x, g.Add(Int(int64(i)))}, {y, g.Add(Float(float64(i)))}}}))
			}
			return g, g.Add(List(items...))
		}, func() any { return new(any) }, nil},
	}
}

// renderOps are the operations on decoded values whose cost must stay
// linear. Errors (an int past the digit limit, a nesting past
// MaxConvertDepth) are expected results, not failures.
func renderOps(sh shape) []struct {
	name string
	run  func(g *Graph, id NodeID)
} {
	return []struct {
		name string
		run  func(g *Graph, id NodeID)
	}{
		{"Repr", func(g *Graph, id NodeID) { _ = g.Repr(id) }},
		{"ReprChecked", func(g *Graph, id NodeID) { _, _ = g.ReprChecked(id) }},
		{"Str", func(g *Graph, id NodeID) { _ = g.Str(id) }},
		{"ToAny", func(g *Graph, id NodeID) { _, _ = ToAny(g, id) }},
		{"ToGo", func(g *Graph, id NodeID) { _ = ToGo(g, id, sh.dst()) }},
		{"ToGoFloat", func(g *Graph, id NodeID) { var f float64; _ = ToGo(g, id, &f) }},
	}
}

// minTime is the fastest of runs runs of f: the least disturbed by other
// work on a loaded machine. Each run starts after a collection, so that
// one run does not pay for the garbage of the one before.
func minTime(runs int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for range runs {
		runtime.GC()
		start := time.Now()
		f()
		best = min(best, time.Since(start))
	}
	return best
}

// allocated measures what f allocates: bytes and objects. Unlike time, it
// does not depend on the machine's load or caches, so its growth is
// checked tightly.
func allocated(f func()) (bytes, objects uint64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// TestRenderWorkGrowsLinearly is the algorithmic-complexity set: every
// shape at 1 and 10 MiB (an eighth of that under the race detector),
// every operation, the work growing at most about linearly with the size.
// The 100 MiB tier is BenchmarkRenderShapes (it takes seconds per
// operation and a gigabyte of memory, too much for every CI run on a
// shared machine).
//
// Work is checked two ways. Allocation (bytes and objects) is
// deterministic: tenfold the size must allocate at most 25 times as much
// (linear is 10, with up to twice that from where slices' doublings
// land; quadratic is 100). Time is noisy on a shared machine and grows
// more than tenfold when the larger value falls out of the CPU caches (a
// hash map of 400k entries does; one of 40k does not), so it is
// normalized by a floor measured in the same run (walkFloor, or the
// shape's own) and checked with a generous bound that only runaway work
// fails.
func TestRenderWorkGrowsLinearly(t *testing.T) {
	const mib = 1 << 20
	for _, sh := range shapes() {
		t.Run(sh.name, func(t *testing.T) {
			base := mib
			if raceEnabled {
				// The race detector slows this tenfold; the growth check
				// still takes a tenfold step, from a smaller base (the
				// full sizes run in make unit-norace).
				base = mib / 8
			}
			sizes := []int{base, 10 * base}
			type built struct {
				g  *Graph
				id NodeID
			}
			var gs []built
			for _, size := range sizes {
				g, id := sh.build(size)
				gs = append(gs, built{g, id})
			}
			floor := sh.floor
			if floor == nil {
				floor = walkFloor
			}
			// Under the race detector time says little: one run each, no
			// time check (make unit-norace runs it at full size).
			runs := 3
			if raceEnabled {
				runs = 1
			}
			var ft []time.Duration
			for _, b := range gs {
				ft = append(ft, minTime(runs, func() { floor(b.g, b.id) }))
			}
			// How much more than tenfold the floor itself grew.
			cacheFactor := max(1, float64(ft[1])/float64(max(ft[0], time.Microsecond))/10)
			t.Logf("floor: %v", ft)
			for _, op := range renderOps(sh) {
				var times []time.Duration
				var bytes, objects []uint64
				for _, b := range gs {
					times = append(times, minTime(runs, func() { op.run(b.g, b.id) }))
					by, ob := allocated(func() { op.run(b.g, b.id) })
					bytes, objects = append(bytes, by), append(objects, ob)
				}
				t.Logf("%s: %v, %v B, %v objects", op.name, times, bytes, objects)
				if bytes[1] > 25*bytes[0]+64<<10 || objects[1] > 25*objects[0]+64 {
					t.Errorf("%s: %d KiB allocated %d B in %d objects, %d KiB %d B in %d objects: worse than linear",
						op.name, sizes[0]>>10, bytes[0], objects[0], sizes[1]>>10, bytes[1], objects[1])
				}
				if norm := time.Duration(float64(times[1]) / cacheFactor); !raceEnabled && norm > 100*times[0]+50*time.Millisecond {
					t.Errorf("%s: %d KiB took %v, %d KiB took %v (%v normalized by the floor): worse than linear",
						op.name, sizes[0]>>10, times[0], sizes[1]>>10, times[1], norm)
				}
			}
		})
	}
}

// BenchmarkRenderShapes measures every operation on every shape at 1, 10
// and 100 MiB: ns/op should grow tenfold per tier. copy/N is the floor: a
// copy of N bytes, in the same run.
func BenchmarkRenderShapes(b *testing.B) {
	for _, size := range []int{1 << 20, 10 << 20, 100 << 20} {
		src, dst := make([]byte, size), make([]byte, size)
		b.Run(fmt.Sprintf("copy/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				copy(dst, src)
			}
		})
	}
	for _, sh := range shapes() {
		for _, size := range []int{1 << 20, 10 << 20, 100 << 20} {
			g, id := sh.build(size)
			for _, op := range renderOps(sh) {
				b.Run(fmt.Sprintf("%s/%dMiB/%s", sh.name, size>>20, op.name), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						op.run(g, id)
					}
				})
			}
		}
	}
}

// Every leaf's repr, at its extremes, is within its share of the bound.
func TestReprBoundCoversEveryLeaf(t *testing.T) {
	long := strings.Repeat("\x00", 50)
	off := int32(math.MinInt32)
	name := long
	cases := []Node{
		ExceptionNode(Exception{Type: long, Arg: &long}),
		ExceptionNode(Exception{Type: "KeyError", Arg: &long}),
		FunctionNode(Function{Name: long}),
		FileHandleNode(FileHandle{Path: long, Mode: "r", Position: math.MaxUint64}),
		FileHandleNode(FileHandle{Path: long, Mode: "wb"}),
		TypeNode(Type{Name: long}),
		BuiltinType(long),
		BuiltinFunction(long),
		Path(long), Repr(long), Cycle(long),
		Bytes([]byte(long)),
		Str(long),
		TimeNode(Time{Offset: &off, TZName: &name, Fold: 1, Hour: math.MaxUint32}),
		DateTimeNode(DateTime{Year: math.MinInt32, Offset: &off, TZName: &name, Month: math.MaxUint32}),
		TimeZoneNode(TimeZone{Offset: off, Name: &name}),
		TimeNode(Time{Offset: &off, Fold: 1, Hour: math.MaxUint32, Minute: math.MaxUint32, Second: math.MaxUint32, Microsecond: math.MaxUint32}),
		DateTimeNode(DateTime{Year: math.MinInt32, Month: math.MaxUint32, Day: math.MaxUint32, Hour: math.MaxUint32, Minute: math.MaxUint32, Second: math.MaxUint32, Microsecond: math.MaxUint32, Offset: &off}),
		DateNode(Date{Year: math.MinInt32, Month: math.MaxUint32, Day: math.MaxUint32}),
		TimeDeltaNode(TimeDelta{Days: math.MinInt32, Seconds: math.MinInt32, Microseconds: math.MinInt32}),
		TimeZoneNode(TimeZone{Offset: off}),
		Float(-math.SmallestNonzeroFloat64), Int(math.MinInt64),
		NamedTupleNode(long, []string{long, long}),
		Ellipsis(), NotImplemented(),
	}
	for _, n := range cases {
		g := &Graph{}
		id := g.Add(n)
		r := g.Repr(id)
		if int64(len(r)) > reprBound(g) {
			t.Errorf("%v: repr %d bytes > bound %d: %.80q", n.Kind, len(r), reprBound(g), r)
		}
	}
}

// TestFromGoNodeLimit: a slice or array of zero-size items costs Go no
// memory whatever its length, but FromGo makes a node of each item; one
// that would make more than MaxConvertNodes nodes is refused with a typed
// error before anything is allocated for it (it ran out of memory, after
// counting 2**40 items).
func TestFromGoNodeLimit(t *testing.T) {
	type holder struct{ Items []struct{} }
	bools := make([]bool, 1<<10)
	cases := map[string]any{
		"slice":           make([]struct{}, 1<<40),
		"just over":       make([]struct{}, 1<<26),
		"field":           holder{Items: make([]struct{}, 1<<40)},
		"in any":          []any{1, make([]struct{}, 1<<40)},
		"tuple of empty":  TupleValue{make([][0]int, 1<<40)},
		"nested, lowered": &[8][1 << 10]struct{}{},
		"scalars":         bools,
		"string map":      map[string]bool{"a": true, "b": false},
	}
	lowered := map[string]int{"nested, lowered": 4 << 10, "scalars": 1 << 10, "string map": 4}
	for name, v := range cases {
		if n, ok := lowered[name]; ok {
			maxConvertNodes = n
		}
		g := Graph{Nodes: []Node{None()}}
		_, err := FromGo(&g, v)
		var ce *ConversionError
		if !errors.As(err, &ce) || !ce.FromGo {
			t.Errorf("%s: err = %v (%T), want a *ConversionError", name, err, err)
		}
		if !errors.Is(err, ErrTooManyNodes) {
			t.Errorf("%s: err = %v, want ErrTooManyNodes", name, err)
		}
		if len(g.Nodes) != 1 {
			t.Errorf("%s: the graph was left with %d nodes", name, len(g.Nodes))
		}
		maxConvertNodes = MaxConvertNodes
	}
	// Below it, zero-size items convert as before: an empty dict each.
	var g Graph
	id, err := FromGo(&g, make([]struct{}, 1000))
	if err != nil || len(g.Nodes) != 1001 || g.Nodes[id].Kind != KindList {
		t.Fatalf("1000 empty structs: %v, %d nodes", err, len(g.Nodes))
	}
}
