package value

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// ---------------------------------------------------------------------------
// graph -> Go

// ToAny converts node id of g into a natural Go value:
//
//	None                  nil
//	bool, int             bool, int64 (*big.Int when it does not fit)
//	float, str, bytes     float64, string, []byte
//	list                  []any
//	tuple, set, frozenset TupleValue, SetValue, FrozenSetValue
//	dict                  map[string]any when every key is a str, else DictValue
//	named tuple           NamedTupleValue
//	date, time            Date, Time
//	datetime              time.Time when aware (zone time.UTC for
//	                        timezone.utc, else time.FixedZone), DateTime when naive
//	timedelta             time.Duration (an error when it does not fit)
//	timezone, exception   TimeZone, Exception
//	type, class instance  ClassValue, ObjectValue
//	function, builtin     Function, BuiltinFunctionValue
//	pathlib.Path, file    PathValue, FileHandle
//	Ellipsis, ...         EllipsisValue, NotImplementedValue
//	repr, cycle           ReprValue, CycleValue
//
// A node referenced twice yields the same Go value twice (the same slice or
// map), as Python has one object.
func ToAny(g *Graph, id NodeID) (any, error) {
	var d Decoder
	return d.DecodeAny(g, id)
}

// ToGo decodes node id of g into the value dst points to; dst must be a
// non-nil pointer. It converts where Python would, checking ranges: an int
// fits any Go integer type that can hold it, a bigint only *big.Int,
// big.Int, uint64 (up to 2**64-1) or a float; an int converts to a float;
// a float never converts to an integer type, not even 1.0, and a bool,
// though Python's bool is an int, converts to neither (nor an int to a
// bool), as in encoding/json, so that True is never taken for 1;
// list, tuple, set and frozenset decode into slices or (of exactly the right
// length) arrays; dict, named tuple and class instance decode into maps and
// structs (fields matched by tag or name, exactly, then case-insensitively;
// unknown keys are ignored; a map whose key type [KeyConverts] refuses
// and that holds a pointer or a channel takes only an empty dict, as
// FromGo converts only an empty one, unless a [Decoder]'s hook is
// consulted for that key type (a struct key type takes a named tuple or
// an instance key, which FromGo does not give back); into a map[any] a
// tuple key of up to 32 items becomes an [N]any of its items, so decoded
// too, and a bytes key of up to 32 bytes an [N]byte, the Go keys FromGo
// writes as that tuple and those bytes); datetime and date decode into time.Time (a
// naive datetime and a date are taken as UTC), timedelta into time.Duration
// (overflow checked); a str or a pathlib.Path decodes into a string, a str
// into a UUID (parsed), a timezone into a *time.Location; None decodes into
// pointers, interfaces, slices and maps as nil and is an error for anything
// else. Any value that has a JSON form decodes into a json.RawMessage as
// the text [AppendJSON] writes, an int or a float into a json.Number as
// that text (a str spelling a JSON number as the str). Each kind also
// decodes into its own type of the [ToAny] table, and an empty interface
// destination receives what ToAny returns. A type
// implementing [GraphDecoder] decodes itself. A str decodes into a type
// with no conversion of its own whose pointer implements
// encoding.TextUnmarshaler through UnmarshalText (the way back of
// FromGo's encoding.TextMarshaler rule; other kinds decode into it as into
// its underlying type). Any value decodes into a type with no conversion
// of its own whose pointer implements json.Unmarshaler (and not
// encoding.TextUnmarshaler) through UnmarshalJSON, given the text
// [AppendJSON] writes (the way back of FromGo's json.Marshaler rule;
// None is JSON's null, and a value with no JSON form is an error). A
// big.Float or big.Rat
// destination, for which Python has no type, is an error.
//
// A struct destination keeps the fields the value does not set (fill a
// struct with defaults, then decode into it), and so does each struct
// item of an array, decoded in place; a slice or map destination is
// replaced by a new one (where encoding/json keeps a map's other entries
// and decodes into a slice's existing items); a non-nil pointer is
// decoded through.
//
// A container the graph shares (one Python object referenced from several
// places) is converted at most twice per destination type: from its third
// reference on, the destination gets the same slice, map or pointer as the
// second (a shallow copy of an array or struct), so that conversion takes
// time linear in the graph even where the shared parts expand
// exponentially (x = [x, x], forty times over). A destination that
// already holds what a conversion keeps (a struct or array that is not
// zero, a non-nil pointer) is converted into at every reference instead.
func ToGo(g *Graph, id NodeID, dst any) error {
	var d Decoder
	return d.Decode(g, id, dst)
}

// DecodeHook is consulted by a [Decoder] for a node before the default
// rules of [ToGo] and [ToAny]. t is the Go type wanted (the empty interface
// for ToAny and interface destinations). It returns handled false to leave
// the node to those rules, or a value assignable to t.
//
// A Decoder calls it on the converting goroutine; a Decoder used from
// several goroutines at once calls it concurrently.
type DecodeHook func(s *DecodeState, id NodeID, t reflect.Type) (v reflect.Value, handled bool, err error)

// Decoder converts graph nodes into Go values like [ToGo] and [ToAny], with
// a hook consulted at every node. The zero Decoder is ToGo and ToAny. A
// Decoder is plain configuration, safe for concurrent use when its hooks
// are.
type Decoder struct {
	// Hook, when set, is consulted for every node decoded.
	Hook DecodeHook
	// HookTypes, when set, says for which wanted Go types the hook is
	// consulted. A conversion asks it at most once per type, so containers
	// of types it refuses keep their fast paths.
	HookTypes func(reflect.Type) bool
}

