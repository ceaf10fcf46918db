package value

import (
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Conversion plans: what the conversions need to know about a Go type,
// worked out once per type and cached (as encoding/json caches its
// encoders), and the fast paths they enable.
//
// Every fast path handles only the common, well-formed case of one element
// and hands anything else (a kind that needs converting, a value out of
// range, a malformed reference, invalid UTF-8) to the general path for that
// element, so results and errors are the general path's by construction;
// the property tests in plan_test.go check it.

// typeInfo is the cached plan of one Go type.
type typeInfo struct {
	// appender: the type implements GraphAppender; ptrAppender: only its
	// pointer does (used when the value is addressable).
	appender, ptrAppender bool
	// decoder: the pointer type implements GraphDecoder.
	decoder bool
	// special is the type's entry in specialTypes.
	special specialType
	// encScalar and decScalar mark plain scalars (bool, integer, float and
	// string kinds without special meaning or own conversion methods) in
	// each direction.
	encScalar, decScalar bool
	// fields and byName are a struct's fields and their index by exact
	// name.
	fields []Field
	byName map[string]int
}

var typeInfos sync.Map // reflect.Type -> *typeInfo

func infoOf(t reflect.Type) *typeInfo {
	if ti, ok := typeInfos.Load(t); ok {
		return ti.(*typeInfo)
	}
	ti, _ := typeInfos.LoadOrStore(t, newTypeInfo(t))
	return ti.(*typeInfo)
}

func newTypeInfo(t reflect.Type) *typeInfo {
	ti := &typeInfo{
		appender: t.Implements(appenderType),
		decoder:  reflect.PointerTo(t).Implements(decoderType),
		special:  specialTypes[t],
	}
	ti.ptrAppender = !ti.appender && t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(appenderType)
	if isScalarKind(t.Kind()) && ti.special == notSpecial {
		ti.encScalar = !ti.appender && !ti.ptrAppender
		ti.decScalar = !ti.decoder
	}
	if t.Kind() == reflect.Struct {
		ti.fields = cachedFields(t)
		ti.byName = make(map[string]int, len(ti.fields))
		for i, f := range ti.fields {
			ti.byName[f.Name] = i
		}
	}
	return ti
}

func isScalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// typeAnswers remembers a HookTypes filter's answers for one conversion:
// a few inline, the rest in a map.
type typeAnswers struct {
	n     int
	small [4]struct {
		t    reflect.Type
		want bool
	}
	more map[reflect.Type]bool
}

// ask returns f(t), calling f at most once per type.
func (a *typeAnswers) ask(t reflect.Type, f func(reflect.Type) bool) bool {
	for i := range a.n {
		if a.small[i].t == t {
			return a.small[i].want
		}
	}
	if want, ok := a.more[t]; ok {
		return want
	}
	want := f(t)
	if a.n < len(a.small) {
		a.small[a.n].t, a.small[a.n].want = t, want
		a.n++
	} else {
		if a.more == nil {
			a.more = map[reflect.Type]bool{}
		}
		a.more[t] = want
	}
	return want
}

// field returns the struct field named name: exactly, else
// case-insensitively (the first in field order).
func (ti *typeInfo) field(name string) *Field {
	if i, ok := ti.byName[name]; ok {
		return &ti.fields[i]
	}
	return findField(ti.fields, name)
}

// ---------------------------------------------------------------------------
// Go -> graph fast paths

// reserve makes room for n more nodes. An empty graph gets exactly n (the
// conversion counted them); a graph that has nodes grows by the usual
// doubling, so that many small reservations stay linear. It reports whether
// the room is fresh (zeroed) storage.
func (g *Graph) reserve(n int) bool {
	if cap(g.Nodes)-len(g.Nodes) >= n {
		return false
	}
	size := len(g.Nodes) + n
	if len(g.Nodes) > 0 {
		size = max(size, 2*cap(g.Nodes))
	}
	ns := make([]Node, len(g.Nodes), size)
	copy(ns, g.Nodes)
	g.Nodes = ns
	return true
}

// maxCountDepth bounds the nesting countNodes looks into.
const maxCountDepth = 32

// countNodes returns the number of nodes FromGo makes for v when that is
// cheap to know from the shape of v (scalars, strings, bytes, and slices,
// arrays, string-keyed maps and structs made of them); ok is false
// otherwise. Values shared through slices are counted each time they
// appear, so the count is exact unless the value shares storage.
func countNodes(v reflect.Value, depth int) (n int, ok bool) {
	if !v.IsValid() || depth > maxCountDepth {
		return 0, false
	}
	t := v.Type()
	ti := infoOf(t)
	if ti.encScalar {
		return 1, true
	}
	if ti.appender || ti.ptrAppender || ti.special != notSpecial {
		return 0, false
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		et := t.Elem()
		if et.Kind() == reflect.Uint8 && !elemEncodesItself(et) {
			return 1, true
		}
		if infoOf(et).encScalar {
			return v.Len() + 1, true
		}
		total := 1
		for i := range v.Len() {
			c, ok := countNodes(v.Index(i), depth+1)
			if !ok {
				return 0, false
			}
			total += c
		}
		return total, true
	case reflect.Map:
		if t.Key().Kind() == reflect.String && infoOf(t.Key()).encScalar && infoOf(t.Elem()).encScalar {
			return 2*v.Len() + 1, true
		}
	case reflect.Struct:
		total := 1
		for i := range ti.fields {
			f := &ti.fields[i]
			fv, ok := fieldByIndex(v, f.Index)
			if !ok || f.OmitEmpty && isEmptyValue(fv) || f.OmitZero && isZeroValue(fv) {
				continue
			}
			c, ok := countNodes(fv, depth+1)
			if !ok {
				return 0, false
			}
			total += 1 + c
		}
		return total, true
	}
	return 0, false
}

// reserveExact makes room for exactly n more nodes when the graph must
// grow.
func (g *Graph) reserveExact(n int) {
	if cap(g.Nodes)-len(g.Nodes) >= n {
		return
	}
	ns := make([]Node, len(g.Nodes), len(g.Nodes)+n)
	copy(ns, g.Nodes)
	g.Nodes = ns
}

// scalarItems appends a list (of kind k) of the plain scalars of slice or
// array v, whose element type is et.
func (e *encoder) scalarItems(v reflect.Value, et reflect.Type, k Kind, depth int) (NodeID, error) {
	n := v.Len()
	fresh := e.g.reserve(n + 1)
	refs := make([]NodeID, n)
	base := len(e.g.Nodes)
	nodes := e.g.Nodes
	var p unsafe.Pointer
	if n > 0 {
		if v.Kind() == reflect.Slice {
			p = v.UnsafePointer()
		} else if v.CanAddr() {
			p = v.Addr().UnsafePointer()
		}
	}
	if p == nil && n > 0 {
		// An unaddressable array: element by element.
		for i := range refs {
			id, err := e.encode(v.Index(i), depth+1)
			if err != nil {
				return 0, atPath(err, "["+strconv.Itoa(i)+"]")
			}
			refs[i] = id
		}
		return e.add(Node{Kind: k}.WithRefs(refs)), nil
	}
	// Scalar nodes are written field by field into the reserved (zeroed)
	// nodes: no pointer is written, so no write barrier runs.
	fill := func(kind Kind) []Node {
		e.g.Nodes = nodes[:base+n]
		out := e.g.Nodes[base:]
		if !fresh {
			clear(out) // storage past len may hold old nodes
		}
		for i := range out {
			out[i].Kind = kind
			refs[i] = NodeID(base + i)
		}
		return out
	}
	switch et.Kind() {
	case reflect.Int64, reflect.Int:
		if et.Size() == 8 {
			out := fill(KindInt)
			for i, x := range unsafe.Slice((*int64)(p), n) {
				out[i].Num = uint64(x)
			}
			return e.add(Node{Kind: k}.WithRefs(refs)), nil
		}
	case reflect.Int32:
		out := fill(KindInt)
		for i, x := range unsafe.Slice((*int32)(p), n) {
			out[i].Num = uint64(int64(x))
		}
		return e.add(Node{Kind: k}.WithRefs(refs)), nil
	case reflect.Float64:
		out := fill(KindFloat)
		for i, x := range unsafe.Slice((*float64)(p), n) {
			out[i].Num = math.Float64bits(x)
		}
		return e.add(Node{Kind: k}.WithRefs(refs)), nil
	case reflect.Bool:
		out := fill(KindBool)
		for i, x := range unsafe.Slice((*bool)(p), n) {
			if x {
				out[i].Num = 1
			}
		}
		return e.add(Node{Kind: k}.WithRefs(refs)), nil
	case reflect.String:
		xs := unsafe.Slice((*string)(p), n)
		for i, x := range xs {
			if !utf8.ValidString(x) {
				e.g.Nodes = nodes
				id, err := e.encode(v.Index(i), depth+1) // the general path's error
				if err != nil {
					return 0, atPath(err, "["+strconv.Itoa(i)+"]")
				}
				refs[i] = id
				nodes = e.g.Nodes
				continue
			}
			nodes = append(nodes, Node{Kind: KindStr}.WithText(x))
			refs[i] = NodeID(len(nodes) - 1)
		}
		e.g.Nodes = nodes
		return e.add(Node{Kind: k}.WithRefs(refs)), nil
	}
	// Other scalar kinds: no reflection dispatch per element, but a
	// reflect read.
	for i := range refs {
		id, err := e.scalar(v.Index(i), et)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"]")
		}
		refs[i] = id
	}
	return e.add(Node{Kind: k}.WithRefs(refs)), nil
}

