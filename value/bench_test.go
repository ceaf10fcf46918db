package value

import (
	"encoding/json"
	"testing"
)

// Conversion benchmarks, each paired with encoding/json on the same data
// in the same run (the json sub-benchmark parses or prints text, the value
// one converts a graph): see docs/PERFORMANCE.md.

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

func BenchmarkToGoInts1M(b *testing.B) {
	xs := ints1M()
	var g Graph
	root, err := FromGo(&g, xs)
	if err != nil {
		b.Fatal(err)
	}
	text, _ := json.Marshal(xs)
	b.Run("value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out []int64
			if err := ToGo(&g, root, &out); err != nil || len(out) != len(xs) {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out []int64
			if err := json.Unmarshal(text, &out); err != nil || len(out) != len(xs) {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFromGoInts1M(b *testing.B) {
	xs := ints1M()
	b.Run("value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var g Graph
			if _, err := FromGo(&g, xs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(xs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkToGoStructs100k(b *testing.B) {
	xs := structs100k()
	var g Graph
	root, err := FromGo(&g, xs)
	if err != nil {
		b.Fatal(err)
	}
	text, _ := json.Marshal(xs)
	b.Run("value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out []benchStruct
			if err := ToGo(&g, root, &out); err != nil || len(out) != len(xs) {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var out []benchStruct
			if err := json.Unmarshal(text, &out); err != nil || len(out) != len(xs) {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkFromGoStructs100k(b *testing.B) {
	xs := structs100k()
	b.Run("value", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var g Graph
			if _, err := FromGo(&g, xs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(xs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkReprInts1M(b *testing.B) {
	var g Graph
	root, err := FromGo(&g, ints1M())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.Repr(root)
	}
}