// Decode decodes node id of g into the value dst points to, like [ToGo].
// A nil g reads as an empty graph (every id is outside it).
func (dec *Decoder) Decode(g *Graph, id NodeID, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &ConversionError{GoType: reflect.TypeOf(dst), Reason: "the destination must be a non-nil pointer"}
	}
	if g == nil {
		g = new(Graph) // holds no node: id is outside it
	}
	if dec.Hook == nil && int(id) < len(g.Nodes) && g.Nodes[id].Packed() {
		d := decoder{g: g}
		if d.packedRoot(&g.Nodes[id], rv.Elem()) {
			return nil
		}
	}
	g, id = g.Unpacked(id)
	d := decoder{g: g, hook: dec.Hook, hookTypes: dec.HookTypes}
	return finishErr(d.decode(id, maxParent, rv.Elem(), 0))
}

// DecodeAny converts node id of g into a natural Go value, like [ToAny].
// A nil g reads as an empty graph (every id is outside it).
func (dec *Decoder) DecodeAny(g *Graph, id NodeID) (any, error) {
	if g == nil {
		g = new(Graph)
	}
	g, id = g.Unpacked(id)
	d := decoder{g: g, hook: dec.Hook, hookTypes: dec.HookTypes}
	v, err := d.any(id, maxParent, 0)
	return v, finishErr(err)
}

// DecodeState is one running [Decoder] conversion, as a hook sees it. It is
// only valid during the hook's call.
//
// It belongs to one conversion and is not safe for concurrent use.
type DecodeState struct {
	g *Graph
}

// Graph returns the graph being decoded.
func (s *DecodeState) Graph() *Graph { return s.g }

// hooked reports whether the hook wants to see destinations of type t.
func (d *decoder) hooked(t reflect.Type) bool {
	if d.hookTypes == nil {
		return true
	}
	return d.hookSeen.ask(t, d.hookTypes)
}

// callHook asks the hook about node id for a value of type t.
func (d *decoder) callHook(n *Node, id NodeID, t reflect.Type) (reflect.Value, bool, error) {
	if d.state == nil {
		d.state = &DecodeState{g: d.g} // made on the first call
	}
	v, ok, err := d.hook(d.state, id, t)
	if err != nil {
		return reflect.Value{}, true, callerErr(err, n.Kind, t, false)
	}
	if ok && (!v.IsValid() || !v.Type().AssignableTo(t)) {
		return reflect.Value{}, true, toGoErr(n.Kind, t, "the decode hook returned a value of another type")
	}
	return v, ok, nil
}

// maxParent is the "parent" of a root: every valid id is below it.
const maxParent = NodeID(math.MaxUint32)

type decoder struct {
	g    *Graph
	memo map[NodeID]any

	hook      DecodeHook
	hookTypes func(reflect.Type) bool
	hookSeen  typeAnswers
	state     *DecodeState
	slow      bool // no fast paths (the reference for the property tests)

	lastType reflect.Type // the info cache
	lastInfo *typeInfo

	// seen marks the container nodes converted into a typed destination
	// so far (a bit a node); typed memoizes the conversion of a node met a
	// second time, so that a value whose shared parts expand
	// exponentially (x = [x, x], forty times over) converts in time linear
	// in the graph, as ToAny does (see shared).
	seen  []uint64
	typed map[typedNode]reflect.Value
	// first is the first container converted, the only one until a
	// second calls for seen (a lone list of scalars allocates no bits).
	first    NodeID
	anyFirst bool
}

// typedNode keys a memoized conversion: a node into a Go type.
type typedNode struct {
	id NodeID
	t  reflect.Type
}

func toGoErr(k Kind, t reflect.Type, reason string) error {
	return &ConversionError{Kind: k, GoType: t, Reason: reason}
}

// node returns the node id, checking that it exists and lies below its
// parent (so that a malformed graph cannot make decoding loop).
func (d *decoder) node(id, parent NodeID, t reflect.Type, depth int) (*Node, error) {
	if int(id) >= len(d.g.Nodes) {
		return nil, toGoErr(KindInvalid, t, fmt.Sprintf("node %d is outside the graph", id))
	}
	if id >= parent {
		return nil, toGoErr(KindInvalid, t, fmt.Sprintf("node %d is not below its parent %d", id, parent))
	}
	n := &d.g.Nodes[id]
	if depth > MaxConvertDepth {
		return nil, toGoErr(n.Kind, t, fmt.Sprintf("nesting exceeds %d levels", MaxConvertDepth))
	}
	return n, nil
}

// maxKeyItems bounds the items of the Go arrays keyAny makes of one key,
// nested ones included: each length is an array type of its own, which
// Go keeps for good, and a Go map hashes a key item by item, so a tuple
// that holds itself many times over (x = (x, x), forty times) would take
// exponential time to hash.
const maxKeyItems = 32

// keyAny decodes dict key id for a map whose key type is the empty
// interface: as any does, but a tuple becomes an [N]any of its items
// (each decoded so too) and bytes an [N]byte, Go values a map can hold
// (a TupleValue or []byte cannot be a key), which FromGo writes back as
// the same tuple and bytes. budget is what is left of maxKeyItems; past
// it, the tuple is a TupleValue, which the caller refuses as before.
func (d *decoder) keyAny(id, parent NodeID, depth int, budget *int) (any, error) {
	n, err := d.node(id, parent, anyType, depth)
	if err != nil {
		return nil, err
	}
	if d.hook != nil && d.hooked(anyType) {
		return d.any(id, parent, depth)
	}
	switch {
	case n.Kind == KindTuple && len(n.Refs()) <= *budget:
		*budget -= len(n.Refs())
		arr := reflect.New(reflect.ArrayOf(len(n.Refs()), anyType)).Elem()
		for i, r := range n.Refs() {
			x, err := d.keyAny(r, id, depth+1, budget)
			if err != nil {
				return nil, atPath(err, "["+strconv.Itoa(i)+"]")
			}
			if x != nil {
				arr.Index(i).Set(reflect.ValueOf(x))
			}
		}
		return arr.Interface(), nil
	case n.Kind == KindBytes && len(n.Bytes()) <= *budget:
		*budget -= len(n.Bytes())
		arr := reflect.New(reflect.ArrayOf(len(n.Bytes()), reflect.TypeFor[byte]())).Elem()
		reflect.Copy(arr, reflect.ValueOf(n.Bytes()))
		return arr.Interface(), nil
	}
	return d.any(id, parent, depth)
}

