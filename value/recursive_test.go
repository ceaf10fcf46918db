package value_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/gomonty/monty/value"
)

// Types that hold themselves, through a slice, a map, a pointer, an array
// or another struct: building their conversion plans once recursed
// forever (a fatal stack overflow, not a panic) for a slice of the type
// itself.
type (
	recTree struct {
		Name string
		Kids []recTree
	}
	recList struct {
		V    int
		Next *recList
	}
	recA struct {
		B recB
		N int
	}
	recB struct {
		As []recA
		M  map[string]recA
	}
	recMap struct {
		Sub map[string]recMap
		Tag string
	}
	recArr struct {
		X [2][]recArr
		F float64
	}
)

func TestRecursiveTypesConvert(t *testing.T) {
	cases := []struct {
		name string
		v    any
		repr string
	}{
		{"slice of itself", recTree{Name: "a", Kids: []recTree{{Name: "b"}, {Name: "c", Kids: []recTree{{Name: "d"}}}}},
			"{'Name': 'a', 'Kids': [{'Name': 'b', 'Kids': []}, {'Name': 'c', 'Kids': [{'Name': 'd', 'Kids': []}]}]}"},
		{"pointer to itself", recList{V: 1, Next: &recList{V: 2}}, "{'V': 1, 'Next': {'V': 2, 'Next': None}}"},
		{"through another struct", recA{B: recB{As: []recA{{N: 2}}, M: map[string]recA{"k": {N: 3}}}, N: 1},
			"{'B': {'As': [{'B': {'As': [], 'M': {}}, 'N': 2}], 'M': {'k': {'B': {'As': [], 'M': {}}, 'N': 3}}}, 'N': 1}"},
		{"map of itself", recMap{Sub: map[string]recMap{"x": {Tag: "y"}}, Tag: "z"}, "{'Sub': {'x': {'Sub': {}, 'Tag': 'y'}}, 'Tag': 'z'}"},
		{"array of slices of itself", recArr{X: [2][]recArr{{{F: 1}}, nil}, F: 2},
			"{'X': [[{'X': [[], []], 'F': 1.0}], []], 'F': 2.0}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var g value.Graph
			id, err := value.FromGo(&g, c.v)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Repr(id); got != c.repr {
				t.Fatalf("FromGo gave %s, want %s", got, c.repr)
			}
			back := reflect.New(reflect.TypeOf(c.v))
			if err := value.ToGo(&g, id, back.Interface()); err != nil {
				t.Fatal(err)
			}
			// The graph has no nil slices or maps: compare through it.
			var g2 value.Graph
			id2, err := value.FromGo(&g2, back.Elem().Interface())
			if err != nil {
				t.Fatal(err)
			}
			if got := g2.Repr(id2); got != c.repr {
				t.Fatalf("ToGo then FromGo gave %s, want %s", got, c.repr)
			}
		})
	}
}

