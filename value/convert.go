package value

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Conversion between Go values and graphs, in the spirit of encoding/json:
// FromGo, ToAny and ToGo.

// MaxConvertDepth bounds the nesting of values converted by [FromGo],
// [ToGo] and [ToAny].
const MaxConvertDepth = 10_000

// MaxConvertNodes bounds the nodes one [FromGo] (or [Encoder.Encode])
// conversion appends: no frame can carry more, each node taking at least
// four bytes of one and a frame at most 256 MiB. Go values hold as many
// nodes only when they are slices or arrays of zero-size items
// (make([]struct{}, 1<<40) costs Go no memory), which would otherwise
// convert item by item until memory ran out.
const MaxConvertNodes = 1 << 26

// ErrTooManyNodes is matched (errors.Is) by the *ConversionError of a
// conversion that would append more than [MaxConvertNodes] nodes; it is
// returned before the nodes are allocated.
var ErrTooManyNodes = errors.New("value: conversion exceeds MaxConvertNodes nodes")

// GraphAppender is implemented by Go types that encode themselves: FromGo
// calls AppendGraph, which appends the type's nodes to g and returns the
// root's id.
//
// FromGo calls it on the converting goroutine; a value converted from
// several goroutines at once must allow concurrent AppendGraph calls.
type GraphAppender interface {
	AppendGraph(g *Graph) (NodeID, error)
}

// GraphDecoder is implemented by Go types (usually with a pointer receiver)
// that decode themselves: ToGo calls DecodeGraph with the node to decode.
//
// ToGo calls it on the converting goroutine, on the destination it was
// given, which the caller must not share with another conversion.
type GraphDecoder interface {
	DecodeGraph(g *Graph, id NodeID) error
}

// TupleValue is a Python tuple.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type TupleValue []any

// SetValue is a Python set.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type SetValue []any

// FrozenSetValue is a Python frozenset.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type FrozenSetValue []any

// KV is one dict entry.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type KV struct {
	Key, Value any
}

// DictValue is a Python dict with its entries in order. It can have keys of
// any hashable kind, unlike a Go map[string]any.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type DictValue []KV

// NamedTupleValue is a named tuple: Values[i] is field Fields[i].
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type NamedTupleValue struct {
	TypeName string
	Fields   []string
	Values   []any
}

// PathValue is a pathlib.Path.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type PathValue string

// BuiltinFunctionValue is a builtin function, by name ("len").
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type BuiltinFunctionValue string

// ReprValue is the repr text of a value the worker could not send
// structurally. It is output-only.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type ReprValue string

// CycleValue is a reference back to an enclosing container, by its
// placeholder text ("[...]"). It is output-only.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type CycleValue string

// SpecialValue is one of Python's singletons besides None.
//
// It is a plain value, safe for concurrent use.
type SpecialValue uint8

// The special values.
const (
	EllipsisValue       SpecialValue = 1
	NotImplementedValue SpecialValue = 2
)

// String returns the Python name of the value.
func (s SpecialValue) String() string {
	switch s {
	case EllipsisValue:
		return "Ellipsis"
	case NotImplementedValue:
		return "NotImplemented"
	}
	return "SpecialValue(" + strconv.Itoa(int(s)) + ")"
}

// Attr is a named attribute of a class or instance.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type Attr struct {
	Name  string
	Value any
}

// ClassValue is a type object. A builtin type has only a Name (and Origin
// OriginBuiltin); a sandbox or host class has an ID. FromGo treats
// OriginUnspecified as OriginBuiltin when ID is zero and as OriginHost
// otherwise.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type ClassValue struct {
	Name        string
	ID          UUID
	Origin      TypeOrigin
	IsDataclass bool
	Attrs       []Attr
}

// ObjectValue is an instance of a sandbox or host class. FromGo sends
// InstanceID as it is: give each host instance its own (see [NewUUID]),
// since the worker treats equal ids as one object.
//
// It is plain data: safe to read from several goroutines, not to modify
// concurrently.
type ObjectValue struct {
	Class      ClassValue
	InstanceID UUID
	Attrs      []Attr
}

// ConversionError reports a value that cannot be converted, for example
// "value: cannot convert str to int" or
// "value: cannot convert int to int8 at [2]: 300 is out of range".
//
// It is not modified after it is returned; it is safe to read concurrently.
type ConversionError struct {
	// Kind is the node kind on the Python side; KindInvalid when there is
	// none (an unsupported Go type).
	Kind Kind
	// GoType is the Go type on the other side; nil when unknown.
	GoType reflect.Type
	// FromGo is set for errors of FromGo, clear for ToGo and ToAny.
	FromGo bool
	// Reason is an optional detail.
	Reason string
	// Path locates the value inside the converted one: [3] for an item,
	// ["k"] for a dict entry, .Name for a struct field; empty at the root.
	// The middle of a very long path is elided.
	Path string
	// Err is the underlying error, when one caused this one (an error of a
	// GraphAppender, GraphDecoder or conversion hook).
	Err error

	segs []string // path segments, innermost first, while unwinding
}