func (d *decoder) any(id, parent NodeID, depth int) (any, error) {
	n, err := d.node(id, parent, anyType, depth)
	if err != nil {
		return nil, err
	}
	if d.hook != nil && d.hooked(anyType) {
		if v, ok, err := d.callHook(n, id, anyType); err != nil {
			return nil, err
		} else if ok {
			return v.Interface(), nil
		}
	}
	if n.Kind.IsContainer() {
		if v, ok := d.memo[id]; ok {
			return v, nil
		}
	}
	v, err := d.anyOf(n, id, depth)
	if err != nil {
		return nil, err
	}
	if n.Kind.IsContainer() {
		if d.memo == nil {
			d.memo = map[NodeID]any{}
		}
		d.memo[id] = v
	}
	return v, nil
}

func (d *decoder) items(n *Node, id NodeID, depth int) ([]any, error) {
	out := make([]any, len(n.Refs()))
	for i, r := range n.Refs() {
		v, err := d.any(r, id, depth+1)
		if err != nil {
			return nil, atPath(err, "["+strconv.Itoa(i)+"]")
		}
		out[i] = v
	}
	return out, nil
}

func missingPayload(n *Node) error {
	return toGoErr(n.Kind, anyType, "the node has no payload")
}

func (d *decoder) anyOf(n *Node, id NodeID, depth int) (any, error) {
	switch n.Kind {
	case KindNone:
		return nil, nil
	case KindEllipsis:
		return EllipsisValue, nil
	case KindNotImplemented:
		return NotImplementedValue, nil
	case KindBool:
		return n.Num != 0, nil
	case KindInt:
		return n.Int(), nil
	case KindBigInt:
		b := n.BigInt()
		if b == nil {
			return nil, missingPayload(n)
		}
		return new(big.Int).Set(b), nil
	case KindFloat:
		return n.Float(), nil
	case KindStr:
		return n.Text(), nil
	case KindBytes:
		b := n.Bytes()
		if b == nil {
			return nil, missingPayload(n)
		}
		return slices.Clone(b), nil
	case KindList:
		return d.items(n, id, depth)
	case KindTuple:
		v, err := d.items(n, id, depth)
		return TupleValue(v), err
	case KindSet:
		v, err := d.items(n, id, depth)
		return SetValue(v), err
	case KindFrozenSet:
		v, err := d.items(n, id, depth)
		return FrozenSetValue(v), err
	case KindDict:
		return d.dict(n, id, depth)
	case KindNamedTuple:
		nt, ok := n.Ext().(*NamedTuple)
		if !ok {
			return nil, missingPayload(n)
		}
		v, err := d.items(n, id, depth)
		if err != nil {
			return nil, err
		}
		return NamedTupleValue{TypeName: nt.TypeName, Fields: slices.Clone(nt.FieldNames), Values: v}, nil
	case KindDate:
		x, ok := n.Ext().(*Date)
		if !ok {
			return nil, missingPayload(n)
		}
		return *x, nil
	case KindTime:
		x, ok := n.Ext().(*Time)
		if !ok {
			return nil, missingPayload(n)
		}
		c := *x
		c.Offset, c.TZName = clonePtr(x.Offset), clonePtr(x.TZName)
		return c, nil
	case KindDateTime:
		x, ok := n.Ext().(*DateTime)
		if !ok {
			return nil, missingPayload(n)
		}
		if x.Offset == nil {
			return *x, nil
		}
		return awareTime(x), nil
	case KindTimeDelta:
		x, ok := n.Ext().(*TimeDelta)
		if !ok {
			return nil, missingPayload(n)
		}
		dur, ok := timeDeltaDuration(x)
		if !ok {
			return nil, toGoErr(n.Kind, durationType, "the duration overflows time.Duration")
		}
		return dur, nil
	case KindTimeZone:
		x, ok := n.Ext().(*TimeZone)
		if !ok {
			return nil, missingPayload(n)
		}
		return TimeZone{Offset: x.Offset, Name: clonePtr(x.Name)}, nil
	case KindException:
		x, ok := n.Ext().(*Exception)
		if !ok {
			return nil, missingPayload(n)
		}
		return Exception{Type: x.Type, Arg: clonePtr(x.Arg)}, nil
	case KindType:
		return d.class(n, id, depth)
	case KindClassInstance:
		ci, ok := n.Ext().(*ClassInstance)
		if !ok {
			return nil, missingPayload(n)
		}
		cn, err := d.node(ci.Class, id, anyType, depth+1)
		if err != nil {
			return nil, err
		}
		if cn.Kind != KindType {
			return nil, toGoErr(n.Kind, anyType, "the class of the instance is not a type node")
		}
		c, err := d.class(cn, ci.Class, depth+1)
		if err != nil {
			return nil, err
		}
		attrs, err := d.attrs(ci.Attrs, id, depth)
		if err != nil {
			return nil, err
		}
		return ObjectValue{Class: c, InstanceID: ci.InstanceID, Attrs: attrs}, nil
	case KindFunction:
		x, ok := n.Ext().(*Function)
		if !ok {
			return nil, missingPayload(n)
		}
		return Function{Name: x.Name, Docstring: clonePtr(x.Docstring)}, nil
	case KindBuiltinFunction:
		return BuiltinFunctionValue(n.Text()), nil
	case KindPath:
		return PathValue(n.Text()), nil
	case KindFileHandle:
		x, ok := n.Ext().(*FileHandle)
		if !ok {
			return nil, missingPayload(n)
		}
		return *x, nil
	case KindRepr:
		return ReprValue(n.Text()), nil
	case KindCycle:
		return CycleValue(n.Text()), nil
	}
	return nil, toGoErr(n.Kind, anyType, "unknown node kind")
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func (d *decoder) dict(n *Node, id NodeID, depth int) (any, error) {
	allStr := true
	for i := 0; i+1 < len(n.Refs()); i += 2 {
		if k := n.Refs()[i]; int(k) >= len(d.g.Nodes) || d.g.Nodes[k].Kind != KindStr {
			allStr = false
			break
		}
	}
	if allStr {
		m := make(map[string]any, len(n.Refs())/2)
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			if _, err := d.node(n.Refs()[i], id, anyType, depth+1); err != nil {
				return nil, err
			}
			k := d.g.Nodes[n.Refs()[i]].Text()
			v, err := d.any(n.Refs()[i+1], id, depth+1)
			if err != nil {
				return nil, atPath(err, "["+strconv.Quote(k)+"]")
			}
			m[k] = v
		}
		return m, nil
	}
	out := make(DictValue, 0, len(n.Refs())/2)
	for i := 0; i+1 < len(n.Refs()); i += 2 {
		k, err := d.any(n.Refs()[i], id, depth+1)
		if err != nil {
			return nil, atPath(err, "[key "+strconv.Itoa(i/2)+"]")
		}
		v, err := d.any(n.Refs()[i+1], id, depth+1)
		if err != nil {
			return nil, atPath(err, "["+strconv.Itoa(i/2)+"]")
		}
		out = append(out, KV{k, v})
	}
	return out, nil
}