// A dict key that decodes to a Go value no map can hold (a frozenset is a
// FrozenSetValue, a slice; a tuple item of an [N]any key is a TupleValue)
// is a *ConversionError at "[key]" for a key type that holds an
// interface, not a runtime panic. (A tuple key into map[any] is an [N]any:
// TestAnyKeysComeBack.)
func TestUnhashableDictKeys(t *testing.T) {
	var g value.Graph
	one, two := g.Add(value.Int(1)), g.Add(value.Int(2))
	tup := g.Add(value.Tuple(one, two))
	fz := g.Add(value.FrozenSet(one))
	lst := g.Add(value.List(one))                                                     // only a hostile worker sends one as a key
	inArray := g.Add(value.List(tup))                                                 // into [1]any: [1]any{TupleValue{…}}
	inStruct := g.Add(value.Dict(value.Pair{Key: g.Add(value.Str("K")), Value: tup})) // into struct{ K any }
	keys := []struct {
		key value.NodeID
		dst any
	}{
		{fz, new(map[any]int)}, {lst, new(map[any]int)},
		{inArray, new(map[[1]any]int)}, {inStruct, new(map[struct{ K any }]int)},
	}
	for _, k := range keys {
		d := g.Add(value.Dict(value.Pair{Key: k.key, Value: two}))
		err := value.ToGo(&g, d, k.dst)
		var ce *value.ConversionError
		if !errors.As(err, &ce) || ce.Path != "[key]" || !strings.Contains(ce.Reason, "no Go map can use as a key") {
			t.Fatalf("%s into %T: %v, want a *ConversionError at [key]", g.Repr(k.key), k.dst, err)
		}
		var dv value.DictValue
		if err := value.ToGo(&g, d, &dv); err != nil || len(dv) != 1 {
			t.Fatalf("%s into DictValue: %v, %v", g.Repr(k.key), dv, err)
		}
	}
	// A hashable key into an interface key type still works.
	d := g.Add(value.Dict(value.Pair{Key: one, Value: two}, value.Pair{Key: g.Add(value.Str("s")), Value: one}))
	var m map[any]int
	if err := value.ToGo(&g, d, &m); err != nil || m[int64(1)] != 2 || m["s"] != 1 {
		t.Fatalf("map[any]int: %v, %v", m, err)
	}
}

type (
	dagTree []dagTree
	dagNode struct {
		Kids []dagNode
	}
	dagRow struct {
		L []int64
	}
	dagPtr struct {
		Kids []*dagPtr
	}
)

// A value whose parts are shared (x = [x, x], forty times over: 41 nodes,
// 2**40 leaves when expanded) converts into typed destinations in time
// linear in the graph: a node met a second time is converted again and
// remembered, and every later reference gets that conversion (the same
// slice). Before, each reference was converted again and this ran for
// ever.
func TestSharedValuesConvertOnce(t *testing.T) {
	var g value.Graph
	lst := g.Add(value.List())
	dict := g.Add(value.Dict(value.Pair{Key: g.Add(value.Str("Kids")), Value: g.Add(value.List())}))
	for range 40 {
		lst = g.Add(value.List(lst, lst))
		kids := g.Add(value.List(dict, dict))
		dict = g.Add(value.Dict(value.Pair{Key: g.Add(value.Str("Kids")), Value: kids}))
	}
	var tr dagTree
	if err := value.ToGo(&g, lst, &tr); err != nil {
		t.Fatal(err)
	}
	// tr[1] is the second conversion of its node: its two references,
	// all the way down, are the remembered ones.
	for d, x := 1, tr[1]; d < 40; d, x = d+1, x[1] {
		if len(x) != 2 || unsafe.SliceData(x[0]) != unsafe.SliceData(x[1]) {
			t.Fatalf("depth %d: the two references to one node are %d distinct slices", d, len(x))
		}
	}
	var dn dagNode
	if err := value.ToGo(&g, dict, &dn); err != nil {
		t.Fatal(err)
	}
	for d, x := 1, dn.Kids[1]; d < 40; d, x = d+1, x.Kids[1] {
		if len(x.Kids) != 2 || unsafe.SliceData(x.Kids[0].Kids) != unsafe.SliceData(x.Kids[1].Kids) {
			t.Fatalf("depth %d: the two references to one dict hold distinct slices", d)
		}
	}

	var dp *dagPtr
	if err := value.ToGo(&g, dict, &dp); err != nil {
		t.Fatal(err)
	}
	for d, x := 1, dp.Kids[1]; d < 40; d, x = d+1, x.Kids[1] {
		if len(x.Kids) != 2 || x.Kids[0] != x.Kids[1] {
			t.Fatalf("depth %d: the two references to one dict are distinct pointers", d)
		}
	}

	// One list of 1,000 ints, held by 1,000 rows (a struct field, which
	// takes the plan's fast path) and 1,000 times by one list.
	var h value.Graph
	ints := make([]value.NodeID, 1000)
	for i := range ints {
		ints[i] = h.Add(value.Int(int64(i)))
	}
	shared := h.Add(value.List(ints...))
	key := h.Add(value.Str("L"))
	rows := make([]value.NodeID, 1000)
	for i := range rows {
		rows[i] = h.Add(value.Dict(value.Pair{Key: key, Value: shared}))
	}
	table := h.Add(value.List(rows...))
	same := make([]value.NodeID, 1000)
	for i := range same {
		same[i] = shared
	}
	grid := h.Add(value.List(same...))
	var rs []dagRow
	if err := value.ToGo(&h, table, &rs); err != nil {
		t.Fatal(err)
	}
	var gr [][]int64
	if err := value.ToGo(&h, grid, &gr); err != nil {
		t.Fatal(err)
	}
	backing := map[*int64]bool{}
	for _, r := range rs {
		if len(r.L) != 1000 || r.L[999] != 999 {
			t.Fatalf("row: %d items", len(r.L))
		}
		backing[unsafe.SliceData(r.L)] = true
	}
	if len(backing) != 2 { // the first conversion, then the remembered one
		t.Errorf("1,000 rows sharing one list hold %d distinct slices", len(backing))
	}
	clear(backing)
	for _, r := range gr {
		backing[unsafe.SliceData(r)] = true
	}
	if len(backing) != 2 || gr[500][7] != 7 {
		t.Errorf("a list held 1,000 times by another converts to %d distinct slices", len(backing))
	}
}

