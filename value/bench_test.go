//go:build unix

package value

import (
	"encoding/json"
	"slices"
	"syscall"
	"testing"
	"time"
)

// Conversion benchmarks, each paired with encoding/json on the same data
// in the same run (the json sub-benchmark parses or prints text, the value
// one converts a graph): see docs/PERFORMANCE.md.

// pair runs value and ref (the encoding/json conversion of the same data)
// back to back in every op, alternating which goes first, so that both see
// the same load on a shared machine. It reports each one's wall time per
// op, the ratio of the totals (ratio), the median of the per-op ratios
// (p50-ratio), and the same two for the process's CPU time (user + system
// of all threads, so garbage collection is counted; steadier than wall
// time on a loaded machine): cpu-ratio and p50-cpu-ratio.
func pair(b *testing.B, value, ref func()) {
	var tv, tr, cv, cr time.Duration
	var ratios, cpuRatios []float64
	odd := false
	timed := func(f func()) (wall, cpu time.Duration) {
		t0, c0 := time.Now(), processCPU()
		f()
		return time.Since(t0), processCPU() - c0
	}
	for b.Loop() {
		var dv, dr, dcv, dcr time.Duration
		if odd {
			dr, dcr = timed(ref)
			dv, dcv = timed(value)
		} else {
			dv, dcv = timed(value)
			dr, dcr = timed(ref)
		}
		odd = !odd
		tv, tr, cv, cr = tv+dv, tr+dr, cv+dcv, cr+dcr
		ratios = append(ratios, float64(dv)/float64(dr))
		if dcr > 0 {
			cpuRatios = append(cpuRatios, float64(dcv)/float64(dcr))
		}
	}
	median := func(xs []float64) float64 {
		if len(xs) == 0 {
			return 0
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	b.ReportMetric(float64(tv.Nanoseconds())/float64(b.N), "value-ns/op")
	b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N), "json-ns/op")
	b.ReportMetric(float64(tv)/float64(tr), "ratio")
	b.ReportMetric(median(ratios), "p50-ratio")
	if cr > 0 {
		b.ReportMetric(float64(cv)/float64(cr), "cpu-ratio")
	}
	b.ReportMetric(median(cpuRatios), "p50-cpu-ratio")
}

// processCPU returns the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ints1M() []int64 {
	xs := make([]int64, 1_000_000)
	for i := range xs {
		xs[i] = int64(i)
	}
	return xs
}

type benchStruct struct {
	A int
	B string
	C []float64
}

func structs100k() []benchStruct {
	xs := make([]benchStruct, 100_000)
	for i := range xs {
		xs[i] = benchStruct{A: i, B: "name", C: []float64{1.5, 2.5, float64(i)}}
	}
	return xs
}

// resultGraph returns the graph of v as a codec decodes it: FromGo's, with
// any packed items (Node.Ints) unpacked, since a decoded result never
// holds packed items.
func resultGraph(b *testing.B, v any) (*Graph, NodeID) {
	var g Graph
	root, err := FromGo(&g, v)
	if err != nil {
		b.Fatal(err)
	}
	return g.Unpacked(root)
}

func BenchmarkToGoInts1M(b *testing.B) {
	xs := ints1M()
	gp, root := resultGraph(b, xs)
	g := *gp
	// The packed graph FromGo makes, read back (ToGo unpacks it first).
	b.Run("packed", func(b *testing.B) {
		var pg Graph
		proot, err := FromGo(&pg, xs)
		if err != nil || !pg.HasPacked() {
			b.Fatal(err, pg.HasPacked())
		}
		b.ReportAllocs()
		for b.Loop() {
			var out []int64
			if err := ToGo(&pg, proot, &out); err != nil || len(out) != len(xs) {
				b.Fatal(err)
			}
		}
	})
	text, _ := json.Marshal(xs)
	versus(b, toGoOp[int64](&g, root, len(xs)), unmarshalOp[int64](text, len(xs)))
}

func BenchmarkFromGoInts1M(b *testing.B) {
	xs := ints1M()
	versus(b, fromGoOp(xs), marshalOp(xs))
}

// BenchmarkFromGoFloats1M is BenchmarkFromGoInts1M for a []float64, held
// packed as floats.
func BenchmarkFromGoFloats1M(b *testing.B) {
	xs := make([]float64, 1_000_000)
	for i := range xs {
		xs[i] = float64(i) * 1.25
	}
	b.Run("pair", func(b *testing.B) { pairOps(b, fromGoOp(xs), marshalOp(xs)) })
}

// benchOp is one operation of a benchmark, failing b if it goes wrong.
type benchOp func(b *testing.B)

// toGoOp is ToGo of root into a fresh []T, which must come out with n
// items.
func toGoOp[T any](g *Graph, root NodeID, n int) benchOp {
	return func(b *testing.B) {
		var out []T
		if err := ToGo(g, root, &out); err != nil || len(out) != n {
			b.Fatal(err)
		}
	}
}

// unmarshalOp is toGoOp's reference: json.Unmarshal of text into a fresh
// []T, which must come out with n items.
func unmarshalOp[T any](text []byte, n int) benchOp {
	return func(b *testing.B) {
		var out []T
		if err := json.Unmarshal(text, &out); err != nil || len(out) != n {
			b.Fatal(err)
		}
	}
}