func (d *decoder) attrs(ps []Pair, id NodeID, depth int) ([]Attr, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]Attr, len(ps))
	for i, p := range ps {
		kn, err := d.node(p.Key, id, anyType, depth+1)
		if err != nil {
			return nil, err
		}
		if kn.Kind != KindStr {
			return nil, toGoErr(kn.Kind, anyType, "an attribute name must be a str")
		}
		v, err := d.any(p.Value, id, depth+1)
		if err != nil {
			return nil, atPath(err, "."+kn.Text())
		}
		out[i] = Attr{Name: kn.Text(), Value: v}
	}
	return out, nil
}

func (d *decoder) class(n *Node, id NodeID, depth int) (ClassValue, error) {
	t, ok := n.Ext().(*Type)
	if !ok {
		return ClassValue{}, missingPayload(n)
	}
	attrs, err := d.attrs(t.Attrs, id, depth)
	if err != nil {
		return ClassValue{}, err
	}
	return ClassValue{Name: t.Name, ID: t.ID, Origin: t.Origin, IsDataclass: t.IsDataclass, Attrs: attrs}, nil
}

func awareTime(x *DateTime) time.Time {
	loc := time.UTC
	if *x.Offset != 0 || x.TZName != nil {
		name := ""
		if x.TZName != nil {
			name = *x.TZName
		}
		loc = time.FixedZone(name, int(*x.Offset))
	}
	return time.Date(int(x.Year), time.Month(x.Month), int(x.Day), int(x.Hour), int(x.Minute),
		int(x.Second), int(x.Microsecond)*1000, loc)
}

var (
	bigMinDuration = big.NewInt(math.MinInt64)
	bigMaxDuration = big.NewInt(math.MaxInt64)
)

// timeDeltaDuration converts a timedelta to nanoseconds, reporting whether
// it fits a time.Duration.
func timeDeltaDuration(x *TimeDelta) (time.Duration, bool) {
	us := new(big.Int).Mul(big.NewInt(int64(x.Days)), big.NewInt(86_400_000_000))
	us.Add(us, big.NewInt(int64(x.Seconds)*1_000_000+int64(x.Microseconds)))
	ns := us.Mul(us, big.NewInt(1000))
	if ns.Cmp(bigMinDuration) < 0 || ns.Cmp(bigMaxDuration) > 0 {
		return 0, false
	}
	return time.Duration(ns.Int64()), true
}

// decode stores node id (a child of parent) into v, which is settable.
func (d *decoder) decode(id, parent NodeID, v reflect.Value, depth int) error {
	t := v.Type()
	n, err := d.node(id, parent, t, depth)
	if err != nil {
		return err
	}
	if d.hook != nil && d.hooked(t) {
		if hv, ok, err := d.callHook(n, id, t); err != nil {
			return err
		} else if ok {
			v.Set(hv)
			return nil
		}
	}
	if n.Kind.IsContainer() {
		switch t.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Struct, reflect.Array:
			return d.shared(n, id, parent, v, depth)
		}
	}
	return d.decodeNode(n, id, parent, v, depth)
}

// again marks container node id as converted into a typed destination
// and reports whether it was already.
func (d *decoder) again(id NodeID) bool {
	if d.seen == nil {
		switch {
		case !d.anyFirst:
			d.first, d.anyFirst = id, true
			return false
		case id == d.first:
			return true
		}
		d.seen = make([]uint64, (len(d.g.Nodes)+63)/64)
		d.seen[d.first/64] |= uint64(1) << (d.first % 64)
	}
	w, b := id/64, uint64(1)<<(id%64)
	if d.seen[w]&b != 0 {
		return true
	}
	d.seen[w] |= b
	return false
}

// marked reports whether container node id has been converted into a
// typed destination (see again).
func (d *decoder) marked(id NodeID) bool {
	if d.seen == nil {
		return d.anyFirst && d.first == id
	}
	return d.seen[id/64]&(uint64(1)<<(id%64)) != 0
}

