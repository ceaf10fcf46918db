package value

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// Property tests: over randomly generated Go types and values (built with
// reflection), the fast paths of FromGo and ToGo agree with the general
// path (the same conversion with the fast paths switched off), results and
// errors alike.

type (
	propInt    int64
	propStr    string
	propUint16 uint16
	propInt8   int8
	propUint32 uint32
	propF32    float32
	propBool   bool
)

var propScalars = []reflect.Type{
	reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](),
	reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uint8](),
	reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](), reflect.TypeFor[uintptr](),
	reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[string](),
	reflect.TypeFor[propInt](), reflect.TypeFor[propStr](), reflect.TypeFor[propUint16](),
	reflect.TypeFor[propInt8](), reflect.TypeFor[propUint32](), reflect.TypeFor[propF32](),
	reflect.TypeFor[propBool](), reflect.TypeFor[jsonInt](),
}

type propGen struct{ r *rand.Rand }

// typ returns a random type nesting at most depth levels.
func (p propGen) typ(depth int) reflect.Type {
	if depth <= 0 || p.r.IntN(3) == 0 {
		return propScalars[p.r.IntN(len(propScalars))]
	}
	switch p.r.IntN(7) {
	case 0, 1:
		return reflect.SliceOf(p.typ(depth - 1))
	case 2:
		return reflect.ArrayOf(p.r.IntN(4), p.typ(depth-1))
	case 3:
		if p.r.IntN(2) == 0 {
			return reflect.MapOf(reflect.TypeFor[string](), p.typ(depth-1))
		}
		return reflect.MapOf(reflect.TypeFor[int](), p.typ(depth-1))
	case 4:
		return p.structType(depth)
	case 5:
		return reflect.PointerTo(p.typ(depth - 1))
	}
	return reflect.TypeFor[any]()
}

// structType returns a random struct type: fields of any type, and often
// the shapes the struct plans take (plain scalars and slices of them),
// some tagged (renamed, omitempty, omitzero), some promoted from an
// embedded struct.
func (p propGen) structType(depth int) reflect.Type {
	n := 1 + p.r.IntN(5)
	fs := make([]reflect.StructField, 0, n+1)
	for i := range n {
		var ft reflect.Type
		switch p.r.IntN(3) {
		case 0:
			ft = p.typ(depth - 1)
		case 1:
			ft = propScalars[p.r.IntN(len(propScalars))]
		default:
			ft = reflect.SliceOf(propScalars[p.r.IntN(len(propScalars))])
		}
		f := reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: ft}
		switch p.r.IntN(6) {
		case 0:
			// Another field's name in lower case (at times): two names
			// that only differ in case.
			f.Tag = reflect.StructTag(fmt.Sprintf(`monty:"f%d"`, p.r.IntN(n)))
		case 1:
			f.Tag = `monty:",omitempty"`
		case 2:
			f.Tag = `monty:",omitzero"`
		}
		fs = append(fs, f)
	}
	if depth > 0 && p.r.IntN(4) == 0 {
		// An embedded struct: its fields are promoted (not direct).
		inner := reflect.StructOf([]reflect.StructField{
			{Name: "P0", Type: propScalars[p.r.IntN(len(propScalars))]},
			{Name: "P1", Type: reflect.SliceOf(propScalars[p.r.IntN(len(propScalars))])},
		})
		if p.r.IntN(2) == 0 {
			inner = reflect.PointerTo(inner)
		}
		fs = append(fs, reflect.StructField{Name: "Emb", Type: inner, Anonymous: true})
	}
	return reflect.StructOf(fs)
}

// mutate returns t with some scalar types replaced by others (a
// destination the graph may or may not fit).
func (p propGen) mutate(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Slice:
		return reflect.SliceOf(p.mutate(t.Elem()))
	case reflect.Array:
		n := t.Len()
		if p.r.IntN(4) == 0 {
			n = p.r.IntN(4)
		}
		return reflect.ArrayOf(n, p.mutate(t.Elem()))
	case reflect.Map:
		return reflect.MapOf(t.Key(), p.mutate(t.Elem()))
	case reflect.Pointer:
		return reflect.PointerTo(p.mutate(t.Elem()))
	case reflect.Struct:
		fs := make([]reflect.StructField, t.NumField())
		for i := range fs {
			fs[i] = t.Field(i)
			fs[i].Type = p.mutate(fs[i].Type)
			fs[i].Offset = 0
			if !fs[i].Anonymous && p.r.IntN(5) == 0 {
				// Matched case-insensitively only.
				fs[i].Tag = reflect.StructTag(fmt.Sprintf(`monty:"%s"`, strings.ToLower(fs[i].Name)))
			}
		}
		if p.r.IntN(3) == 0 {
			// Fields in another order than the dict's keys.
			p.r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		}
		return reflect.StructOf(fs)
	case reflect.Interface:
		return t
	}
	if p.r.IntN(3) == 0 {
		return propScalars[p.r.IntN(len(propScalars))]
	}
	return t
}

