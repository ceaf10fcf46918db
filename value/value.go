package value

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"unsafe"
)

// NodeID is the index of a node in a [Graph].
//
// It is a plain value, safe for concurrent use.
type NodeID = uint32

// Kind says which Python value a [Node] holds. The numbers equal the arm
// numbers of the protocol's node oneof, so 10 (the unused uuid arm) is absent.
//
// It is a plain value, safe for concurrent use.
type Kind uint8

// The node kinds.
const (
	KindInvalid         Kind = 0
	KindEllipsis        Kind = 1
	KindNone            Kind = 2
	KindNotImplemented  Kind = 3
	KindBool            Kind = 4
	KindInt             Kind = 5
	KindBigInt          Kind = 6
	KindFloat           Kind = 7
	KindStr             Kind = 8
	KindBytes           Kind = 9
	KindList            Kind = 11
	KindTuple           Kind = 12
	KindNamedTuple      Kind = 13
	KindDict            Kind = 14
	KindSet             Kind = 15
	KindFrozenSet       Kind = 16
	KindDate            Kind = 17
	KindTime            Kind = 18
	KindDateTime        Kind = 19
	KindTimeDelta       Kind = 20
	KindTimeZone        Kind = 21
	KindException       Kind = 22
	KindType            Kind = 23
	KindClassInstance   Kind = 24
	KindFunction        Kind = 25
	KindBuiltinFunction Kind = 26
	KindPath            Kind = 27
	KindFileHandle      Kind = 28
	KindRepr            Kind = 29
	KindCycle           Kind = 30
)

var kindNames = [...]string{
	KindInvalid: "invalid", KindEllipsis: "ellipsis", KindNone: "none",
	KindNotImplemented: "not_implemented", KindBool: "bool", KindInt: "int",
	KindBigInt: "bigint", KindFloat: "float", KindStr: "str", KindBytes: "bytes",
	10: "uuid", KindList: "list", KindTuple: "tuple", KindNamedTuple: "named_tuple",
	KindDict: "dict", KindSet: "set", KindFrozenSet: "frozenset", KindDate: "date",
	KindTime: "time", KindDateTime: "datetime", KindTimeDelta: "timedelta",
	KindTimeZone: "timezone", KindException: "exception", KindType: "type",
	KindClassInstance: "class_instance", KindFunction: "function",
	KindBuiltinFunction: "builtin_function", KindPath: "path",
	KindFileHandle: "file_handle", KindRepr: "repr", KindCycle: "cycle",
}

// String returns the protocol's snake_case name of the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Valid reports whether k is one of the node kinds above.
func (k Kind) Valid() bool { return k >= KindEllipsis && k <= KindCycle && k != 10 }

// IsContainer reports whether nodes of kind k refer to other nodes.
func (k Kind) IsContainer() bool {
	switch k {
	case KindList, KindTuple, KindNamedTuple, KindDict, KindSet, KindFrozenSet,
		KindType, KindClassInstance:
		return true
	}
	return false
}

// OutputOnly reports whether the kind may only travel from child to parent
// (repr and cycle). The worker rejects such nodes as inputs.
func (k Kind) OutputOnly() bool { return k == KindRepr || k == KindCycle }

// Pair is a (key, value) pair of node ids: a dict entry, or an attribute
// (the key then indexes a str node holding the attribute name).
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Pair struct {
	Key, Value NodeID
}