// shared converts container node n into v. A node met a second time (the
// graph shares it) is converted once more and remembered by destination
// type; from the third time on v gets a copy of that conversion: the same
// slice, map or pointer (as Python has one object), or a shallow copy of
// an array or a struct. Every node is thus converted at most twice per
// type into fresh destinations. A destination that already holds
// something the conversion keeps (a struct or an array that is not zero,
// a non-nil pointer, which is decoded through) is converted into, never
// remembered nor replaced: the caller's values are its own, bounded by
// its own Go data, not by the graph.
func (d *decoder) shared(n *Node, id, parent NodeID, v reflect.Value, depth int) error {
	t := v.Type()
	var met bool
	if t.Kind() == reflect.Pointer {
		met = d.marked(id) // its element marks the node
	} else {
		met = d.again(id)
	}
	if !met || !d.replaceable(v) {
		return d.decodeNode(n, id, parent, v, depth)
	}
	key := typedNode{id, t}
	if mv, ok := d.typed[key]; ok {
		v.Set(mv)
		return nil
	}
	if err := d.decodeNode(n, id, parent, v, depth); err != nil {
		return err
	}
	if d.typed == nil {
		d.typed = map[typedNode]reflect.Value{}
	}
	c := reflect.New(t).Elem()
	c.Set(v)
	d.typed[key] = c
	return nil
}

// replaceable reports whether destination v holds nothing a conversion
// into it would keep, so that a remembered conversion may replace it: a
// slice or a map (a conversion makes a new one), a nil pointer, a zero
// struct or array, and a GraphDecoder only when zero (it decodes itself
// as it likes).
func (d *decoder) replaceable(v reflect.Value) bool {
	if d.info(v.Type()).decoder {
		return v.IsZero()
	}
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return true
	case reflect.Pointer:
		return v.IsNil()
	}
	return v.IsZero()
}