// A shared dict decoded into destinations that already hold values (a
// struct of defaults, an array of them, a non-nil pointer) is decoded into
// each one, as into the first two: before, from the third reference on a
// destination got a copy of the second's conversion, the second
// destination's other fields with it, and a non-nil pointer was replaced
// by the second's instead of decoded through.
func TestSharedIntoFilledDestinations(t *testing.T) {
	type conf struct{ A, B int }
	var g value.Graph
	x := g.Add(value.Dict(value.Pair{Key: g.Add(value.Str("A")), Value: g.Add(value.Int(1))}))
	list := g.Add(value.List(x, x, x, x))
	k := func(s string) value.NodeID { return g.Add(value.Str(s)) }
	dict := g.Add(value.Dict(value.Pair{Key: k("P"), Value: x}, value.Pair{Key: k("Q"), Value: x},
		value.Pair{Key: k("R"), Value: x}, value.Pair{Key: k("S"), Value: x}))

	arr := [4]conf{{B: 10}, {B: 20}, {B: 30}, {B: 40}}
	if err := value.ToGo(&g, list, &arr); err != nil {
		t.Fatal(err)
	}
	if want := [4]conf{{1, 10}, {1, 20}, {1, 30}, {1, 40}}; arr != want {
		t.Errorf("array of defaults: %v, want %v", arr, want)
	}

	sections := struct{ P, Q, R, S conf }{conf{B: 10}, conf{B: 20}, conf{B: 30}, conf{}}
	if err := value.ToGo(&g, dict, &sections); err != nil {
		t.Fatal(err)
	}
	if sections.R != (conf{1, 30}) || sections.S != (conf{1, 0}) {
		t.Errorf("struct of defaults: %+v, want R {1 30} and S {1 0}", sections)
	}

	r, s := &conf{B: 30}, &conf{B: 40}
	ptrs := struct{ P, Q, R, S *conf }{nil, nil, r, s}
	if err := value.ToGo(&g, dict, &ptrs); err != nil {
		t.Fatal(err)
	}
	if ptrs.R != r || ptrs.S != s || *r != (conf{1, 30}) || *s != (conf{1, 40}) {
		t.Errorf("non-nil pointers: R %p %+v, S %p %+v; want %p {1 30}, %p {1 40}", ptrs.R, *ptrs.R, ptrs.S, *ptrs.S, r, s)
	}
	if ptrs.P == nil || ptrs.P == ptrs.Q || *ptrs.Q != (conf{A: 1}) {
		t.Errorf("nil pointers: P %p, Q %p %+v", ptrs.P, ptrs.Q, ptrs.Q)
	}
}