// Node is one value in a [Graph]: 24 bytes, with one pointer, whatever
// its kind (a scalar node carries none), so large graphs are cheap to
// allocate and to scan. Which data is meaningful depends on Kind:
//
//   - KindBool: Num is 0 or 1.
//   - KindInt: Num holds the int64 bits (use [Node.Int]).
//   - KindFloat: Num holds the IEEE-754 bits (use [Node.Float]); NaN payloads
//     survive bit-exact.
//   - KindStr, KindPath, KindBuiltinFunction, KindRepr, KindCycle: the text
//     ([Node.Text()]). For KindCycle, Num is an optional identity (protocol 2
//     carries one; protocol 4 does not).
//   - KindBytes: the bytes ([Node.Bytes]).
//   - KindList, KindTuple, KindSet, KindFrozenSet: the items ([Node.Refs()]),
//     or, in a graph made by [FromGo], a list of ints or floats may hold
//     them packed as int64 or float64 values with no node each
//     ([Node.Ints], [Node.Floats]; Refs is then nil). [Graph.Unpacked]
//     gives every packed item its own node.
//   - KindNamedTuple: the values ([Node.Refs()]) and a *NamedTuple ([Node.Ext()]).
//   - KindDict: Refs interleave keys and values: k0, v0, k1, v1, … (use
//     [Node.Pairs]).
//   - KindBigInt: a *big.Int ([Node.Ext()], [Node.BigInt]).
//   - KindDate, KindTime, KindDateTime, KindTimeDelta, KindTimeZone,
//     KindException, KindType, KindClassInstance, KindFunction,
//     KindFileHandle: Ext points at the matching struct of this package
//     (*Date, *Time, …).
//
// The payload (text, bytes, items or payload struct) lives out of line: a
// node holds one of them (a named tuple its items and its *NamedTuple), set
// with the Set methods or the With methods, whatever the Kind (so a
// malformed node can be built, and is reported by the checks). The
// constructors ([Int], [Str], [List], …) build well-formed nodes. A Node is
// a small value: copies share the payload, which must not be modified
// once the node is in a graph.
//
// Like a Graph, a Node may be read from several goroutines while nobody
// changes it.
type Node struct {
	Kind Kind
	pk   payloadKind
	n    uint32 // length of a text, bytes or items payload
	// Num is the scalar payload: see the kinds above.
	Num uint64
	p   unsafe.Pointer // the payload, as pk says
}

// payloadKind says what Node.p points at.
type payloadKind uint8

const (
	pkNone          payloadKind = iota
	pkText                      // string data, n bytes
	pkBytes                     // byte data, n bytes
	pkRefs                      // NodeID data, n ids
	pkNamedTuple                // *ntPayload
	pkBigInt                    // *big.Int
	pkDate                      // *Date
	pkTime                      // *Time
	pkDateTime                  // *DateTime
	pkTimeDelta                 // *TimeDelta
	pkTimeZone                  // *TimeZone
	pkException                 // *Exception
	pkType                      // *Type
	pkClassInstance             // *ClassInstance
	pkFunction                  // *Function
	pkFileHandle                // *FileHandle
	pkBoxed                     // *any: any other payload, or one too long for n
	pkInts                      // int64 data, n items: packed int items
	pkFloats                    // float64 data, n items: packed float items
)

// ntPayload is the payload of a named tuple: its items and its names.
type ntPayload struct {
	refs []NodeID
	nt   *NamedTuple
}

// Text returns the text of a KindStr, KindPath, KindBuiltinFunction,
// KindRepr or KindCycle node ("" for a node without text).
func (n *Node) Text() string {
	switch n.pk {
	case pkText:
		return unsafe.String((*byte)(n.p), n.n)
	case pkBoxed:
		s, _ := (*(*any)(n.p)).(string)
		return s
	}
	return ""
}

// Refs returns the items of a container node (nil for a node without
// items). The slice is the node's own storage: do not modify it.
func (n *Node) Refs() []NodeID {
	switch n.pk {
	case pkRefs:
		if n.n == 0 {
			return nil
		}
		return unsafe.Slice((*NodeID)(n.p), n.n)
	case pkNamedTuple:
		return (*ntPayload)(n.p).refs
	case pkBoxed:
		r, _ := (*(*any)(n.p)).([]NodeID)
		return r
	}
	return nil
}

// Ints returns the items of a list or tuple whose items are held packed
// as int64 values, with no node each (FromGo packs Go integer slices and
// arrays so), and nil for any other node. The slice is the node's own
// storage: do not modify it.
func (n *Node) Ints() []int64 {
	if n.pk != pkInts {
		return nil
	}
	return unsafe.Slice((*int64)(n.p), n.n)
}

// Floats is [Node.Ints] for a list or tuple whose items are held packed
// as float64 values (FromGo packs Go float slices and arrays so).
func (n *Node) Floats() []float64 {
	if n.pk != pkFloats {
		return nil
	}
	return unsafe.Slice((*float64)(n.p), n.n)
}

// Packed reports whether the node's items are held packed ([Node.Ints],
// [Node.Floats]).
func (n *Node) Packed() bool { return n.pk == pkInts || n.pk == pkFloats }

// packedInts returns a node of kind k whose items are xs (not copied),
// held packed. xs must not be empty nor longer than math.MaxUint32.
func packedInts(k Kind, xs []int64) Node {
	return Node{Kind: k, pk: pkInts, n: uint32(len(xs)), p: unsafe.Pointer(unsafe.SliceData(xs))}
}