// decodeNode is decode past the node's checks and the hook.
func (d *decoder) decodeNode(n *Node, id, parent NodeID, v reflect.Value, depth int) error {
	t := v.Type()
	ti := d.info(t)
	if ti.decScalar {
		return setScalar(n, v, t)
	}
	if t.Kind() == reflect.Pointer {
		if n.Kind == KindNone {
			v.SetZero()
			return nil
		}
		if t == locationPtrType {
			return d.decodeLocation(n, v)
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return d.decode(id, parent, v.Elem(), depth+1)
	}
	if ti.decoder && v.CanAddr() {
		if err := v.Addr().Interface().(GraphDecoder).DecodeGraph(d.g, id); err != nil {
			return callerErr(err, n.Kind, t, false)
		}
		return nil
	}
	if t.Kind() == reflect.Interface {
		a, err := d.any(id, parent, depth)
		if err != nil {
			return err
		}
		if a == nil {
			v.SetZero()
			return nil
		}
		av := reflect.ValueOf(a)
		if !av.Type().AssignableTo(t) {
			return toGoErr(n.Kind, t, "the value does not implement the interface")
		}
		v.Set(av)
		return nil
	}
	if ti.special != notSpecial {
		if ok, err := d.decodeSpecial(n, id, parent, v, depth); ok || err != nil {
			return err
		}
	}
	if ti.unText && n.Kind == KindStr && v.CanAddr() {
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Text())); err != nil {
			return callerErr(err, n.Kind, t, false)
		}
		return nil
	}
	if ti.unJSON && v.CanAddr() {
		text, err := AppendJSON(nil, d.g, id)
		if err != nil {
			return jsonErrAs(err, t, "")
		}
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(text); err != nil {
			return callerErr(err, n.Kind, t, false)
		}
		return nil
	}
	fail := func(reason string) error { return toGoErr(n.Kind, t, reason) }
	if n.Kind == KindNone {
		switch t.Kind() {
		case reflect.Slice, reflect.Map:
			v.SetZero()
			return nil
		}
		return fail("")
	}
	switch t.Kind() {
	case reflect.Slice:
		if n.Kind == KindBytes && t.Elem().Kind() == reflect.Uint8 {
			b := n.Bytes()
			s := reflect.MakeSlice(t, len(b), len(b))
			setBytes(s, b)
			v.Set(s)
			return nil
		}
		if !isSequence(n.Kind) {
			return fail("")
		}
		s := reflect.MakeSlice(t, len(n.Refs()), len(n.Refs()))
		if d.fastItems(t.Elem(), depth) {
			if err := d.scalarItems(n.Refs(), id, s, t.Elem(), depth); err != nil {
				return err
			}
			v.Set(s)
			return nil
		}
		for i, r := range n.Refs() {
			if err := d.decode(r, id, s.Index(i), depth+1); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
		v.Set(s)
		return nil
	case reflect.Array:
		if n.Kind == KindBytes && t.Elem().Kind() == reflect.Uint8 {
			b := n.Bytes()
			if len(b) != t.Len() {
				return fail(fmt.Sprintf("%d bytes do not fit an array of %d", len(b), t.Len()))
			}
			setBytes(v, b)
			return nil
		}
		if !isSequence(n.Kind) {
			return fail("")
		}
		if len(n.Refs()) != t.Len() {
			return fail(fmt.Sprintf("%d items do not fit an array of %d", len(n.Refs()), t.Len()))
		}
		if d.fastItems(t.Elem(), depth) && v.CanAddr() {
			return d.scalarItems(n.Refs(), id, v, t.Elem(), depth)
		}
		for i, r := range n.Refs() {
			if err := d.decode(r, id, v.Index(i), depth+1); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
		return nil
	case reflect.Map:
		return d.decodeMap(n, id, v, depth)
	case reflect.Struct:
		return d.decodeStruct(n, id, v, depth)
	}
	if isScalarKind(t.Kind()) {
		return setScalar(n, v, t)
	}
	return fail("unsupported destination type")
}

// fastItems reports whether items of type et at depth+1 take the scalar
// fast path.
func (d *decoder) fastItems(et reflect.Type, depth int) bool {
	return !d.slow && depth+1 <= MaxConvertDepth && d.info(et).decScalar && (d.hook == nil || !d.hooked(et))
}

// setScalar stores n into v, whose type t has a bool, integer, float or
// string kind: the general rules for those kinds.
func setScalar(n *Node, v reflect.Value, t reflect.Type) error {
	fail := func(reason string) error { return toGoErr(n.Kind, t, reason) }
	if n.Kind == KindNone {
		return fail("")
	}
	switch t.Kind() {
	case reflect.Bool:
		if n.Kind != KindBool {
			return fail("")
		}
		v.SetBool(n.Num != 0)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch n.Kind {
		case KindInt:
			if v.OverflowInt(n.Int()) {
				return fail(strconv.FormatInt(n.Int(), 10) + " is out of range")
			}
			v.SetInt(n.Int())
			return nil
		case KindBigInt:
			return fail("the value is out of range")
		}
		return fail("")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var u uint64
		switch n.Kind {
		case KindInt:
			if n.Int() < 0 {
				return fail(strconv.FormatInt(n.Int(), 10) + " is out of range")
			}
			u = uint64(n.Int())
		case KindBigInt:
			b := n.BigInt()
			if b == nil || !b.IsUint64() {
				return fail("the value is out of range")
			}
			u = b.Uint64()
		default:
			return fail("")
		}
		if v.OverflowUint(u) {
			return fail(strconv.FormatUint(u, 10) + " is out of range")
		}
		v.SetUint(u)
		return nil
	case reflect.Float32, reflect.Float64:
		var f float64
		switch n.Kind {
		case KindFloat:
			f = n.Float()
		case KindInt:
			f = float64(n.Int())
		case KindBigInt:
			b := n.BigInt()
			if b == nil {
				return fail("the node has no payload")
			}
			f, _ = new(big.Float).SetInt(b).Float64()
			if math.IsInf(f, 0) {
				return fail("the value is out of range")
			}
		default:
			return fail("")
		}
		if !math.IsInf(f, 0) && !math.IsNaN(f) && v.OverflowFloat(f) {
			return fail(strconv.FormatFloat(f, 'g', -1, 64) + " is out of range")
		}
		v.SetFloat(f)
		return nil
	case reflect.String:
		if n.Kind != KindStr && n.Kind != KindPath {
			return fail("")
		}
		v.SetString(n.Text())
		return nil
	}
	return fail("unsupported destination type")
}

// setBytes copies b into a slice or array whose element kind is uint8 (the
// element type may be a named byte type, which reflect.Copy refuses).
func setBytes(dst reflect.Value, b []byte) {
	if dst.Type().Elem() == reflect.TypeFor[byte]() {
		reflect.Copy(dst, reflect.ValueOf(b))
		return
	}
	for i, c := range b {
		dst.Index(i).SetUint(uint64(c))
	}
}

func isSequence(k Kind) bool {
	return k == KindList || k == KindTuple || k == KindSet || k == KindFrozenSet
}

// entries lists the (key, value) pairs of a dict, named tuple or class
// instance; for the latter two the keys are field or attribute names.
type entry struct {
	key   NodeID // for dicts
	name  string // for named tuples and instances (and str dict keys)
	named bool
	value NodeID
}

func (d *decoder) entries(n *Node, id NodeID, t reflect.Type, depth int) ([]entry, bool, error) {
	switch n.Kind {
	case KindDict:
		es := make([]entry, 0, len(n.Refs())/2)
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			kn, err := d.node(n.Refs()[i], id, t, depth+1)
			if err != nil {
				return nil, true, err
			}
			e := entry{key: n.Refs()[i], value: n.Refs()[i+1]}
			if kn.Kind == KindStr {
				e.name, e.named = kn.Text(), true
			}
			es = append(es, e)
		}
		return es, true, nil
	case KindNamedTuple:
		nt, ok := n.Ext().(*NamedTuple)
		if !ok || len(nt.FieldNames) != len(n.Refs()) {
			return nil, true, toGoErr(n.Kind, t, "field names and values differ in length")
		}
		es := make([]entry, len(n.Refs()))
		for i, r := range n.Refs() {
			es[i] = entry{name: nt.FieldNames[i], named: true, value: r}
		}
		return es, false, nil
	case KindClassInstance:
		ci, ok := n.Ext().(*ClassInstance)
		if !ok {
			return nil, false, toGoErr(n.Kind, t, "the node has no payload")
		}
		es := make([]entry, len(ci.Attrs))
		for i, p := range ci.Attrs {
			kn, err := d.node(p.Key, id, t, depth+1)
			if err != nil {
				return nil, false, err
			}
			if kn.Kind != KindStr {
				return nil, false, toGoErr(kn.Kind, t, "an attribute name must be a str")
			}
			es[i] = entry{name: kn.Text(), named: true, value: p.Value}
		}
		return es, false, nil
	}
	return nil, false, toGoErr(n.Kind, t, "")
}

