package value

import (
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
	// text: a type with no conversion of its own (not a pointer) that
	// implements encoding.TextMarshaler, converted to a str of its text;
	// ptrText: only its pointer does. unText: its pointer implements
	// encoding.TextUnmarshaler, which ToGo calls for a str.
	text, ptrText, unText bool
	// json: a type with no conversion of its own and no MarshalText that
	// implements json.Marshaler, converted to the value of its JSON;
	// ptrJSON: only its pointer does. unJSON: its pointer implements
	// json.Unmarshaler but not encoding.TextUnmarshaler, which ToGo
	// calls with any value's JSON.
	json, ptrJSON, unJSON bool
	// special is the type's entry in specialTypes.
	special specialType
	// encScalar and decScalar mark plain scalars (bool, integer, float and
	// string kinds without special meaning or own conversion methods) in
	// each direction.
	encScalar, decScalar bool
	// op is a decScalar type's layout (opNone for any other type).
	op scalarOp
	// fields and byName are a struct's fields and their index by exact
	// name; plans (parallel to fields) how ToGo stores each.
	fields []Field
	byName map[string]int
	plans  []fieldPlan
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
	if k := t.Kind(); k != reflect.Pointer && k != reflect.Interface && ti.special == notSpecial {
		if !ti.appender && !ti.ptrAppender {
			ti.text = t.Implements(textMarshalerType)
			ti.ptrText = !ti.text && reflect.PointerTo(t).Implements(textMarshalerType)
			if !ti.text && !ti.ptrText {
				ti.json = t.Implements(jsonMarshalerType)
				ti.ptrJSON = !ti.json && reflect.PointerTo(t).Implements(jsonMarshalerType)
			}
		}
		ti.unText = !ti.decoder && reflect.PointerTo(t).Implements(textUnmarshalerType)
		ti.unJSON = !ti.decoder && !ti.unText && reflect.PointerTo(t).Implements(jsonUnmarshalerType)
	}
	if isScalarKind(t.Kind()) && ti.special == notSpecial {
		ti.encScalar = !ti.appender && !ti.ptrAppender && !ti.text && !ti.ptrText && !ti.json && !ti.ptrJSON
		ti.decScalar = !ti.decoder && !ti.unText && !ti.unJSON
		if ti.decScalar {
			ti.op = layoutOf(t)
		}
	}
	if t.Kind() == reflect.Struct {
		ti.fields = cachedFields(t)
		ti.byName = make(map[string]int, len(ti.fields))
		for i, f := range ti.fields {
			ti.byName[f.Name] = i
		}
		ti.plans = newFieldPlans(t, ti.fields)
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
	if i := ti.fieldIndex(name, 0); i >= 0 {
		return &ti.fields[i]
	}
	return nil
}

// fieldIndex returns the index of the field that field(name) returns, or
// -1. Field hint is tried first (the next field in order, when a dict's
// keys follow the fields, as FromGo writes them).
func (ti *typeInfo) fieldIndex(name string, hint int) int {
	if hint < len(ti.fields) && ti.fields[hint].Name == name {
		return hint
	}
	if i, ok := ti.byName[name]; ok {
		return i
	}
	for i := range ti.fields {
		if strings.EqualFold(ti.fields[i].Name, name) {
			return i
		}
	}
	return -1
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
//
// Counting a shared slice at each reference takes time exponential in the
// nesting of a value whose slices share each other (x = [x, x], thirty
// times over), while FromGo makes one node of it. So the count first
// runs untracked, with a budget of items of slices of containers, and
// past that budget counts again with every such slice recorded (but those
// whose items count in constant time), ending (ok false) at one met
// twice: linear in the value's memory either way.
func countNodes(v reflect.Value, depth int) (n int, ok bool) {
	c := nodeCounter{budget: countBudget}
	if n, ok = c.count(v, depth); ok || !c.overBudget {
		return n, ok
	}
	c = nodeCounter{track: true}
	return c.count(v, depth)
}

// leafItems reports whether counting a value of type et takes constant
// time (a slice or array of scalars or bytes, a map): a slice of such
// items needs no record, as it is counted in time linear in its length
// at each reference from a recorded slice.
func leafItems(et reflect.Type) bool {
	switch et.Kind() {
	case reflect.Map:
		return true
	case reflect.Slice, reflect.Array:
		return infoOf(et.Elem()).encScalar || et.Elem().Kind() == reflect.Uint8
	}
	return false
}

// countBudget is the number of items of slices of containers countNodes
// walks before it records the slices it meets.
const countBudget = 1 << 20

// nodeCounter is the state of one countNodes: the budget left, or the
// slices of containers met so far (the first inline, the rest in a map).
type nodeCounter struct {
	budget     int
	overBudget bool
	track      bool

	first    visitKey
	anyFirst bool
	seen     map[visitKey]struct{}
}

func (c *nodeCounter) again(k visitKey) bool {
	switch {
	case !c.anyFirst:
		c.first, c.anyFirst = k, true
		return false
	case k == c.first:
		return true
	}
	if _, ok := c.seen[k]; ok {
		return true
	}
	if c.seen == nil {
		c.seen = map[visitKey]struct{}{}
	}
	c.seen[k] = struct{}{}
	return false
}

func (c *nodeCounter) count(v reflect.Value, depth int) (n int, ok bool) {
	if !v.IsValid() || depth > maxCountDepth {
		return 0, false
	}
	t := v.Type()
	ti := infoOf(t)
	if ti.encScalar {
		return 1, true
	}
	if ti.appender || ti.ptrAppender || ti.special != notSpecial || ti.text || ti.ptrText || ti.json || ti.ptrJSON {
		return 0, false
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		et := t.Elem()
		if et.Kind() == reflect.Uint8 && !elemEncodesItself(et) {
			return 1, true
		}
		if infoOf(et).encScalar {
			if p := itemsData(v); p != nil && packable(p, v.Len(), layoutOf(et)) {
				return 1, true
			}
			return v.Len() + 1, true
		}
		if v.Len() >= maxConvertNodes {
			// Zero-size items, as no other value holds so many: the
			// encoder refuses them without a walk.
			return 0, false
		}
		if !c.track {
			if c.budget -= v.Len(); c.budget < 0 {
				c.overBudget = true
				return 0, false
			}
		} else if t.Kind() == reflect.Slice && v.Len() > 0 && !leafItems(et) &&
			c.again(visitKey{ptr: v.Pointer(), len: v.Len(), typ: typeKey(t)}) {
			return 0, false
		}
		total := 1
		for i := range v.Len() {
			n, ok := c.count(v.Index(i), depth+1)
			if !ok || n > maxConvertNodes-total {
				return 0, false // past the bound: the encoder refuses it
			}
			total += n
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
			if fp := &ti.plans[i]; fp.encDirect {
				// The plan knows the shape: no type lookup.
				if fp.encOp != opNone {
					total += 2
					continue
				}
				if fp.encElemOp != opNone {
					fv := v.Field(f.Index[0])
					if p := itemsData(fv); p != nil && packable(p, fv.Len(), fp.encElemOp) {
						total += 2
					} else {
						total += 2 + fv.Len()
					}
					continue
				}
			}
			fv, ok := fieldByIndex(v, f.Index)
			if !ok || f.OmitEmpty && isEmptyValue(fv) || f.OmitZero && f.isZero(fv) {
				continue
			}
			n, ok := c.count(fv, depth+1)
			if !ok {
				return 0, false
			}
			total += 1 + n
		}
		return total, true
	}
	return 0, false
}

// reserveExact makes room for exactly n more nodes when the graph must
// grow. It reports whether it allocated (so the room is zeroed).
func (g *Graph) reserveExact(n int) bool {
	if cap(g.Nodes)-len(g.Nodes) >= n {
		return false
	}
	ns := make([]Node, len(g.Nodes), len(g.Nodes)+n)
	copy(ns, g.Nodes)
	g.Nodes = ns
	return true
}

// info is infoOf with a one-entry cache, as the decoder's.
func (e *encoder) info(t reflect.Type) *typeInfo {
	if t == e.lastType {
		return e.lastInfo
	}
	ti := infoOf(t)
	e.lastType, e.lastInfo = t, ti
	return ti
}

// planField appends the node of a struct field at p by its plan (fp has
// encDirect), reporting false when the plan does not take the value (the
// caller then takes the general path).
func (e *encoder) planField(fp *fieldPlan, p unsafe.Pointer, depth int) (NodeID, bool) {
	if e.hook != nil && (e.hooked(fp.typ) || fp.encElemOp != opNone && e.hooked(fp.elemType)) {
		return 0, false // the hook wants to see the field or its items
	}
	if fp.encOp != opNone {
		n, ok := scalarNode(p, fp.encOp)
		if !ok {
			return 0, false
		}
		return e.add(n), true
	}
	if fp.encElemOp == opNone {
		return 0, false
	}
	h := (*sliceHeader)(p)
	if h.len == 0 {
		return e.add(List()), true
	}
	if depth+2 > MaxConvertDepth {
		return 0, false
	}
	k := visitKey{ptr: uintptr(h.data), len: h.len, typ: typeKey(fp.typ)}
	if id, ok := e.done[k]; ok {
		return id, true
	}
	if fp.encElemOp == opStr {
		for _, s := range unsafe.Slice((*string)(h.data), h.len) {
			if !utf8.ValidString(s) {
				return 0, false // the general path's error
			}
		}
	}
	if e.room(h.len+1, fp.typ, KindList) != nil {
		return 0, false // the general path's error, unless packed
	}
	id := e.fillScalars(h.data, h.len, fp.encElemOp, KindList)
	e.share(k, id)
	return id, true
}

// share records id as the node of the reference value k.
func (e *encoder) share(k visitKey, id NodeID) {
	if e.done == nil {
		e.onPath = map[visitKey]struct{}{}
		e.done = map[visitKey]NodeID{}
	}
	e.done[k] = id
}

// sharedScalars encodes slice v (key k) of plain scalars, or returns the
// node of the same slice encoded before.
func (e *encoder) sharedScalars(v reflect.Value, k visitKey, depth int) (NodeID, error) {
	if id, ok := e.done[k]; ok {
		return id, nil
	}
	id, err := e.items(v, KindList, depth)
	if err != nil {
		return 0, err
	}
	e.share(k, id)
	return id, nil
}

// scalarNode returns the node of the plain scalar at p of layout op;
// false for a string that is not valid UTF-8 (the general path reports
// it).
func scalarNode(p unsafe.Pointer, op scalarOp) (Node, bool) {
	switch op {
	case opBool:
		return Bool(*(*bool)(p)), true
	case opI8:
		return Int(int64(*(*int8)(p))), true
	case opI16:
		return Int(int64(*(*int16)(p))), true
	case opI32:
		return Int(int64(*(*int32)(p))), true
	case opI64:
		return Int(*(*int64)(p)), true
	case opU8:
		return Int(int64(*(*uint8)(p))), true
	case opU16:
		return Int(int64(*(*uint16)(p))), true
	case opU32:
		return Int(int64(*(*uint32)(p))), true
	case opU64:
		u := *(*uint64)(p)
		if u <= math.MaxInt64 {
			return Int(int64(u)), true
		}
		return BigIntNode(new(big.Int).SetUint64(u)), true
	case opF32:
		return Float(float64(*(*float32)(p))), true
	case opF64:
		return Float(*(*float64)(p)), true
	case opStr:
		s := *(*string)(p)
		if !utf8.ValidString(s) {
			return Node{}, false
		}
		return Str(s), true
	}
	return Node{}, false
}

// fillScalars appends the n plain scalars of layout op at p (strings
// valid UTF-8) and a container of kind k over them.
func (e *encoder) fillScalars(p unsafe.Pointer, n int, op scalarOp, k Kind) NodeID {
	if nd, ok := packScalars(p, n, op, k); ok {
		return e.add(nd)
	}
	if e.g.reserve(n + 1) {
		e.zeroed = true
	}
	base := len(e.g.Nodes)
	nodes := e.g.Nodes
	refs := make([]NodeID, n)
	if op == opStr {
		for i, x := range unsafe.Slice((*string)(p), n) {
			nodes = append(nodes, Str(x))
			refs[i] = NodeID(base + i)
		}
		e.g.Nodes = nodes
		return e.add(Node{Kind: k}.WithRefs(refs))
	}
	out := nodes[base : base+n]
	if !e.zeroed {
		clear(out)
	}
	fillLayout(out, refs, base, p, n, op)
	e.g.Nodes = nodes[:base+n]
	return e.add(Node{Kind: k}.WithRefs(refs))
}

// fillLayout writes the nodes of the n non-string scalars of layout op at
// p into out (zeroed) and their ids into refs.
func fillLayout(out []Node, refs []NodeID, base int, p unsafe.Pointer, n int, op scalarOp) {
	switch op {
	case opBool:
		for i, x := range unsafe.Slice((*bool)(p), n) {
			nd := &out[i]
			nd.Kind = KindBool
			if x {
				nd.Num = 1
			}
			refs[i] = NodeID(base + i)
		}
	case opI8:
		fillInts(out, refs, base, unsafe.Slice((*int8)(p), n))
	case opI16:
		fillInts(out, refs, base, unsafe.Slice((*int16)(p), n))
	case opI32:
		fillInts(out, refs, base, unsafe.Slice((*int32)(p), n))
	case opI64:
		fillInts(out, refs, base, unsafe.Slice((*int64)(p), n))
	case opU8:
		fillInts(out, refs, base, unsafe.Slice((*uint8)(p), n))
	case opU16:
		fillInts(out, refs, base, unsafe.Slice((*uint16)(p), n))
	case opU32:
		fillInts(out, refs, base, unsafe.Slice((*uint32)(p), n))
	case opU64:
		fillUints(out, refs, base, unsafe.Slice((*uint64)(p), n))
	case opF32:
		fillFloats(out, refs, base, unsafe.Slice((*float32)(p), n))
	case opF64:
		fillFloats(out, refs, base, unsafe.Slice((*float64)(p), n))
	}
}

// scalarItems appends a list (of kind k) of the plain scalars of slice or
// array v, whose element type is et.
func (e *encoder) scalarItems(v reflect.Value, et reflect.Type, k Kind, depth int) (NodeID, error) {
	n := v.Len()
	if p := itemsData(v); p != nil {
		if nd, ok := packScalars(p, n, layoutOf(et), k); ok {
			return e.add(nd), nil
		}
	}
	if err := e.room(n+1, v.Type(), k); err != nil {
		return 0, err
	}
	if e.g.reserve(n + 1) {
		e.zeroed = true
	}
	fresh := e.zeroed
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
	// nodes, in one pass with their ids: no pointer is written, so no write
	// barrier runs.
	out := nodes[base : base+n]
	if !fresh && et.Kind() != reflect.String {
		clear(out) // storage past len may hold old nodes
	}
	op := layoutOf(et)
	done := op != opStr && op != opNone
	if done {
		fillLayout(out, refs, base, p, n, op)
	}
	if done {
		e.g.Nodes = nodes[:base+n]
		return e.add(Node{Kind: k}.WithRefs(refs)), nil
	}
	switch et.Kind() {
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
	// Any other scalar kind (none today): the general scalar path.
	for i := range refs {
		id, err := e.scalar(v.Index(i), et)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"]")
		}
		refs[i] = id
	}
	return e.add(Node{Kind: k}.WithRefs(refs)), nil
}

// itemsData returns the address of the first item of the non-empty
// slice or addressable array v, nil otherwise.
func itemsData(v reflect.Value) unsafe.Pointer {
	switch {
	case v.Len() == 0:
		return nil
	case v.Kind() == reflect.Slice:
		return v.UnsafePointer()
	case v.CanAddr():
		return v.Addr().UnsafePointer()
	}
	return nil
}

// packable reports whether the n plain scalars of layout op at p are
// held packed: integers that all fit in an int64 (Node.Ints; a uint64
// above math.MaxInt64 is a bigint node) or floats (Node.Floats), at least
// one and at most math.MaxUint32 of them.
func packable(p unsafe.Pointer, n int, op scalarOp) bool {
	if n == 0 || uint64(n) > math.MaxUint32 {
		return false
	}
	switch op {
	case opI8, opI16, opI32, opI64, opU8, opU16, opU32, opF32, opF64:
		return true
	case opU64:
		for _, x := range unsafe.Slice((*uint64)(p), n) {
			if x > math.MaxInt64 {
				return false
			}
		}
		return true
	}
	return false
}

// packScalars returns a node of kind k holding the n plain scalars of
// layout op at p as its packed items; false when they are not packable.
func packScalars(p unsafe.Pointer, n int, op scalarOp, k Kind) (Node, bool) {
	if !packable(p, n, op) {
		return Node{}, false
	}
	switch op {
	case opF64:
		// Cloned by append: the runtime does not zero what it copies over.
		return packedFloats(k, append([]float64(nil), unsafe.Slice((*float64)(p), n)...)), true
	case opF32:
		xs := make([]float64, n)
		for i, x := range unsafe.Slice((*float32)(p), n) {
			xs[i] = float64(x)
		}
		return packedFloats(k, xs), true
	}
	return packedInts(k, packInts(p, n, op)), true
}

// packInts returns the n packable integers of layout op at p as int64s.
func packInts(p unsafe.Pointer, n int, op scalarOp) []int64 {
	switch op {
	case opI64, opU64:
		// Cloned by append: the runtime does not zero what it copies over.
		return append([]int64(nil), unsafe.Slice((*int64)(p), n)...)
	case opI8:
		return widen(unsafe.Slice((*int8)(p), n))
	case opI16:
		return widen(unsafe.Slice((*int16)(p), n))
	case opI32:
		return widen(unsafe.Slice((*int32)(p), n))
	case opU8:
		return widen(unsafe.Slice((*uint8)(p), n))
	case opU16:
		return widen(unsafe.Slice((*uint16)(p), n))
	}
	return widen(unsafe.Slice((*uint32)(p), n))
}

func widen[T int8 | int16 | int32 | uint8 | uint16 | uint32](xs []T) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// fillInts writes int nodes for xs (integers that fit in int64) into
// out, the zeroed nodes base.., and their ids into refs.
func fillInts[T int | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32](out []Node, refs []NodeID, base int, xs []T) {
	out = out[:len(xs)]
	refs = refs[:len(xs)]
	for i, x := range xs {
		nd := &out[i]
		nd.Kind = KindInt
		nd.Num = uint64(int64(x))
		refs[i] = NodeID(base + i)
	}
}

// fillUints is fillInts for 64-bit unsigned integers: one above
// math.MaxInt64 becomes a bigint node, as the general path makes it.
func fillUints(out []Node, refs []NodeID, base int, xs []uint64) {
	out = out[:len(xs)]
	refs = refs[:len(xs)]
	for i, x := range xs {
		nd := &out[i]
		if x <= math.MaxInt64 {
			nd.Kind = KindInt
			nd.Num = x
		} else {
			*nd = BigIntNode(new(big.Int).SetUint64(x))
		}
		refs[i] = NodeID(base + i)
	}
}

// fillFloats writes float nodes for xs as fillInts does.
func fillFloats[T float32 | float64](out []Node, refs []NodeID, base int, xs []T) {
	out = out[:len(xs)]
	refs = refs[:len(xs)]
	for i, x := range xs {
		nd := &out[i]
		nd.Kind = KindFloat
		nd.Num = math.Float64bits(float64(x))
		refs[i] = NodeID(base + i)
	}
}

// stringMap appends a dict for a map with string keys and plain scalar
// values, its entries sorted by key.
func (e *encoder) stringMap(v reflect.Value, vt reflect.Type, depth int) (NodeID, error) {
	type kv struct {
		k string
		v reflect.Value
	}
	if err := e.room(2*v.Len()+1, v.Type(), KindDict); err != nil {
		return 0, err
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
	if e.g.reserve(2*len(entries) + 1) {
		e.zeroed = true
	}
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

// scalarOp says how a plain scalar of a Go type is laid out in memory,
// for the typed stores of the fast paths (a named type shares its
// underlying kind's).
type scalarOp uint8

const (
	opNone scalarOp = iota
	opBool
	opI8
	opI16
	opI32
	opI64
	opU8
	opU16
	opU32
	opU64
	opF32
	opF64
	opStr
)

// encScalarOf reports whether FromGo writes a t as a plain scalar, without
// reflection. Like scalarOpOf it looks up scalar types only.
func encScalarOf(t reflect.Type) bool {
	return isScalarKind(t.Kind()) && infoOf(t).encScalar
}

// scalarOpOf returns the layout of a plain scalar type t (opNone for any
// other type).
func scalarOpOf(t reflect.Type) scalarOp {
	if !isScalarKind(t.Kind()) {
		return opNone // only scalars have a layout; and see newFieldPlans
	}
	return infoOf(t).op
}

// layoutOf returns the layout of scalar type t.
func layoutOf(t reflect.Type) scalarOp {
	switch t.Kind() {
	case reflect.Bool:
		return opBool
	case reflect.Int8:
		return opI8
	case reflect.Int16:
		return opI16
	case reflect.Int32:
		return opI32
	case reflect.Int64:
		return opI64
	case reflect.Int:
		if t.Size() == 8 {
			return opI64
		}
		return opI32
	case reflect.Uint8:
		return opU8
	case reflect.Uint16:
		return opU16
	case reflect.Uint32:
		return opU32
	case reflect.Uint64:
		return opU64
	case reflect.Uint, reflect.Uintptr:
		if t.Size() == 8 {
			return opU64
		}
		return opU32
	case reflect.Float32:
		return opF32
	case reflect.Float64:
		return opF64
	case reflect.String:
		return opStr
	}
	return opNone
}

// storeScalar stores node nd at p, a plain scalar of layout op, when nd
// fits it as is: the kind setScalar takes without complaint and a value in
// range. It reports false (having stored nothing) otherwise, so that the
// caller takes the general path, with its error.
func storeScalar(nd *Node, p unsafe.Pointer, op scalarOp) bool {
	switch op {
	case opBool:
		if nd.Kind == KindBool {
			*(*bool)(p) = nd.Num != 0
			return true
		}
	case opI8:
		return storeSigned((*int8)(p), nd)
	case opI16:
		return storeSigned((*int16)(p), nd)
	case opI32:
		return storeSigned((*int32)(p), nd)
	case opI64:
		return storeSigned((*int64)(p), nd)
	case opU8:
		return storeUnsigned((*uint8)(p), nd)
	case opU16:
		return storeUnsigned((*uint16)(p), nd)
	case opU32:
		return storeUnsigned((*uint32)(p), nd)
	case opU64:
		return storeUnsigned((*uint64)(p), nd)
	case opF32:
		return storeFloat32((*float32)(p), nd)
	case opF64:
		return storeFloat64((*float64)(p), nd)
	case opStr:
		if nd.Kind == KindStr || nd.Kind == KindPath {
			*(*string)(p) = nd.Text()
			return true
		}
	}
	return false
}

func storeSigned[T int8 | int16 | int32 | int64](x *T, nd *Node) bool {
	if nd.Kind == KindInt && int64(T(int64(nd.Num))) == int64(nd.Num) {
		*x = T(int64(nd.Num))
		return true
	}
	return false
}

func storeUnsigned[T uint8 | uint16 | uint32 | uint64](x *T, nd *Node) bool {
	if nd.Kind == KindInt && int64(nd.Num) >= 0 && uint64(T(nd.Num)) == nd.Num {
		*x = T(nd.Num)
		return true
	}
	return false
}

func storeFloat64(x *float64, nd *Node) bool {
	switch nd.Kind {
	case KindFloat:
		*x = math.Float64frombits(nd.Num)
		return true
	case KindInt:
		*x = float64(int64(nd.Num))
		return true
	}
	return false
}

// storeFloat32 stores a float that fits a float32 (or an infinity or NaN,
// which setScalar lets through) or any int.
func storeFloat32(x *float32, nd *Node) bool {
	switch nd.Kind {
	case KindFloat:
		f := math.Float64frombits(nd.Num)
		if math.Abs(f) <= math.MaxFloat32 || math.IsInf(f, 0) || math.IsNaN(f) {
			*x = float32(f)
			return true
		}
	case KindInt:
		*x = float32(float64(int64(nd.Num)))
		return true
	}
	return false
}

// scalarItems decodes the items refs of node id into s, a slice or an
// addressable array of plain scalars of type et.
func (d *decoder) scalarItems(refs []NodeID, id NodeID, s reflect.Value, et reflect.Type, depth int) error {
	return d.scalarItemsOp(refs, id, s, d.info(et).op, depth)
}

// scalarItemsOp is scalarItems for items of layout op.
func (d *decoder) scalarItemsOp(refs []NodeID, id NodeID, s reflect.Value, op scalarOp, depth int) error {
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
	// Items a typed loop does not take (a malformed reference, another
	// kind, a value out of range) go to the general path, one by one.
	slow := func(i int) error {
		if err := d.decode(refs[i], id, s.Index(i), depth+1); err != nil {
			return atPath(err, "["+strconv.Itoa(i)+"]")
		}
		return nil
	}
	nodes := d.g.Nodes
	switch op {
	case opBool:
		xs := unsafe.Slice((*bool)(p), n)
		for i, r := range refs {
			if int(r) < len(nodes) && r < id && nodes[r].Kind == KindBool {
				xs[i] = nodes[r].Num != 0
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	case opI8:
		return signedItems(unsafe.Slice((*int8)(p), n), refs, nodes, id, slow)
	case opI16:
		return signedItems(unsafe.Slice((*int16)(p), n), refs, nodes, id, slow)
	case opI32:
		return signedItems(unsafe.Slice((*int32)(p), n), refs, nodes, id, slow)
	case opI64:
		return signedItems(unsafe.Slice((*int64)(p), n), refs, nodes, id, slow)
	case opU8:
		return unsignedItems(unsafe.Slice((*uint8)(p), n), refs, nodes, id, slow)
	case opU16:
		return unsignedItems(unsafe.Slice((*uint16)(p), n), refs, nodes, id, slow)
	case opU32:
		return unsignedItems(unsafe.Slice((*uint32)(p), n), refs, nodes, id, slow)
	case opU64:
		return unsignedItems(unsafe.Slice((*uint64)(p), n), refs, nodes, id, slow)
	case opF32:
		xs := unsafe.Slice((*float32)(p), n)
		for i, r := range refs {
			if !(int(r) < len(nodes) && r < id && storeFloat32(&xs[i], &nodes[r])) {
				if err := slow(i); err != nil {
					return err
				}
			}
		}
		return nil
	case opF64:
		xs := unsafe.Slice((*float64)(p), n)
		for i, r := range refs {
			if int(r) >= len(nodes) || r >= id {
				if err := slow(i); err != nil {
					return err
				}
				continue
			}
			switch nd := &nodes[r]; nd.Kind {
			case KindFloat:
				xs[i] = math.Float64frombits(nd.Num)
			case KindInt:
				xs[i] = float64(int64(nd.Num))
			default:
				if err := slow(i); err != nil {
					return err
				}
			}
		}
		return nil
	case opStr:
		xs := unsafe.Slice((*string)(p), n)
		for i, r := range refs {
			if int(r) < len(nodes) && r < id && (nodes[r].Kind == KindStr || nodes[r].Kind == KindPath) {
				xs[i] = nodes[r].Text()
			} else if err := slow(i); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range refs {
		if err := slow(i); err != nil {
			return err
		}
	}
	return nil
}

// signedItems is the typed loop of scalarItems for signed integers: an
// item that is not a well-formed reference (inside the graph, below the
// container id) to an int in range goes to slow.
func signedItems[T int8 | int16 | int32 | int64](xs []T, refs []NodeID, nodes []Node, id NodeID, slow func(int) error) error {
	xs = xs[:len(refs)]
	for i, r := range refs {
		if int(r) < len(nodes) && r < id {
			if nd := &nodes[r]; nd.Kind == KindInt && int64(T(int64(nd.Num))) == int64(nd.Num) {
				xs[i] = T(int64(nd.Num))
				continue
			}
		}
		if err := slow(i); err != nil {
			return err
		}
	}
	return nil
}

// unsignedItems is signedItems for unsigned integers.
func unsignedItems[T uint8 | uint16 | uint32 | uint64](xs []T, refs []NodeID, nodes []Node, id NodeID, slow func(int) error) error {
	xs = xs[:len(refs)]
	for i, r := range refs {
		if int(r) < len(nodes) && r < id {
			if nd := &nodes[r]; nd.Kind == KindInt && int64(nd.Num) >= 0 && uint64(T(nd.Num)) == nd.Num {
				xs[i] = T(nd.Num)
				continue
			}
		}
		if err := slow(i); err != nil {
			return err
		}
	}
	return nil
}

// info is infoOf with a one-entry cache: a decode meets the same few types
// over and over (the items of a list of structs).
func (d *decoder) info(t reflect.Type) *typeInfo {
	if t == d.lastType {
		return d.lastInfo
	}
	ti := infoOf(t)
	d.lastType, d.lastInfo = t, ti
	return ti
}

// ---------------------------------------------------------------------------
// Struct plans (graph -> Go)

// fieldPlan is how ToGo stores one struct field without reflection, when
// the field is a field of the struct itself (not promoted through an
// embedded struct) and the node fits.
type fieldPlan struct {
	direct bool     // the field is at offset in the struct itself
	offset uintptr  // its offset
	op     scalarOp // a plain scalar field: its layout
	elemOp scalarOp // a slice of plain scalars (op is opNone): the items' layout

	// For FromGo: encDirect when the field is direct and without omit
	// options; encOp and encElemOp as op and elemOp for the encoder's
	// plain scalars (encElemOp is never a byte: a []byte is bytes); name
	// the node of the field's name.
	encDirect        bool
	encOp, encElemOp scalarOp
	elemType, typ    reflect.Type
	name             Node
}

func newFieldPlans(t reflect.Type, fields []Field) []fieldPlan {
	ps := make([]fieldPlan, len(fields))
	for i := range fields {
		f := &fields[i]
		if len(f.Index) != 1 {
			continue
		}
		ps[i].direct = true
		ps[i].offset = t.Field(f.Index[0]).Offset
		ps[i].typ = f.Type
		if f.Type.Kind() == reflect.Slice {
			ps[i].elemType = f.Type.Elem()
		}
		ps[i].name = Str(f.Name)
		ps[i].encDirect = !f.OmitEmpty && !f.OmitZero
		// Only scalar and slice types are looked up here: the info of a
		// struct type builds its own plans, so looking one up would recurse
		// forever on a type that holds itself (type Node struct{ Children
		// []Node }); see encScalarOf and scalarOpOf.
		if encScalarOf(f.Type) {
			ps[i].encOp = layoutOf(f.Type)
		} else if f.Type.Kind() == reflect.Slice {
			fti, et := infoOf(f.Type), f.Type.Elem()
			if !fti.appender && !fti.ptrAppender && fti.special == notSpecial &&
				et.Kind() != reflect.Uint8 && encScalarOf(et) {
				ps[i].encElemOp = layoutOf(et)
			}
		}
		ps[i].op = scalarOpOf(f.Type)
		if ps[i].op == opNone && f.Type.Kind() == reflect.Slice {
			if ti := infoOf(f.Type); !ti.decoder && ti.special == notSpecial {
				ps[i].elemOp = scalarOpOf(f.Type.Elem())
			}
		}
	}
	return ps
}

// makeScalarSlice returns a new slice of n items of layout op, as a slice
// of any type of that layout (the element types of one layout hold the
// same pointers, none but a string's).
func makeScalarSlice(op scalarOp, n int) (p unsafe.Pointer) {
	switch op {
	case opBool, opI8, opU8:
		return unsafe.Pointer(unsafe.SliceData(make([]uint8, n)))
	case opI16, opU16:
		return unsafe.Pointer(unsafe.SliceData(make([]uint16, n)))
	case opI32, opU32, opF32:
		return unsafe.Pointer(unsafe.SliceData(make([]uint32, n)))
	case opI64, opU64, opF64:
		return unsafe.Pointer(unsafe.SliceData(make([]uint64, n)))
	case opStr:
		return unsafe.Pointer(unsafe.SliceData(make([]string, n)))
	}
	panic("value: makeScalarSlice of a non-scalar layout")
}

// sliceHeader is the layout of any slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// planField stores node val (a child of id) into the field fi of struct
// v (settable) by its plan, reporting false when the plan does not apply
// (the caller then takes the general path). An error is the general
// path's for the items of a slice.
func (d *decoder) planField(ti *typeInfo, fi int, v reflect.Value, val, id NodeID, depth int) (bool, error) {
	fp := &ti.plans[fi]
	nodes := d.g.Nodes
	if !fp.direct || depth+1 > MaxConvertDepth || int(val) >= len(nodes) || val >= id {
		return false, nil
	}
	if d.hook != nil && (d.hooked(fp.typ) || fp.elemOp != opNone && d.hooked(fp.elemType)) {
		return false, nil // the hook wants to see the field or its items
	}
	nd := &nodes[val]
	p := unsafe.Add(v.Addr().UnsafePointer(), fp.offset)
	if fp.op != opNone {
		return storeScalar(nd, p, fp.op), nil
	}
	if fp.elemOp == opNone || !isSequence(nd.Kind) || depth+2 > MaxConvertDepth || d.again(val) {
		return false, nil // a shared list takes the general path, which remembers it (decoder.shared)
	}
	refs := nd.Refs()
	h := (*sliceHeader)(p)
	old := *h
	*h = sliceHeader{makeScalarSlice(fp.elemOp, len(refs)), len(refs), len(refs)}
	if err := d.scalarItemsOp(refs, val, v.Field(ti.fields[fi].Index[0]), fp.elemOp, depth+1); err != nil {
		*h = old // as the general path, which sets the field on success only
		return true, atPath(err, "."+ti.fields[fi].GoName)
	}
	return true, nil
}
