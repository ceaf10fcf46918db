package value

import (
	"fmt"
	"math"
	"math/big"
)

// NodeID is the index of a node in a [Graph].
type NodeID = uint32

// Kind says which Python value a [Node] holds. The numbers equal the arm
// numbers of the protocol's node oneof, so 10 (the unused uuid arm) is absent.
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
type Pair struct {
	Key, Value NodeID
}

// Node is one value in a [Graph]. Which fields are meaningful depends on
// Kind:
//
//   - KindBool: Num is 0 or 1.
//   - KindInt: Num holds the int64 bits (use [Node.Int]).
//   - KindFloat: Num holds the IEEE-754 bits (use [Node.Float]); NaN payloads
//     survive bit-exact.
//   - KindStr, KindPath, KindBuiltinFunction, KindRepr, KindCycle: Text.
//     For KindCycle, Text is the placeholder and Num an optional identity
//     (protocol 2 carries one; protocol 4 does not).
//   - KindBytes: Ext is a []byte.
//   - KindList, KindTuple, KindSet, KindFrozenSet: Refs are the items.
//   - KindNamedTuple: Refs are the values, Ext a *NamedTuple.
//   - KindDict: Refs interleave keys and values: k0, v0, k1, v1, … (use
//     [Node.Pairs]).
//   - KindBigInt: Ext is a *big.Int.
//   - KindDate, KindTime, KindDateTime, KindTimeDelta, KindTimeZone,
//     KindException, KindType, KindClassInstance, KindFunction,
//     KindFileHandle: Ext points at the matching struct of this package
//     (*Date, *Time, …).
//
// The constructors ([Int], [Str], [List], …) build well-formed nodes.
type Node struct {
	Kind Kind
	Num  uint64
	Text string
	Refs []NodeID
	Ext  any
}

// Int returns the value of a KindInt node.
func (n *Node) Int() int64 { return int64(n.Num) }

// Float returns the value of a KindFloat node.
func (n *Node) Float() float64 { return math.Float64frombits(n.Num) }

// Bool returns the value of a KindBool node.
func (n *Node) Bool() bool { return n.Num != 0 }

// Bytes returns the payload of a KindBytes node.
func (n *Node) Bytes() []byte { b, _ := n.Ext.([]byte); return b }

// BigInt returns the payload of a KindBigInt node. The result must not be
// modified.
func (n *Node) BigInt() *big.Int { b, _ := n.Ext.(*big.Int); return b }

// Pairs returns the entries of a KindDict node as pairs. It allocates; use
// Refs directly on hot paths.
func (n *Node) Pairs() []Pair {
	ps := make([]Pair, len(n.Refs)/2)
	for i := range ps {
		ps[i] = Pair{n.Refs[2*i], n.Refs[2*i+1]}
	}
	return ps
}

// Children calls f for every node id n refers to, in wire order.
func (n *Node) Children(f func(NodeID)) {
	for _, r := range n.Refs {
		f(r)
	}
	switch x := n.Ext.(type) {
	case *Type:
		for _, p := range x.Attrs {
			f(p.Key)
			f(p.Value)
		}
	case *ClassInstance:
		f(x.Class)
		for _, p := range x.Attrs {
			f(p.Key)
			f(p.Value)
		}
	}
}

// NamedTuple is the payload of a KindNamedTuple node; the values are the
// node's Refs.
type NamedTuple struct {
	TypeName   string
	FieldNames []string
}

// Date is a proleptic Gregorian date (KindDate).
type Date struct {
	Year  int32
	Month uint32
	Day   uint32
}

// Time is a time of day (KindTime). It is aware when Offset is set.
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
type TimeDelta struct {
	Days, Seconds, Microseconds int32
}

// TimeZone is a fixed-offset timezone (KindTimeZone).
type TimeZone struct {
	Offset int32
	Name   *string
}

// Exception is an exception value (KindException): a type name and an
// optional single string argument.
type Exception struct {
	Type string
	Arg  *string
}

// TypeOrigin says where a class type was defined.
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
type Function struct {
	Name      string
	Docstring *string
}

// FileHandle is an open file object (KindFileHandle). Mode is one of r, rb,
// w, wb, a, ab.
type FileHandle struct {
	Path     string
	Mode     string
	Position uint64
}

// Graph is a flat list of nodes in post-order.
type Graph struct {
	Nodes []Node
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.Nodes) }

// Add appends n and returns its id.
func (g *Graph) Add(n Node) NodeID {
	g.Nodes = append(g.Nodes, n)
	return NodeID(len(g.Nodes) - 1)
}

// Node returns the node with id id. It panics when id is out of range, like
// a slice index; graphs from a peer are validated before they are handed
// out.
func (g *Graph) Node(id NodeID) *Node { return &g.Nodes[id] }

// Reset empties the graph, keeping its storage.
func (g *Graph) Reset() { clear(g.Nodes); g.Nodes = g.Nodes[:0] }

// Append copies every node of o into g, shifting o's ids, and returns the
// offset that maps an id of o to an id of g.
func (g *Graph) Append(o *Graph) NodeID {
	off := NodeID(len(g.Nodes))
	for _, n := range o.Nodes {
		g.Nodes = append(g.Nodes, shift(n, off))
	}
	return off
}

func shift(n Node, off NodeID) Node {
	if off == 0 {
		return n
	}
	if len(n.Refs) > 0 {
		refs := make([]NodeID, len(n.Refs))
		for i, r := range n.Refs {
			refs[i] = r + off
		}
		n.Refs = refs
	}
	switch x := n.Ext.(type) {
	case *Type:
		c := *x
		c.Attrs = shiftPairs(x.Attrs, off)
		n.Ext = &c
	case *ClassInstance:
		c := *x
		c.Class += off
		c.Attrs = shiftPairs(x.Attrs, off)
		n.Ext = &c
	}
	return n
}

func shiftPairs(ps []Pair, off NodeID) []Pair {
	if ps == nil {
		return nil
	}
	out := make([]Pair, len(ps))
	for i, p := range ps {
		out[i] = Pair{p.Key + off, p.Value + off}
	}
	return out
}