func (d *decoder) decodeMap(n *Node, id NodeID, v reflect.Value, depth int) error {
	t := v.Type()
	es, isDict, err := d.entries(n, id, t, depth)
	if err != nil {
		return err
	}
	if !isDict && t.Key().Kind() != reflect.String {
		return toGoErr(n.Kind, t, "names need a string-keyed map")
	}
	if len(es) > 0 && identityKey(t.Key()) && !KeyConverts(t.Key()) && (d.hook == nil || !d.hooked(t.Key())) {
		// As FromGo refuses such a map (see KeyConverts), unless a
		// Decoder's hook decodes the keys (a session's host objects).
		return toGoErr(n.Kind, t, "unsupported map key type "+t.Key().String())
	}
	m := reflect.MakeMapWithSize(t, len(es))
	k := reflect.New(t.Key()).Elem()
	val := reflect.New(t.Elem()).Elem()
	dynKey := holdsInterface(t.Key())
	anyKey := t.Key() == anyType // tuple and bytes keys: keyAny
	for _, e := range es {
		k.SetZero()
		val.SetZero()
		if isDict && anyKey {
			budget := maxKeyItems
			x, err := d.keyAny(e.key, id, depth+1, &budget)
			if err != nil {
				return atPath(err, "[key]")
			}
			if x != nil {
				k.Set(reflect.ValueOf(x))
			}
			if !k.Comparable() {
				return atPath(unhashableKey(d.g.Nodes[e.key].Kind, k), "[key]")
			}
		} else if isDict {
			if err := d.decode(e.key, id, k, depth+1); err != nil {
				return atPath(err, "[key]")
			}
			if dynKey && !k.Comparable() {
				return atPath(unhashableKey(d.g.Nodes[e.key].Kind, k), "[key]")
			}
		} else {
			k.SetString(e.name)
		}
		if err := d.decode(e.value, id, val, depth+1); err != nil {
			return atPath(err, entryPath(d.g, e))
		}
		m.SetMapIndex(k, val)
	}
	v.Set(m)
	return nil
}