func (p propGen) str() string {
	const alphabet = "abcé\u2603"
	rs := []rune(alphabet)
	n := p.r.IntN(5)
	b := make([]rune, n)
	for i := range b {
		b[i] = rs[p.r.IntN(len(rs))]
	}
	s := string(b)
	if p.r.IntN(12) == 0 {
		s += "\xff" // invalid UTF-8
	}
	return s
}

func (p propGen) int() int64 {
	switch p.r.IntN(6) {
	case 0:
		return math.MaxInt64 - p.r.Int64N(3)
	case 1:
		return math.MinInt64 + p.r.Int64N(3)
	case 2:
		return p.r.Int64N(70000) - 35000
	}
	return p.r.Int64N(300) - 100
}

// fill sets v (settable) to a random value of its type.
func (p propGen) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(p.r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x := p.int()
		for v.OverflowInt(x) {
			x /= 3
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x := uint64(p.int())
		if p.r.IntN(2) == 0 {
			x = uint64(p.r.IntN(300))
		}
		for v.OverflowUint(x) {
			x /= 3
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		fs := []float64{0, -1.5, 3.25, math.Inf(1), math.NaN(), 1e300, float64(p.int())}
		v.SetFloat(fs[p.r.IntN(len(fs))])
	case reflect.String:
		v.SetString(p.str())
	case reflect.Slice:
		if p.r.IntN(8) == 0 {
			return // nil
		}
		n := p.r.IntN(6)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			p.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			p.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		if p.r.IntN(8) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range p.r.IntN(5) {
			k := reflect.New(v.Type().Key()).Elem()
			p.fill(k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			p.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			p.fill(v.Field(i), depth+1)
		}
		// Sometimes two fields share one slice (FromGo makes one node).
		for i := range v.NumField() {
			for j := i + 1; j < v.NumField(); j++ {
				if v.Field(i).Kind() == reflect.Slice && v.Field(i).Type() == v.Field(j).Type() && p.r.IntN(2) == 0 {
					v.Field(j).Set(v.Field(i))
				}
			}
		}
	case reflect.Pointer:
		if p.r.IntN(4) == 0 {
			return
		}
		e := reflect.New(v.Type().Elem())
		p.fill(e.Elem(), depth+1)
		v.Set(e)
	case reflect.Interface:
		if p.r.IntN(5) == 0 {
			return
		}
		t := p.typ(2 - min(depth, 2))
		e := reflect.New(t).Elem()
		p.fill(e, depth+1)
		v.Set(e)
	}
}

// corrupt changes a few nodes of g: scalar kinds swapped, ints made big,
// references pointed out of range or forward.
func (p propGen) corrupt(g *Graph) {
	if g.Len() == 0 {
		return
	}
	for range p.r.IntN(4) {
		i := p.r.IntN(g.Len())
		n := &g.Nodes[i]
		switch {
		case len(n.Refs()) > 0 && p.r.IntN(3) == 0:
			refs := append([]NodeID(nil), n.Refs()...)
			switch p.r.IntN(3) {
			case 0:
				refs[p.r.IntN(len(refs))] = NodeID(i + p.r.IntN(3)) // itself or just after
			case 1:
				refs[p.r.IntN(len(refs))] = NodeID(i + p.r.IntN(g.Len()-i)) // anywhere not below
			default:
				refs[p.r.IntN(len(refs))] = NodeID(g.Len() + p.r.IntN(3)) // outside the graph
			}
			n.SetRefs(refs)
		case n.Kind == KindInt && p.r.IntN(2) == 0:
			*n = BigIntNode(new(big.Int).Lsh(big.NewInt(int64(n.Num)|1), 70))
		case n.Kind == KindInt:
			*n = Float(float64(int64(n.Num)) + 0.5)
		case n.Kind == KindFloat:
			*n = Int(int64(n.Float()))
		case n.Kind == KindStr:
			*n = Path(n.Text())
		case n.Kind == KindBool:
			*n = Int(int64(n.Num) + 1)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func encodeWith(slow bool, v any) (*Graph, NodeID, error) {
	var g Graph
	g.Add(Str("prefix")) // a graph that is not empty
	e := encoder{g: &g, slow: slow}
	id, err := e.encode(reflect.ValueOf(v), 0)
	return &g, id, finishErr(err)
}

// encodeRun converts v as FromGo does (pre-sizing, the storage it
// allocated known zero) with the fast paths, into an empty graph or, when
// stale is set, into one whose storage past its length holds old nodes
// (which the fast paths must not take for zeroed).
func encodeRun(v any, stale bool) (*Graph, NodeID, error) {
	var g Graph
	g.Add(Str("prefix"))
	if stale {
		old := make([]Node, 64)
		for i := range old {
			old[i] = Node{Kind: KindStr, Num: 99}.WithText("stale")
		}
		old[0] = Str("prefix")
		g.Nodes = old[:1]
	}
	e := encoder{g: &g}
	id, err := e.run(&g, reflect.ValueOf(v), 1)
	return &g, id, err
}

func decodeWith(slow bool, g *Graph, id NodeID, t reflect.Type) (reflect.Value, error) {
	dst := reflect.New(t)
	d := decoder{g: g, slow: slow}
	err := finishErr(d.decode(id, maxParent, dst.Elem(), 0))
	return dst.Elem(), err
}

// The hooked conversions of the property test: a hook that wants a few
// types (so the fast paths and plans stay on for the rest and must leave
// those types to it).
var (
	propStrType    = reflect.TypeFor[propStr]()
	propInt8sType  = reflect.TypeFor[[]propInt8]()
	propInt8Type   = reflect.TypeFor[propInt8]()
	propHookedEnc  = func(t reflect.Type) bool { return t == propStrType || t == propInt8sType }
	propHookedDec  = func(t reflect.Type) bool { return t == propStrType || t == propInt8Type }
	propEncodeHook = func(s *EncodeState, v reflect.Value) (NodeID, bool, error) {
		switch v.Type() {
		case propStrType:
			return s.Graph().Add(Str("hooked " + v.String())), true, nil
		case propInt8sType:
			if v.Len() == 3 {
				return 0, true, fmt.Errorf("three propInt8s")
			}
			return s.Graph().Add(Int(int64(v.Len()))), true, nil
		}
		return 0, false, nil
	}
	propDecodeHook = func(s *DecodeState, id NodeID, t reflect.Type) (reflect.Value, bool, error) {
		n := s.Graph().Node(id)
		switch {
		case t == propStrType && n.Kind == KindStr:
			return reflect.ValueOf(propStr("from hook " + n.Text())), true, nil
		case t == propInt8Type && n.Kind == KindInt && n.Int()%7 == 0:
			return reflect.ValueOf(propInt8(-7)), true, nil
		case t == propInt8Type && n.Kind == KindFloat:
			return reflect.Value{}, true, fmt.Errorf("no floats here")
		}
		return reflect.Value{}, false, nil
	}
)

func encodeHooked(slow bool, v any) (*Graph, NodeID, error) {
	var g Graph
	e := &encoder{g: &g, slow: slow, hook: propEncodeHook, hookTypes: propHookedEnc}
	e.state = &EncodeState{e: e}
	id, err := e.encode(reflect.ValueOf(v), 0)
	return &g, id, finishErr(err)
}

func decodeHooked(slow bool, g *Graph, id NodeID, t reflect.Type) (reflect.Value, error) {
	dst := reflect.New(t)
	d := decoder{g: g, slow: slow, hook: propDecodeHook, hookTypes: propHookedDec}
	err := finishErr(d.decode(id, maxParent, dst.Elem(), 0))
	return dst.Elem(), err
}

// sameAsGeneral reports whether graph g (which the fast paths may have
// packed) holds, unpacked, exactly the nodes of the general path's graph
// gs, with id where gs has ids.
func sameAsGeneral(g *Graph, id NodeID, gs *Graph, ids NodeID) bool {
	u, uid := g.Unpacked(id)
	return uid == ids && u.Equal(gs)
}

func TestPropertyFastPathsAgree(t *testing.T) {
	seed := uint64(rand.Int64())
	t.Logf("seed %d", seed)
	p := propGen{rand.New(rand.NewPCG(seed, 12))}
	packed := 0
	defer func() {
		// The fast paths pack Go integer slices (Node.Ints): the
		// comparisons above covered packed graphs.
		if !t.Failed() && packed == 0 {
			t.Errorf("no conversion packed its ints")
		}
	}()
	for i := range 4000 {
		typ := p.typ(3)
		v := reflect.New(typ).Elem()
		p.fill(v, 0)
		// Go -> graph.
		gf, idf, errf := encodeWith(false, v.Interface())
		gs, ids, errs := encodeWith(true, v.Interface())
		if errText(errf) != errText(errs) {
			t.Fatalf("case %d: FromGo %v of %#v: fast error %q, general %q", i, typ, v, errText(errf), errText(errs))
		}
		for _, stale := range []bool{false, true} {
			gr, idr, errr := encodeRun(v.Interface(), stale)
			if errText(errr) != errText(errs) || errr == nil && !sameAsGeneral(gr, idr, gs, ids) {
				t.Fatalf("case %d: FromGo (pre-sized, stale storage %v) %v of %#v: fast %s (%q), general %s (%q)",
					i, stale, typ, v, gr.Repr(idr), errText(errr), gs.Repr(ids), errText(errs))
			}
		}
		gh, idh, errh := encodeHooked(false, v.Interface())
		ghs, idhs, errhs := encodeHooked(true, v.Interface())
		if errText(errh) != errText(errhs) || errh == nil && !sameAsGeneral(gh, idh, ghs, idhs) {
			t.Fatalf("case %d: FromGo hooked %v of %#v: fast %s (%q), general %s (%q)",
				i, typ, v, gh.Repr(idh), errText(errh), ghs.Repr(idhs), errText(errhs))
		}
		if errf != nil {
			continue
		}
		if !sameAsGeneral(gf, idf, gs, ids) {
			t.Fatalf("case %d: FromGo %v of %#v: fast %s, general %s", i, typ, v, gf.Repr(idf), gs.Repr(ids))
		}
		if gf.HasPacked() {
			packed++
			// ToGo reads a packed graph as its unpacked form, into the
			// same type and into a mutated one (other integer widths).
			for _, dt := range []reflect.Type{typ, p.mutate(typ)} {
				dst := reflect.New(dt)
				errp := ToGo(gf, idf, dst.Interface())
				vs, errs := decodeWith(true, gs, ids, dt)
				if errText(errp) != errText(errs) || errp == nil && !reflect.DeepEqual(dst.Elem().Interface(), vs.Interface()) && !hasNaN(vs) {
					t.Fatalf("case %d: ToGo of packed %s into %v: %#v (%q), general %#v (%q)", i, gf.Repr(idf), dt, dst.Elem(), errText(errp), vs, errText(errs))
				}
			}
		}

		// graph -> Go, into the same type and into a mutated one, from the
		// graph as made and from a corrupted copy.
		if p.r.IntN(2) == 0 {
			p.corrupt(gs)
		}
		for _, dt := range []reflect.Type{typ, p.mutate(typ)} {
			vf, errf := decodeWith(false, gs, ids, dt)
			vs, errs := decodeWith(true, gs, ids, dt)
			if errText(errf) != errText(errs) {
				t.Fatalf("case %d: ToGo %s into %v: fast error %q, general %q", i, gs.Repr(ids), dt, errText(errf), errText(errs))
			}
			if errf == nil && !reflect.DeepEqual(vf.Interface(), vs.Interface()) && !hasNaN(vs) {
				t.Fatalf("case %d: ToGo %s into %v: fast %#v, general %#v", i, gs.Repr(ids), dt, vf, vs)
			}
			vf, errf = decodeHooked(false, gs, ids, dt)
			vs, errs = decodeHooked(true, gs, ids, dt)
			if errText(errf) != errText(errs) {
				t.Fatalf("case %d: ToGo hooked %s into %v: fast error %q, general %q", i, gs.Repr(ids), dt, errText(errf), errText(errs))
			}
			if errf == nil && !reflect.DeepEqual(vf.Interface(), vs.Interface()) && !hasNaN(vs) {
				t.Fatalf("case %d: ToGo hooked %s into %v: fast %#v, general %#v", i, gs.Repr(ids), dt, vf, vs)
			}
		}
	}
}

// TestPropertyFastPathsAtDepthLimit converts values whose fast paths sit
// at the nesting bound (the conversion started a few levels below
// MaxConvertDepth): fast and general paths must refuse at the same level
// with the same error.
func TestPropertyFastPathsAtDepthLimit(t *testing.T) {
	type row struct {
		A int16
		B []float32
		C []string
		D propUint32
	}
	values := []any{
		&row{A: 3, B: []float32{1.5}, C: []string{"x"}, D: 7},
		[]row{{A: 1, B: []float32{2}}},
		[]propInt8{1, 2},
		[][]uint32{{1}, {2, 3}},
		&[]bool{true},
	}
	for _, v := range values {
		for start := MaxConvertDepth - 4; start <= MaxConvertDepth+1; start++ {
			var res [2]struct {
				g   Graph
				id  NodeID
				err string
			}
			for k, slow := range []bool{false, true} {
				r := &res[k]
				r.g.Add(Str("prefix"))
				e := encoder{g: &r.g, slow: slow}
				id, err := e.encode(reflect.ValueOf(v), start)
				r.id, r.err = id, errText(finishErr(err))
			}
			if res[0].err != res[1].err || res[0].err == "<nil>" && !sameAsGeneral(&res[0].g, res[0].id, &res[1].g, res[1].id) {
				t.Fatalf("FromGo %T from depth %d: fast %q %s, general %q %s", v, start, res[0].err, res[0].g.Repr(res[0].id), res[1].err, res[1].g.Repr(res[1].id))
			}
			// Back, from the full-depth graph of the value.
			var g Graph
			id, err := FromGo(&g, v)
			if err != nil {
				t.Fatal(err)
			}
			u, id := g.Unpacked(id)
			var outs [2]reflect.Value
			var errs [2]string
			for k, slow := range []bool{false, true} {
				dst := reflect.New(reflect.TypeOf(v))
				d := decoder{g: u, slow: slow}
				errs[k] = errText(finishErr(d.decode(id, maxParent, dst.Elem(), start)))
				outs[k] = dst.Elem()
			}
			if errs[0] != errs[1] || errs[0] == "<nil>" && !reflect.DeepEqual(outs[0].Interface(), outs[1].Interface()) {
				t.Fatalf("ToGo %T from depth %d: fast %q %#v, general %q %#v", v, start, errs[0], outs[0], errs[1], outs[1])
			}
		}
	}
}

// hasNaN reports whether v holds a NaN somewhere (DeepEqual never equates
// NaNs).
func hasNaN(v reflect.Value) bool {
	return fmt.Sprint(v.Interface()) != "" && containsNaN(v, 0)
}

func containsNaN(v reflect.Value, depth int) bool {
	if depth > 20 {
		return false
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return math.IsNaN(v.Float())
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if containsNaN(v.Index(i), depth+1) {
				return true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if containsNaN(it.Value(), depth+1) || containsNaN(it.Key(), depth+1) {
				return true
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if containsNaN(v.Field(i), depth+1) {
				return true
			}
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return containsNaN(v.Elem(), depth+1)
		}
	}
	return false
}

// TestFromGoPresizesExactly checks that FromGo sizes the graph to the node
// count when the value's shape tells it, with no growth on the way.
func TestFromGoPresizesExactly(t *testing.T) {
	type row struct {
		A int
		B string `monty:"b,omitempty"`
		C []float64
		M map[string]int
	}
	for _, v := range []any{
		[]int64{1, 2, 3}, []string{"a", "b"}, []byte("xyz"), 7,
		[]row{{A: 1, C: []float64{1, 2}}, {A: 2, B: "x", M: map[string]int{"k": 1}}},
		[][]int32{{1}, {2, 3}, nil},
	} {
		var g Graph
		if _, err := FromGo(&g, v); err != nil {
			t.Fatal(err)
		}
		if cap(g.Nodes) != len(g.Nodes) {
			t.Errorf("%T: %d nodes in a graph of capacity %d", v, len(g.Nodes), cap(g.Nodes))
		}
	}
}

// dag is a slice type that can share itself: dagOf(w, d) is d levels of
// w references each to the level below, over a bottom [[]]: d+2 nodes.
type dag []dag

func dagOf(width, depth int) dag {
	x := dag{nil}
	for range depth {
		next := make(dag, width)
		for i := range next {
			next[i] = x
		}
		x = next
	}
	return x
}

// TestFromGoCountsSharedSlicesOnce checks that the presizing count, past
// its budget, stops at a slice met twice instead of counting it at each
// reference: a value whose slices share each other (a DAG) is small, and
// converts into a small graph in linear time, but counted reference by
// reference it expands exponentially (width**depth; 64**5 is a billion,
// minutes of counting before the conversion starts). A large value that
// shares nothing is still counted exactly past the budget.
func TestFromGoCountsSharedSlicesOnce(t *testing.T) {
	rows := countBudget + 5
	if n, ok := countNodes(reflect.ValueOf(make([][]int, rows)), 0); !ok || n != rows+1 {
		t.Errorf("countNodes of %d empty rows = %d, %v; want %d, true", rows, n, ok, rows+1)
	}
	if n, ok := countNodes(reflect.ValueOf(dagOf(2, 20)), 0); ok {
		t.Fatalf("countNodes of a DAG of 22 slices counted %d nodes: it walked every reference", n)
	}
	// Sharing is judged per slice, not per value: equal but distinct
	// slices count in full.
	if n, ok := countNodes(reflect.ValueOf(dag{dag{}, dag{}}), 0); !ok || n != 3 {
		t.Errorf("countNodes(dag{dag{}, dag{}}) = %d, %v; want 3, true", n, ok)
	}
	if n, ok := countNodes(reflect.ValueOf(dag{{{}}, {{}}}), 0); !ok || n != 5 {
		t.Errorf("countNodes(dag{{{}}, {{}}}) = %d, %v; want 5, true", n, ok)
	}
	var g Graph
	id, err := FromGo(&g, dagOf(64, 5))
	if err != nil {
		t.Fatal(err)
	}
	if g.Len() != 7 {
		t.Errorf("the DAG became %d nodes, want 7 (one per distinct slice)", g.Len())
	}
	if refs := g.Node(id).Refs(); len(refs) != 64 || refs[0] != refs[63] {
		t.Errorf("root items %v: want 64 references to one node", refs)
	}
}

// TestFastPathsRefuseMalformedRefs decodes graphs whose items or struct
// field values refer to a node that is not below their container (itself,
// a later node of a fitting kind, or none): for every plain scalar type the
// fast paths must report what the general path reports.
func TestFastPathsRefuseMalformedRefs(t *testing.T) {
	fitting := func(st reflect.Type) Node {
		switch st.Kind() {
		case reflect.Bool:
			return Bool(true)
		case reflect.String:
			return Str("s")
		case reflect.Float32, reflect.Float64:
			return Float(1.5)
		}
		return Int(1)
	}
	for _, st := range propScalars {
		leaf := fitting(st)
		for _, bad := range []string{"self", "later", "outside"} {
			// A list [list-or-dict, leaf]: the inner container's ref is bad.
			for _, inner := range []string{"items", "field"} {
				var g Graph
				var dst reflect.Type
				name := g.Add(Str("A"))
				var ref NodeID
				switch bad {
				case "self":
					ref = 1
				case "later":
					ref = 2
				default:
					ref = 9
				}
				if inner == "items" {
					g.Add(List(ref))
					dst = reflect.SliceOf(reflect.SliceOf(st))
				} else {
					g.Add(Dict(Pair{name, ref}))
					dst = reflect.SliceOf(reflect.StructOf([]reflect.StructField{{Name: "A", Type: st}}))
				}
				g.Add(leaf)
				root := g.Add(List(1, 2))
				if inner == "field" {
					// The struct's items: the dict, then a well-formed dict.
					root = g.Add(List(1))
				}
				_, errf := decodeWith(false, &g, root, dst)
				_, errs := decodeWith(true, &g, root, dst)
				if errs == nil && inner == "field" {
					t.Fatalf("%v, %s ref: the general path accepted %s", dst, bad, g.Repr(root))
				}
				if errText(errf) != errText(errs) {
					t.Fatalf("%v, %s ref: fast error %q, general %q", dst, bad, errText(errf), errText(errs))
				}
			}
		}
	}
}