// packedFloats is packedInts for floats.
func packedFloats(k Kind, xs []float64) Node {
	return Node{Kind: k, pk: pkFloats, n: uint32(len(xs)), p: unsafe.Pointer(unsafe.SliceData(xs))}
}

// Ext returns the payload struct of the node: a *big.Int, *NamedTuple,
// *Date, …, or the []byte of a KindBytes node; nil when there is none.
func (n *Node) Ext() any {
	switch n.pk {
	case pkBytes:
		return n.Bytes()
	case pkNamedTuple:
		if nt := (*ntPayload)(n.p).nt; nt != nil {
			return nt
		}
		return nil
	case pkBigInt:
		return (*big.Int)(n.p)
	case pkDate:
		return (*Date)(n.p)
	case pkTime:
		return (*Time)(n.p)
	case pkDateTime:
		return (*DateTime)(n.p)
	case pkTimeDelta:
		return (*TimeDelta)(n.p)
	case pkTimeZone:
		return (*TimeZone)(n.p)
	case pkException:
		return (*Exception)(n.p)
	case pkType:
		return (*Type)(n.p)
	case pkClassInstance:
		return (*ClassInstance)(n.p)
	case pkFunction:
		return (*Function)(n.p)
	case pkFileHandle:
		return (*FileHandle)(n.p)
	case pkBoxed:
		switch x := (*(*any)(n.p)).(type) {
		case string, []NodeID:
			return nil
		default:
			return x
		}
	}
	return nil
}

// SetText makes s the node's payload.
func (n *Node) SetText(s string) {
	if uint64(len(s)) > math.MaxUint32 {
		n.box(s)
		return
	}
	n.pk, n.p, n.n = pkText, unsafe.Pointer(unsafe.StringData(s)), uint32(len(s))
}

// SetBytes makes b (not copied) the node's payload.
func (n *Node) SetBytes(b []byte) {
	if uint64(len(b)) > math.MaxUint32 {
		n.box(b)
		return
	}
	n.pk, n.p, n.n = pkBytes, unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b))
}

// SetRefs makes refs (not copied) the node's items. A node whose payload
// is a *NamedTuple keeps it.
func (n *Node) SetRefs(refs []NodeID) {
	if n.pk == pkNamedTuple {
		nt := (*ntPayload)(n.p).nt
		n.p = unsafe.Pointer(&ntPayload{refs: refs, nt: nt})
		return
	}
	if uint64(len(refs)) > math.MaxUint32 {
		n.box(refs)
		return
	}
	n.pk, n.p, n.n = pkRefs, unsafe.Pointer(unsafe.SliceData(refs)), uint32(len(refs))
}

// SetExt makes x the node's payload: a pointer to one of the payload
// structs of this package, a *big.Int, or a []byte (as SetBytes). A nil x,
// or a nil pointer, removes the payload (a *NamedTuple node keeps its
// items).
func (n *Node) SetExt(x any) {
	var pk payloadKind
	var p unsafe.Pointer
	switch v := x.(type) {
	case nil:
	case []byte:
		n.SetBytes(v)
		return
	case *NamedTuple:
		refs := n.Refs()
		if v == nil {
			if n.pk == pkNamedTuple {
				n.pk, n.p, n.n = pkNone, nil, 0
				n.SetRefs(refs)
			}
			return
		}
		n.pk, n.p, n.n = pkNamedTuple, unsafe.Pointer(&ntPayload{refs: refs, nt: v}), 0
		return
	case *big.Int:
		pk, p = pkBigInt, unsafe.Pointer(v)
	case *Date:
		pk, p = pkDate, unsafe.Pointer(v)
	case *Time:
		pk, p = pkTime, unsafe.Pointer(v)
	case *DateTime:
		pk, p = pkDateTime, unsafe.Pointer(v)
	case *TimeDelta:
		pk, p = pkTimeDelta, unsafe.Pointer(v)
	case *TimeZone:
		pk, p = pkTimeZone, unsafe.Pointer(v)
	case *Exception:
		pk, p = pkException, unsafe.Pointer(v)
	case *Type:
		pk, p = pkType, unsafe.Pointer(v)
	case *ClassInstance:
		pk, p = pkClassInstance, unsafe.Pointer(v)
	case *Function:
		pk, p = pkFunction, unsafe.Pointer(v)
	case *FileHandle:
		pk, p = pkFileHandle, unsafe.Pointer(v)
	default:
		n.box(x)
		return
	}
	if p == nil {
		pk = pkNone
	}
	n.pk, n.p, n.n = pk, p, 0
}