// fromGoOp is FromGo of xs into a fresh graph.
func fromGoOp(xs any) benchOp {
	return func(b *testing.B) {
		var g Graph
		if _, err := FromGo(&g, xs); err != nil {
			b.Fatal(err)
		}
	}
}

// marshalOp is fromGoOp's reference: json.Marshal of xs.
func marshalOp(xs any) benchOp {
	return func(b *testing.B) {
		if _, err := json.Marshal(xs); err != nil {
			b.Fatal(err)
		}
	}
}

// pairOps runs value and ref as a pair (pair), in b.
func pairOps(b *testing.B, value, ref benchOp) {
	pair(b, func() { value(b) }, func() { ref(b) })
}

var floorNodes []Node
var floorRefs []NodeID

// BenchmarkFromGoInts1MFloor pairs json.Marshal with only the allocation a
// graph of 1M ints needs (the node array and the list's ids, zeroed by
// the runtime): what FromGo of a []int64 cannot go below in the graph
// model.
func BenchmarkFromGoInts1MFloor(b *testing.B) {
	xs := ints1M()
	pair(b, func() {
		floorNodes = make([]Node, len(xs)+1)
		floorRefs = make([]NodeID, len(xs))
	}, func() {
		if _, err := json.Marshal(xs); err != nil {
			b.Fatal(err)
		}
	})
	floorNodes, floorRefs = nil, nil
}

func BenchmarkToGoStructs100k(b *testing.B) {
	xs := structs100k()
	var g Graph
	root, err := FromGo(&g, xs)
	if err != nil {
		b.Fatal(err)
	}
	text, _ := json.Marshal(xs)
	versus(b, toGoOp[benchStruct](&g, root, len(xs)), unmarshalOp[benchStruct](text, len(xs)))
}

func BenchmarkFromGoStructs100k(b *testing.B) {
	xs := structs100k()
	versus(b, fromGoOp(xs), marshalOp(xs))
}

func BenchmarkReprInts1M(b *testing.B) {
	g, root := resultGraph(b, ints1M())
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Repr(root)
	}
}

// BenchmarkReprFloats1M renders a million floats of everyday sizes
// (prices, ratios, measurements: 1e-3 to 1e6) and a tail of tiny and huge
// ones, as a result list of floats.
func BenchmarkReprFloats1M(b *testing.B) {
	xs := make([]float64, 1_000_000)
	for i := range xs {
		xs[i] = float64(i%100_000)*1.37 + 0.001
		if i%100 == 0 {
			xs[i] = float64(i) * 1e17
		}
	}
	g, root := resultGraph(b, xs)
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Repr(root)
	}
}

func BenchmarkStrInts1M(b *testing.B) {
	g, root := resultGraph(b, ints1M())
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Str(root)
	}
}

// namedOp is a benchmark operation and the name of its sub-benchmark.
type namedOp struct {
	name string
	op   benchOp
}

// versus runs value and ref (encoding/json on the same data) each alone,
// as "value" and "json", then each of others (the routes a caller had
// without value's own function), then value and ref as a pair ("pair").
func versus(b *testing.B, value, ref benchOp, others ...namedOp) {
	for _, sub := range append([]namedOp{{"value", value}, {"json", ref}}, others...) {
		b.Run(sub.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sub.op(b)
			}
		})
	}
	b.Run("pair", func(b *testing.B) { pairOps(b, value, ref) })
}

// BenchmarkJSONStructs100k writes a decoded result (100,000 dicts, as a
// worker sends a list of records) as JSON text: AppendJSON straight from
// the graph, against encoding/json printing the same records from their
// Go structs (its fastest case: no interfaces, no maps), and against the
// route without AppendJSON (ToAny, then encoding/json).
func BenchmarkJSONStructs100k(b *testing.B) {
	xs := structs100k()
	g, root := resultGraph(b, xs)
	versus(b, func(b *testing.B) {
		if out, err := AppendJSON(nil, g, root); err != nil || len(out) < 100_000 {
			b.Fatal(err)
		}
	}, func(b *testing.B) {
		if out, err := json.Marshal(xs); err != nil || len(out) < 100_000 {
			b.Fatal(err)
		}
	}, namedOp{"toany+json", func(b *testing.B) {
		a, err := ToAny(g, root)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(a); err != nil {
			b.Fatal(err)
		}
	}})
}

// BenchmarkFromJSONStructs100k reads JSON text of 100,000 records into a
// graph (what a host does with a JSON request body it passes to the
// sandbox): FromJSON, against encoding/json reading the same text into Go
// structs (its fastest case), and against the route without FromJSON
// (encoding/json into any, then FromGo).
func BenchmarkFromJSONStructs100k(b *testing.B) {
	text, _ := json.Marshal(structs100k())
	versus(b, func(b *testing.B) {
		var g Graph
		if _, err := FromJSON(&g, text); err != nil {
			b.Fatal(err)
		}
	}, func(b *testing.B) {
		var out []benchStruct
		if err := json.Unmarshal(text, &out); err != nil {
			b.Fatal(err)
		}
	}, namedOp{"json-any+fromgo", func(b *testing.B) {
		var a any
		if err := json.Unmarshal(text, &a); err != nil {
			b.Fatal(err)
		}
		var g Graph
		if _, err := FromGo(&g, a); err != nil {
			b.Fatal(err)
		}
	}})
}