// stringMap appends a dict for a map with string keys and plain scalar
// values, its entries sorted by key.
func (e *encoder) stringMap(v reflect.Value, vt reflect.Type, depth int) (NodeID, error) {
	type kv struct {
		k string
		v reflect.Value
	}
	entries := make([]kv, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		entries = append(entries, kv{it.Key().String(), it.Value()})
	}
	slices.SortFunc(entries, func(a, b kv) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return 0
	})
	e.g.reserve(2*len(entries) + 1)
	refs := make([]NodeID, 0, 2*len(entries))
	for _, en := range entries {
		if !utf8.ValidString(en.k) {
			k := reflect.ValueOf(en.k)
			return 0, atPath(fromGoErr(v.Type().Key(), KindStr, "invalid UTF-8"), keyPath(k)+".key")
		}
		kid := e.add(Str(en.k))
		vid, err := e.scalar(en.v, vt)
		if err != nil {
			return 0, atPath(err, keyPath(reflect.ValueOf(en.k)))
		}
		refs = append(refs, kid, vid)
	}
	return e.add(Node{Kind: KindDict}.WithRefs(refs)), nil
}

// ---------------------------------------------------------------------------
// graph -> Go fast paths

// scalarItems decodes the items refs of node id into s, a slice or an
// addressable array of plain scalars of type et.
func (d *decoder) scalarItems(refs []NodeID, id NodeID, s reflect.Value, et reflect.Type, depth int) error {
	n := len(refs)
	if n == 0 {
		return nil
	}
	var p unsafe.Pointer
	if s.Kind() == reflect.Slice {
		p = s.UnsafePointer()
	} else {
		p = s.Addr().UnsafePointer()
	}
	nodes := d.g.Nodes
	// ok reports whether item r is a well-formed node of kind k.
	at := func(r NodeID) *Node {
		if int(r) < len(nodes) && r < id {
			return &nodes[r]
		}
		return nil
	}
	slow := func(i int) error {
		if err := d.decode(refs[i], id, s.Index(i), depth+1); err != nil {
			return atPath(err, "["+strconv.Itoa(i)+"]")
		}
		return nil
	}
	switch et.Kind() {
	case reflect.Int, reflect.Int64:
		if et.Size() != 8 {
			break
		}
		xs := unsafe.Slice((*int64)(p), n)
		for i, r := range refs {
			if nd := at(r); nd != nil && nd.Kind == KindInt {
				xs[i] = int64(nd.Num)
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	case reflect.Int32:
		xs := unsafe.Slice((*int32)(p), n)
		for i, r := range refs {
			if nd := at(r); nd != nil && nd.Kind == KindInt && int64(nd.Num) == int64(int32(nd.Num)) {
				xs[i] = int32(nd.Num)
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	case reflect.Uint64, reflect.Uint:
		if et.Size() != 8 {
			break
		}
		xs := unsafe.Slice((*uint64)(p), n)
		for i, r := range refs {
			if nd := at(r); nd != nil && nd.Kind == KindInt && int64(nd.Num) >= 0 {
				xs[i] = nd.Num
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	case reflect.Float64:
		xs := unsafe.Slice((*float64)(p), n)
		for i, r := range refs {
			nd := at(r)
			switch {
			case nd != nil && nd.Kind == KindFloat:
				xs[i] = math.Float64frombits(nd.Num)
			case nd != nil && nd.Kind == KindInt:
				xs[i] = float64(int64(nd.Num))
			default:
				if err := slow(i); err != nil {
					return err
				}
			}
		}
		return nil
	case reflect.Bool:
		xs := unsafe.Slice((*bool)(p), n)
		for i, r := range refs {
			if nd := at(r); nd != nil && nd.Kind == KindBool {
				xs[i] = nd.Num != 0
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		xs := unsafe.Slice((*string)(p), n)
		for i, r := range refs {
			if nd := at(r); nd != nil && (nd.Kind == KindStr || nd.Kind == KindPath) {
				xs[i] = nd.Text()
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	}
	// Other scalar kinds: the scalar setter, without the general dispatch.
	for i, r := range refs {
		if nd := at(r); nd != nil {
			if err := setScalar(nd, s.Index(i), et); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
		} else if err := slow(i); err != nil {
			return err
		}
	}
	return nil
}
