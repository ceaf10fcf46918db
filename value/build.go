package value

import (
	"encoding/hex"
	"errors"
	"math"
	"math/big"

	"github.com/google/uuid"
)

// UUID is a 16-byte object identity. Each side generates uuid4 values for
// the classes and instances it defines; identities are never addresses.
//
// It is a plain value, safe for concurrent use.
type UUID [16]byte

// NewUUID returns a random (version 4) UUID.
func NewUUID() UUID { return UUID(uuid.New()) }

// IsZero reports whether u is all zeros.
func (u UUID) IsZero() bool { return u == UUID{} }

// String renders u in the canonical 8-4-4-4-12 hex form.
func (u UUID) String() string { return uuid.UUID(u).String() }

// ParseUUID parses the canonical text form (or 32 hex digits). On error
// it returns the zero UUID.
func ParseUUID(s string) (UUID, error) {
	if len(s) == 32 {
		var u UUID
		if _, err := hex.Decode(u[:], []byte(s)); err != nil {
			return UUID{}, errors.New("value: invalid uuid " + s)
		}
		return u, nil
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return UUID{}, errors.New("value: invalid uuid " + s)
	}
	return UUID(u), nil
}

// Constructors for leaf nodes. Container constructors take the ids of
// children that are already in the graph.

// None returns a None node.
func None() Node { return Node{Kind: KindNone} }

// Ellipsis returns an Ellipsis node.
func Ellipsis() Node { return Node{Kind: KindEllipsis} }

// NotImplemented returns a NotImplemented node.
func NotImplemented() Node { return Node{Kind: KindNotImplemented} }

// Bool returns a bool node.
func Bool(b bool) Node {
	n := Node{Kind: KindBool}
	if b {
		n.Num = 1
	}
	return n
}

// Int returns an int node.
func Int(v int64) Node { return Node{Kind: KindInt, Num: uint64(v)} }

// BigIntNode returns an int node for an arbitrary-precision integer: a
// KindInt node when v fits in int64, otherwise a KindBigInt node holding a
// copy of v.
func BigIntNode(v *big.Int) Node {
	if v.IsInt64() {
		return Int(v.Int64())
	}
	return Node{Kind: KindBigInt}.WithExt(new(big.Int).Set(v))
}

// Float returns a float node.
func Float(f float64) Node { return Node{Kind: KindFloat, Num: math.Float64bits(f)} }

// Str returns a str node.
func Str(s string) Node { return Node{Kind: KindStr}.WithText(s) }

// Bytes returns a bytes node holding b (not copied).
func Bytes(b []byte) Node {
	if b == nil {
		b = []byte{}
	}
	return Node{Kind: KindBytes}.WithExt(b)
}

// Path returns a pathlib.Path node.
func Path(p string) Node { return Node{Kind: KindPath}.WithText(p) }

// BuiltinFunction returns a node for a builtin function such as "len".
func BuiltinFunction(name string) Node { return Node{Kind: KindBuiltinFunction}.WithText(name) }

// Repr returns an output-only node carrying the repr of a value that has no
// structured encoding.
func Repr(s string) Node { return Node{Kind: KindRepr}.WithText(s) }

// Cycle returns an output-only cycle leaf with the given placeholder.
func Cycle(placeholder string) Node { return Node{Kind: KindCycle}.WithText(placeholder) }

// List returns a list node over already-added items.
func List(items ...NodeID) Node { return Node{Kind: KindList}.WithRefs(items) }

// Tuple returns a tuple node.
func Tuple(items ...NodeID) Node { return Node{Kind: KindTuple}.WithRefs(items) }

// Set returns a set node.
func Set(items ...NodeID) Node { return Node{Kind: KindSet}.WithRefs(items) }

// FrozenSet returns a frozenset node.
func FrozenSet(items ...NodeID) Node { return Node{Kind: KindFrozenSet}.WithRefs(items) }

// Dict returns a dict node from pairs.
func Dict(pairs ...Pair) Node {
	refs := make([]NodeID, 0, 2*len(pairs))
	for _, p := range pairs {
		refs = append(refs, p.Key, p.Value)
	}
	return Node{Kind: KindDict}.WithRefs(refs)
}

// NamedTupleNode returns a named tuple node.
func NamedTupleNode(typeName string, fields []string, values ...NodeID) Node {
	return Node{Kind: KindNamedTuple}.WithRefs(values).WithExt(&NamedTuple{TypeName: typeName, FieldNames: fields})
}

// DateNode returns a date node.
func DateNode(d Date) Node { return Node{Kind: KindDate}.WithExt(&d) }

// TimeNode returns a time node.
func TimeNode(t Time) Node { return Node{Kind: KindTime}.WithExt(&t) }

// DateTimeNode returns a datetime node.
func DateTimeNode(d DateTime) Node { return Node{Kind: KindDateTime}.WithExt(&d) }

// TimeDeltaNode returns a timedelta node.
func TimeDeltaNode(d TimeDelta) Node { return Node{Kind: KindTimeDelta}.WithExt(&d) }

// TimeZoneNode returns a timezone node.
func TimeZoneNode(z TimeZone) Node { return Node{Kind: KindTimeZone}.WithExt(&z) }

// ExceptionNode returns an exception value node.
func ExceptionNode(e Exception) Node { return Node{Kind: KindException}.WithExt(&e) }

// TypeNode returns a type node.
func TypeNode(t Type) Node { return Node{Kind: KindType}.WithExt(&t) }

// BuiltinType returns a node for a builtin type such as "int".
func BuiltinType(name string) Node {
	return Node{Kind: KindType}.WithExt(&Type{Name: name, Origin: OriginBuiltin})
}

// ClassInstanceNode returns a class instance node.
func ClassInstanceNode(c ClassInstance) Node { return Node{Kind: KindClassInstance}.WithExt(&c) }

// FunctionNode returns a host function value node.
func FunctionNode(f Function) Node { return Node{Kind: KindFunction}.WithExt(&f) }

// FileHandleNode returns a file handle node.
func FileHandleNode(f FileHandle) Node { return Node{Kind: KindFileHandle}.WithExt(&f) }

// Ptr returns a pointer to v; handy for the optional fields of the payload
// structs.
func Ptr[T any](v T) *T { return &v }