// identityKey reports whether Go compares keys of type t, in part, by
// identity: it is or holds a pointer, a channel or an unsafe.Pointer.
// ToGo would make new ones, so no key it made could equal a key the
// caller has. (A struct key type without them takes a named tuple or an
// instance, which Python hashes, by its fields.)
func identityKey(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Chan, reflect.UnsafePointer:
		return true
	case reflect.Array:
		return identityKey(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if identityKey(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// holdsInterface reports whether a value of t can hold an interface value,
// whose dynamic type decides at run time whether it can be a map key.
func holdsInterface(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Array:
		return holdsInterface(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsInterface(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// unhashableKey is the error for a dict key that decoded, into a key type
// holding an interface, to a Go value that cannot be a map key: a tuple
// (TupleValue) or a frozenset (FrozenSetValue), or from a hostile child a
// list or a dict. Storing it would panic.
func unhashableKey(k Kind, key reflect.Value) error {
	return toGoErr(k, key.Type(), "it decodes to a value no Go map can use as a key; decode the dict into value.DictValue")
}

func entryPath(g *Graph, e entry) string {
	if e.named {
		return "[" + strconv.Quote(e.name) + "]"
	}
	return "[" + g.Repr(e.key) + "]"
}

func (d *decoder) decodeStruct(n *Node, id NodeID, v reflect.Value, depth int) error {
	t := v.Type()
	ti := d.info(t)
	if n.Kind == KindDict {
		// As entries does, but without a slice: every key first, then the
		// values in order.
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			if _, err := d.node(n.Refs()[i], id, t, depth+1); err != nil {
				return err
			}
		}
		refs := n.Refs()
		plan := !d.slow && (d.hook == nil || d.hookTypes != nil) && v.CanAddr()
		next := 0 // the field after the last one met
		if !plan {
			next = len(ti.fields)
		}
		for i := 0; i+1 < len(refs); i += 2 {
			kn := &d.g.Nodes[refs[i]]
			if kn.Kind != KindStr {
				return toGoErr(kn.Kind, t, "a struct field name must be a str")
			}
			fi := ti.fieldIndex(kn.Text(), next)
			if fi < 0 {
				continue
			}
			if plan {
				next = fi + 1
			} else {
				next = len(ti.fields) // the reference path: no hint
			}
			if plan {
				if done, err := d.planField(ti, fi, v, refs[i+1], id, depth); err != nil {
					return err
				} else if done {
					continue
				}
			}
			if err := d.setField(&ti.fields[fi], n, id, v, refs[i+1], depth); err != nil {
				return err
			}
		}
		return nil
	}
	es, _, err := d.entries(n, id, t, depth)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := d.structField(ti, n, id, v, e.name, e.value, depth); err != nil {
			return err
		}
	}
	return nil
}

// structField decodes node val into the field of v named name, if any.
func (d *decoder) structField(ti *typeInfo, n *Node, id NodeID, v reflect.Value, name string, val NodeID, depth int) error {
	f := ti.field(name)
	if f == nil {
		return nil
	}
	return d.setField(f, n, id, v, val, depth)
}

// setField decodes node val into field f of v by the general path.
func (d *decoder) setField(f *Field, n *Node, id NodeID, v reflect.Value, val NodeID, depth int) error {
	fv := v
	if len(f.Index) == 1 {
		fv = v.Field(f.Index[0])
	} else {
		var err error
		if fv, err = settableField(v, f.Index); err != nil {
			return toGoErr(n.Kind, v.Type(), err.Error())
		}
	}
	if err := d.decode(val, id, fv, depth+1); err != nil {
		return atPath(err, "."+f.GoName)
	}
	return nil
}

// settableField walks to a (possibly promoted) field, allocating nil
// embedded pointers on the way.
func settableField(v reflect.Value, index []int) (reflect.Value, error) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, fmt.Errorf("cannot set embedded pointer to unexported struct %v", v.Type().Elem())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

// decodeSpecial handles destinations of the types with a fixed Python
// counterpart. ok reports whether v's type was one of them.
func (d *decoder) decodeSpecial(n *Node, id, parent NodeID, v reflect.Value, depth int) (bool, error) {
	t := v.Type()
	fail := func(reason string) (bool, error) { return true, toGoErr(n.Kind, t, reason) }
	switch t {
	case jsonType:
		text, err := AppendJSON(nil, d.g, id)
		if err != nil {
			return true, err
		}
		v.SetBytes(text)
		return true, nil
	case numberType:
		// A number's JSON text, or a str holding one (as encoding/json
		// takes a JSON string that spells a number).
		switch n.Kind {
		case KindInt, KindBigInt, KindFloat:
			text, err := AppendJSON(nil, d.g, id)
			if err != nil {
				// This destination is a json.Number.
				return true, jsonErrAs(err, numberType, "")
			}
			v.SetString(string(text))
			return true, nil
		case KindStr:
			if isJSONNumber(n.Text()) {
				v.SetString(n.Text())
				return true, nil
			}
			return fail("the str is not a JSON number")
		}
		return fail("")
	case timeType:
		switch x := n.Ext().(type) {
		case *DateTime:
			if n.Kind != KindDateTime {
				return fail("")
			}
			if x.Offset == nil {
				v.Set(reflect.ValueOf(time.Date(int(x.Year), time.Month(x.Month), int(x.Day), int(x.Hour),
					int(x.Minute), int(x.Second), int(x.Microsecond)*1000, time.UTC)))
			} else {
				v.Set(reflect.ValueOf(awareTime(x)))
			}
			return true, nil
		case *Date:
			if n.Kind != KindDate {
				return fail("")
			}
			v.Set(reflect.ValueOf(time.Date(int(x.Year), time.Month(x.Month), int(x.Day), 0, 0, 0, 0, time.UTC)))
			return true, nil
		}
		return fail("")
	case durationType:
		x, ok := n.Ext().(*TimeDelta)
		if n.Kind != KindTimeDelta || !ok {
			return fail("")
		}
		dur, ok := timeDeltaDuration(x)
		if !ok {
			return fail("the duration overflows time.Duration")
		}
		v.SetInt(int64(dur))
		return true, nil
	case bigIntType:
		var b *big.Int
		switch n.Kind {
		case KindInt:
			b = big.NewInt(n.Int())
		case KindBigInt:
			b = n.BigInt()
		}
		if b == nil {
			return fail("")
		}
		if v.CanAddr() {
			v.Addr().Interface().(*big.Int).Set(b)
		} else {
			v.Set(reflect.ValueOf(new(big.Int).Set(b)).Elem())
		}
		return true, nil
	case uuidType:
		if n.Kind != KindStr {
			return fail("")
		}
		u, err := ParseUUID(n.Text())
		if err != nil {
			return fail("not a UUID")
		}
		v.Set(reflect.ValueOf(u))
		return true, nil
	case reflect.TypeFor[TupleValue](), reflect.TypeFor[SetValue](), reflect.TypeFor[FrozenSetValue]():
		if !isSequence(n.Kind) {
			return fail("")
		}
		a, err := d.any(id, parent, depth)
		if err != nil {
			return true, err
		}
		s := reflect.ValueOf(a)
		v.Set(s.Convert(t))
		return true, nil
	case reflect.TypeFor[DictValue]():
		if n.Kind != KindDict {
			return fail("")
		}
		out := make(DictValue, 0, len(n.Refs())/2)
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			k, err := d.any(n.Refs()[i], id, depth+1)
			if err != nil {
				return true, err
			}
			val, err := d.any(n.Refs()[i+1], id, depth+1)
			if err != nil {
				return true, err
			}
			out = append(out, KV{k, val})
		}
		v.Set(reflect.ValueOf(out))
		return true, nil
	case reflect.TypeFor[DateTime]():
		x, ok := n.Ext().(*DateTime)
		if n.Kind != KindDateTime || !ok {
			return fail("")
		}
		c := *x
		c.Offset, c.TZName = clonePtr(x.Offset), clonePtr(x.TZName)
		v.Set(reflect.ValueOf(c))
		return true, nil
	case reflect.TypeFor[TimeDelta]():
		x, ok := n.Ext().(*TimeDelta)
		if n.Kind != KindTimeDelta || !ok {
			return fail("")
		}
		v.Set(reflect.ValueOf(*x))
		return true, nil
	case reflect.TypeFor[Date](), reflect.TypeFor[Time](), reflect.TypeFor[TimeZone](),
		reflect.TypeFor[Exception](), reflect.TypeFor[Function](), reflect.TypeFor[FileHandle](),
		reflect.TypeFor[NamedTupleValue](), reflect.TypeFor[PathValue](),
		reflect.TypeFor[BuiltinFunctionValue](), reflect.TypeFor[ReprValue](),
		reflect.TypeFor[CycleValue](), reflect.TypeFor[SpecialValue](),
		reflect.TypeFor[ClassValue](), reflect.TypeFor[ObjectValue]():
		a, err := d.any(id, parent, depth)
		if err != nil {
			return true, err
		}
		if a == nil || reflect.TypeOf(a) != t {
			return fail("")
		}
		v.Set(reflect.ValueOf(a))
		return true, nil
	case locationType:
		return fail("decode a timezone into a *time.Location")
	}
	if specialTypes[t] == spNoPython {
		return fail(noPython(t))
	}
	return false, nil
}

// decodeLocation stores a timezone into a *time.Location: time.UTC for
// timezone.utc, a fixed zone otherwise.
func (d *decoder) decodeLocation(n *Node, v reflect.Value) error {
	x, ok := n.Ext().(*TimeZone)
	if n.Kind != KindTimeZone || !ok {
		return toGoErr(n.Kind, v.Type(), "")
	}
	loc := time.UTC
	if x.Offset != 0 || x.Name != nil {
		name := ""
		if x.Name != nil {
			name = *x.Name
		}
		loc = time.FixedZone(name, int(x.Offset))
	}
	v.Set(reflect.ValueOf(loc))
	return nil
}