func (e *ConversionError) Error() string {
	var b strings.Builder
	b.WriteString("value: cannot convert ")
	goName := "Go value"
	if e.GoType != nil {
		goName = e.GoType.String()
	}
	if e.FromGo {
		b.WriteString("Go ")
		if e.GoType != nil {
			b.WriteString(e.GoType.String())
		} else {
			b.WriteString("value")
		}
		if e.Kind != KindInvalid {
			b.WriteString(" to ")
			b.WriteString(e.Kind.String())
		}
	} else if e.Kind == KindInvalid {
		// Not about a node's kind: a bad destination or a malformed graph.
		b.Reset()
		b.WriteString("value: cannot decode into ")
		b.WriteString(goName)
	} else {
		b.WriteString(e.Kind.String())
		b.WriteString(" to ")
		b.WriteString(goName)
	}
	if e.Path != "" {
		b.WriteString(" at ")
		b.WriteString(e.Path)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *ConversionError) Unwrap() error { return e.Err }

// atPath records that a nested conversion error happened inside seg. The
// segments are collected innermost first and joined once, by finishErr, so
// that unwinding a deep value stays linear.
func atPath(err error, seg string) error {
	if ce, ok := err.(*ConversionError); ok {
		if len(ce.segs) == 0 && ce.Path != "" {
			ce.segs = append(ce.segs, ce.Path) // finished by a nested call
		}
		ce.segs = append(ce.segs, seg)
	}
	return err
}

// callerErr turns err, returned by a caller's hook, GraphAppender or
// GraphDecoder for a value of Go type t (and node kind k), into an error
// of the conversion's own: a copy of it when it is a *ConversionError (the
// conversion writes the path into its error as it unwinds, and the
// caller's may be shared, a sentinel returned by every call), else a
// *ConversionError wrapping it.
func callerErr(err error, k Kind, t reflect.Type, fromGo bool) error {
	if ce, ok := err.(*ConversionError); ok {
		c := *ce
		// An error of EncodeState.Encode, still unwinding, keeps the
		// segments collected so far.
		c.segs = slices.Clone(ce.segs)
		return &c
	}
	return &ConversionError{Kind: k, GoType: t, FromGo: fromGo, Reason: err.Error(), Err: err}
}

// maxPathSegments bounds how much of a path an error shows.
const maxPathSegments = 24

func finishErr(err error) error {
	ce, ok := err.(*ConversionError)
	if !ok || len(ce.segs) == 0 {
		return err
	}
	var b strings.Builder
	n := len(ce.segs)
	for i := n - 1; i >= 0; i-- {
		if n > maxPathSegments && i == n-maxPathSegments/2-1 {
			fmt.Fprintf(&b, "...(%d more)...", n-maxPathSegments)
			i = maxPathSegments / 2
			continue
		}
		b.WriteString(ce.segs[i])
	}
	ce.Path = b.String()
	ce.segs = nil
	return err
}

func keyPath(k reflect.Value) string {
	if k.Kind() == reflect.Interface {
		k = k.Elem()
	}
	if !k.IsValid() {
		return "[None]"
	}
	if k.Kind() == reflect.String {
		return "[" + strconv.Quote(k.String()) + "]"
	}
	return "[" + fmt.Sprint(k.Interface()) + "]"
}

var (
	appenderType        = reflect.TypeFor[GraphAppender]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	decoderType         = reflect.TypeFor[GraphDecoder]()
	timeType            = reflect.TypeFor[time.Time]()
	durationType        = reflect.TypeFor[time.Duration]()
	bigIntType          = reflect.TypeFor[big.Int]()
	uuidType            = reflect.TypeFor[UUID]()
	locationType        = reflect.TypeFor[time.Location]()
	locationPtrType     = reflect.TypeFor[*time.Location]()
	anyType             = reflect.TypeFor[any]()
)

// specialType numbers the Go types with a fixed Python counterpart.
type specialType uint8

const (
	notSpecial specialType = iota
	spTime
	spDuration
	spBigInt
	spUUID
	spDate
	spTime_
	spDateTime
	spTimeDelta
	spTimeZone
	spException
	spFunction
	spFileHandle
	spTuple
	spSet
	spFrozenSet
	spDict
	spNamedTuple
	spPath
	spBuiltin
	spRepr
	spCycle
	spSpecial
	spClass
	spObject
	spLocation
	spJSON
	spNumber
	// spNoPython: a type with no Python counterpart that would otherwise
	// convert as a struct without exported fields (an empty dict),
	// losing its value: refused both ways.
	spNoPython
)

var specialTypes = map[reflect.Type]specialType{
	timeType:                                spTime,
	durationType:                            spDuration,
	bigIntType:                              spBigInt,
	uuidType:                                spUUID,
	reflect.TypeFor[Date]():                 spDate,
	reflect.TypeFor[Time]():                 spTime_,
	reflect.TypeFor[DateTime]():             spDateTime,
	reflect.TypeFor[TimeDelta]():            spTimeDelta,
	reflect.TypeFor[TimeZone]():             spTimeZone,
	reflect.TypeFor[Exception]():            spException,
	reflect.TypeFor[Function]():             spFunction,
	reflect.TypeFor[FileHandle]():           spFileHandle,
	reflect.TypeFor[TupleValue]():           spTuple,
	reflect.TypeFor[SetValue]():             spSet,
	reflect.TypeFor[FrozenSetValue]():       spFrozenSet,
	reflect.TypeFor[DictValue]():            spDict,
	reflect.TypeFor[NamedTupleValue]():      spNamedTuple,
	reflect.TypeFor[PathValue]():            spPath,
	reflect.TypeFor[BuiltinFunctionValue](): spBuiltin,
	reflect.TypeFor[ReprValue]():            spRepr,
	reflect.TypeFor[CycleValue]():           spCycle,
	reflect.TypeFor[SpecialValue]():         spSpecial,
	reflect.TypeFor[ClassValue]():           spClass,
	reflect.TypeFor[ObjectValue]():          spObject,
	locationType:                            spLocation,
	jsonType:                                spJSON,
	numberType:                              spNumber,
	reflect.TypeFor[big.Float]():            spNoPython,
	reflect.TypeFor[big.Rat]():              spNoPython,
}

// special encodes the types with a fixed Python counterpart. ok reports

// noPython is the reason a type marked spNoPython is refused.
func noPython(t reflect.Type) string {
	return "a " + t.String() + " has no Python counterpart"
}