func (n *Node) box(x any) { n.pk, n.p, n.n = pkBoxed, unsafe.Pointer(&x), 0 }

// WithText returns a copy of n with s as its payload (see [Node.SetText]).
func (n Node) WithText(s string) Node { n.SetText(s); return n }

// WithRefs returns a copy of n with refs as its items (see [Node.SetRefs]).
func (n Node) WithRefs(refs []NodeID) Node { n.SetRefs(refs); return n }

// WithExt returns a copy of n with x as its payload (see [Node.SetExt]).
func (n Node) WithExt(x any) Node { n.SetExt(x); return n }

// Int returns the value of a KindInt node.
func (n *Node) Int() int64 { return int64(n.Num) }

// Float returns the value of a KindFloat node.
func (n *Node) Float() float64 { return math.Float64frombits(n.Num) }

// Bool returns the value of a KindBool node.
func (n *Node) Bool() bool { return n.Num != 0 }

// Bytes returns the payload of a KindBytes node (never nil for one; nil
// for a node without bytes). Do not modify it.
func (n *Node) Bytes() []byte {
	switch n.pk {
	case pkBytes:
		if n.n == 0 {
			return []byte{}
		}
		return unsafe.Slice((*byte)(n.p), n.n)
	case pkBoxed:
		b, _ := (*(*any)(n.p)).([]byte)
		return b
	}
	return nil
}

// HasPayload reports whether the node holds a payload (text, bytes, items
// or a payload struct) besides its Kind and Num. A node without one holds
// no pointer.
func (n *Node) HasPayload() bool { return n.pk != pkNone }

// BigInt returns the payload of a KindBigInt node. The result must not be
// modified.
func (n *Node) BigInt() *big.Int {
	if n.pk == pkBigInt {
		return (*big.Int)(n.p)
	}
	b, _ := n.Ext().(*big.Int)
	return b
}

// Pairs returns the entries of a KindDict node as pairs. It allocates; use
// Refs directly on hot paths.
func (n *Node) Pairs() []Pair {
	refs := n.Refs()
	ps := make([]Pair, len(refs)/2)
	for i := range ps {
		ps[i] = Pair{refs[2*i], refs[2*i+1]}
	}
	return ps
}

// Children calls f for every node id n refers to, in wire order.
func (n *Node) Children(f func(NodeID)) {
	for _, r := range n.Refs() {
		f(r)
	}
	switch n.pk {
	case pkType:
		for _, p := range (*Type)(n.p).Attrs {
			f(p.Key)
			f(p.Value)
		}
	case pkClassInstance:
		x := (*ClassInstance)(n.p)
		f(x.Class)
		for _, p := range x.Attrs {
			f(p.Key)
			f(p.Value)
		}
	}
}

// NamedTuple is the payload of a KindNamedTuple node; the values are the
// node's Refs.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type NamedTuple struct {
	TypeName   string
	FieldNames []string
}

// Date is a proleptic Gregorian date (KindDate).
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Date struct {
	Year  int32
	Month uint32
	Day   uint32
}

// Time is a time of day (KindTime). It is aware when Offset is set.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Time struct {
	Hour, Minute, Second uint32
	Microsecond          uint32
	// Offset is the UTC offset in seconds; nil for a naive time.
	Offset *int32
	// TZName is the name the tzinfo was built with; only set with Offset.
	TZName *string
	Fold   uint32
}

// DateTime is a date and time (KindDateTime). It is aware when Offset is
// set.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type DateTime struct {
	Year                 int32
	Month, Day           uint32
	Hour, Minute, Second uint32
	Microsecond          uint32
	Offset               *int32
	TZName               *string
}

// TimeDelta is a normalized duration (KindTimeDelta):
// 0 <= Seconds < 86400 and 0 <= Microseconds < 1_000_000; Days carries the
// sign.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type TimeDelta struct {
	Days, Seconds, Microseconds int32
}

// TimeZone is a fixed-offset timezone (KindTimeZone).
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type TimeZone struct {
	Offset int32
	Name   *string
}

// Exception is an exception value (KindException): a type name and an
// optional single string argument.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Exception struct {
	Type string
	Arg  *string
}

// TypeOrigin says where a class type was defined.
//
// It is a plain value, safe for concurrent use.
type TypeOrigin uint8

// The type origins.
const (
	OriginUnspecified TypeOrigin = 0
	OriginBuiltin     TypeOrigin = 1
	OriginSandbox     TypeOrigin = 2
	OriginHost        TypeOrigin = 3
)

// String returns the origin's name.
func (o TypeOrigin) String() string {
	switch o {
	case OriginBuiltin:
		return "builtin"
	case OriginSandbox:
		return "sandbox"
	case OriginHost:
		return "host"
	case OriginUnspecified:
		return "unspecified"
	}
	return fmt.Sprintf("origin(%d)", uint8(o))
}

// Type is a type object (KindType). A builtin type has only a Name. A class
// type (sandbox or host) has an ID and may carry class attributes sent
// eagerly.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Type struct {
	Name        string
	ID          UUID
	Origin      TypeOrigin
	IsDataclass bool
	// Attrs are class attributes as (name str node, value node) pairs.
	Attrs []Pair
}

// ClassInstance is an instance of a sandbox or host class
// (KindClassInstance).
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type ClassInstance struct {
	// Class indexes the KindType node of the instance's class (origin
	// sandbox or host).
	Class      NodeID
	InstanceID UUID
	// Attrs are the instance attributes as (name str node, value node) pairs.
	Attrs []Pair
}

// Function is a host function value (KindFunction), usually supplied in
// answer to a name lookup.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Function struct {
	Name      string
	Docstring *string
}

// FileHandle is an open file object (KindFileHandle). Mode is one of r, rb,
// w, wb, a, ab.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type FileHandle struct {
	Path     string
	Mode     string
	Position uint64
}

// Graph is a flat list of nodes in post-order.
//
// A Graph is not safe for concurrent mutation; any number of goroutines
// may read one that nobody is changing (the read methods, Repr and the
// conversions out of it included, modify nothing).
type Graph struct {
	Nodes []Node
	// packed is set when a packed node (Node.Packed) was added to the
	// graph (Add, FromGo, Append), so that HasPacked need not scan graphs
	// that never held one; the readers of this package unpack such a
	// graph first (Graph.Unpacked).
	packed bool
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.Nodes) }

// Add appends n and returns its id.
func (g *Graph) Add(n Node) NodeID {
	if n.Packed() {
		g.packed = true
	}
	g.Nodes = append(g.Nodes, n)
	return NodeID(len(g.Nodes) - 1)
}

// Node returns the node with id id. It panics when id is out of range, like
// a slice index; graphs from a peer are validated before they are handed
// out.
func (g *Graph) Node(id NodeID) *Node { return &g.Nodes[id] }

// Equal reports whether g and o hold the same nodes: kinds, scalars and
// payloads compared by value (payload structs as reflect.DeepEqual does).
// Tests use it where reflect.DeepEqual would compare payload addresses.
func (g *Graph) Equal(o *Graph) bool {
	if g.Len() != o.Len() {
		return false
	}
	for i := range g.Nodes {
		if !g.Nodes[i].Equal(&o.Nodes[i]) {
			return false
		}
	}
	return true
}

// Equal reports whether n and o are the same node: kind, scalar and
// payload compared by value.
func (n *Node) Equal(o *Node) bool {
	return n.Kind == o.Kind && n.Num == o.Num && n.Text() == o.Text() &&
		slices.Equal(n.Refs(), o.Refs()) && n.packedEqual(o) &&
		reflect.DeepEqual(n.Ext(), o.Ext())
}

// Reset empties the graph, keeping its storage.
func (g *Graph) Reset() { clear(g.Nodes); g.Nodes = g.Nodes[:0]; g.packed = false }

// Truncate drops the nodes from id n on, keeping the first n (as after a
// conversion that failed half way: n is the Len before it). Nothing may
// still refer to a dropped node.
func (g *Graph) Truncate(n int) {
	clear(g.Nodes[n:])
	g.Nodes = g.Nodes[:n]
}

// Append copies every node of o into g, shifting o's ids, and returns the
// offset that maps an id of o to an id of g.
func (g *Graph) Append(o *Graph) NodeID {
	off := NodeID(len(g.Nodes))
	g.packed = g.packed || o.packed
	for _, n := range o.Nodes {
		g.Nodes = append(g.Nodes, shift(n, off))
	}
	return off
}

func shift(n Node, off NodeID) Node {
	if off == 0 {
		return n
	}
	return n.MapRefs(func(r NodeID) NodeID { return r + off })
}
