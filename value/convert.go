package value

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Conversion between Go values and graphs, in the spirit of encoding/json:
// FromGo, ToAny and ToGo.

// MaxConvertDepth bounds the nesting of values converted by [FromGo],
// [ToGo] and [ToAny].
const MaxConvertDepth = 10_000

// GraphAppender is implemented by Go types that encode themselves: FromGo
// calls AppendGraph, which appends the type's nodes to g and returns the
// root's id.
type GraphAppender interface {
	AppendGraph(g *Graph) (NodeID, error)
}

// GraphDecoder is implemented by Go types (usually with a pointer receiver)
// that decode themselves: ToGo calls DecodeGraph with the node to decode.
type GraphDecoder interface {
	DecodeGraph(g *Graph, id NodeID) error
}

// TupleValue is a Python tuple.
type TupleValue []any

// SetValue is a Python set.
type SetValue []any

// FrozenSetValue is a Python frozenset.
type FrozenSetValue []any

// KV is one dict entry.
type KV struct {
	Key, Value any
}

// DictValue is a Python dict with its entries in order. It can have keys of
// any hashable kind, unlike a Go map[string]any.
type DictValue []KV

// NamedTupleValue is a named tuple: Values[i] is field Fields[i].
type NamedTupleValue struct {
	TypeName string
	Fields   []string
	Values   []any
}

// PathValue is a pathlib.Path.
type PathValue string

// BuiltinFunctionValue is a builtin function, by name ("len").
type BuiltinFunctionValue string

// ReprValue is the repr text of a value the worker could not send
// structurally. It is output-only.
type ReprValue string

// CycleValue is a reference back to an enclosing container, by its
// placeholder text ("[...]"). It is output-only.
type CycleValue string

// SpecialValue is one of Python's singletons besides None.
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
type Attr struct {
	Name  string
	Value any
}

// ClassValue is a type object. A builtin type has only a Name (and Origin
// OriginBuiltin); a sandbox or host class has an ID. FromGo treats
// OriginUnspecified as OriginBuiltin when ID is zero and as OriginHost
// otherwise.
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
type ObjectValue struct {
	Class      ClassValue
	InstanceID UUID
	Attrs      []Attr
}

// ConversionError reports a value that cannot be converted, for example
// "value: cannot convert str to int" or
// "value: cannot convert int to int8 at [2]: 300 is out of range".
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
	if k.Kind() == reflect.String {
		return "[" + strconv.Quote(k.String()) + "]"
	}
	return "[" + fmt.Sprint(k.Interface()) + "]"
}

var (
	appenderType    = reflect.TypeFor[GraphAppender]()
	decoderType     = reflect.TypeFor[GraphDecoder]()
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[time.Duration]()
	bigIntType      = reflect.TypeFor[big.Int]()
	uuidType        = reflect.TypeFor[UUID]()
	locationType    = reflect.TypeFor[time.Location]()
	locationPtrType = reflect.TypeFor[*time.Location]()
	anyType         = reflect.TypeFor[any]()
)

// ---------------------------------------------------------------------------
// Go -> graph

// FromGo appends the nodes for the Go value v to g and returns the id of
// its root. On error g is left as it was. The mapping is:
//
//	Go                                   Python
//	nil, nil pointer, nil interface      None
//	bool                                 bool
//	intN, uintN                          int (a bigint node above 2**63-1)
//	*big.Int, big.Int                    int
//	float32, float64                     float
//	string (valid UTF-8 only)            str
//	[]byte, [N]byte                      bytes
//	other slices and arrays              list (nil slice: empty list)
//	TupleValue, SetValue, FrozenSetValue tuple, set, frozenset
//	map with string, int, uint, bool or  dict, entries sorted by key (Go maps
//	  float keys (or any holding them)     have no order; nil map: empty dict)
//	DictValue                            dict, in the given order
//	struct                               dict of its exported fields, see below
//	NamedTupleValue                      named tuple
//	time.Time                            aware datetime (see below)
//	time.Duration                        timedelta (truncated to microseconds)
//	Date, Time, DateTime, TimeDelta,     date, time, datetime, timedelta,
//	  TimeZone, Exception, Function,       timezone, exception, function,
//	  FileHandle                           file object
//	ClassValue, ObjectValue              type, class instance
//	PathValue, BuiltinFunctionValue      pathlib.Path, builtin function
//	EllipsisValue, NotImplementedValue   Ellipsis, NotImplemented
//	UUID                                 str (its canonical text)
//	ReprValue, CycleValue                repr and cycle leaves (output-only:
//	                                       the worker refuses them as inputs)
//	GraphAppender                        whatever AppendGraph appends
//
// Struct fields are encoded like encoding/json does it: exported fields only,
// under their Go name or the name of a `monty:"name"` tag; `monty:"-"` skips
// a field, the omitempty option skips false, 0, "", nil and empty
// containers, and omitzero skips zero values (or values whose IsZero method
// reports true). Untagged embedded structs have their fields promoted, with
// encoding/json's rules for conflicting names.
//
// A time.Time is an instant, so it always becomes an aware datetime: its
// offset is the one of its location at that instant, and the zone
// abbreviation becomes the timezone name, except for UTC (time.UTC, or a
// zero offset named "UTC"), which becomes datetime.timezone.utc, and for
// zones without a name. Sub-microsecond digits are dropped. A naive
// datetime is a DateTime with a nil Offset.
//
// Go values that reach themselves through pointers, maps or slices are
// refused with an error, as is nesting deeper than [MaxConvertDepth]. A
// pointer, map or slice met twice (not cyclically) becomes one node
// referenced twice, so Python sees one shared object, as Go does.
func FromGo(g *Graph, v any) (NodeID, error) {
	start := len(g.Nodes)
	e := encoder{g: g}
	id, err := e.encode(reflect.ValueOf(v), 0)
	if err != nil {
		clear(g.Nodes[start:])
		g.Nodes = g.Nodes[:start]
		return 0, finishErr(err)
	}
	return id, nil
}

// visitKey identifies a pointer, map or slice for cycle detection and
// sharing.
type visitKey struct {
	ptr uintptr
	len int
	typ reflect.Type
}

type encoder struct {
	g      *Graph
	onPath map[visitKey]struct{}
	done   map[visitKey]NodeID
}

func (e *encoder) add(n Node) NodeID { return e.g.Add(n) }

func fromGoErr(t reflect.Type, k Kind, reason string) error {
	return &ConversionError{Kind: k, GoType: t, FromGo: true, Reason: reason}
}

// enter records that a reference value is being encoded; it reports a
// cycle, or returns the node of an already-encoded identical reference.
func (e *encoder) enter(k visitKey, t reflect.Type) (NodeID, bool, error) {
	if id, ok := e.done[k]; ok {
		return id, true, nil
	}
	if _, ok := e.onPath[k]; ok {
		return 0, false, fromGoErr(t, KindInvalid, "the value refers to itself (cycle)")
	}
	if e.onPath == nil {
		e.onPath = map[visitKey]struct{}{}
		e.done = map[visitKey]NodeID{}
	}
	e.onPath[k] = struct{}{}
	return 0, false, nil
}

func (e *encoder) leave(k visitKey, id NodeID) {
	delete(e.onPath, k)
	e.done[k] = id
}

func (e *encoder) encode(v reflect.Value, depth int) (NodeID, error) {
	// encode recurses once per level of the Go value; it stays small (the
	// kinds are handled by helpers) so that deep values need little stack.
	for v.Kind() == reflect.Interface {
		if v.IsNil() {
			return e.add(None()), nil
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return e.add(None()), nil
	}
	t := v.Type()
	if depth > MaxConvertDepth {
		return 0, fromGoErr(t, KindInvalid, fmt.Sprintf("nesting exceeds %d levels", MaxConvertDepth))
	}
	if t.Implements(appenderType) {
		if t.Kind() == reflect.Pointer && v.IsNil() {
			return e.add(None()), nil
		}
		return e.appender(v.Interface().(GraphAppender), t)
	}
	if t.Kind() != reflect.Pointer && v.CanAddr() && reflect.PointerTo(t).Implements(appenderType) {
		return e.appender(v.Addr().Interface().(GraphAppender), t)
	}
	if id, ok, err := e.special(v, t, depth); ok || err != nil {
		return id, err
	}
	switch t.Kind() {
	case reflect.Pointer:
		return e.pointer(v, t, depth)
	case reflect.Slice, reflect.Array:
		return e.list(v, t, depth)
	case reflect.Map:
		return e.mapValue(v, t, depth)
	case reflect.Struct:
		return e.structDict(v, depth)
	}
	return e.scalar(v, t)
}

func (e *encoder) scalar(v reflect.Value, t reflect.Type) (NodeID, error) {
	switch t.Kind() {
	case reflect.Bool:
		return e.add(Bool(v.Bool())), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return e.add(Int(v.Int())), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := v.Uint()
		if u <= math.MaxInt64 {
			return e.add(Int(int64(u))), nil
		}
		return e.add(BigIntNode(new(big.Int).SetUint64(u))), nil
	case reflect.Float32, reflect.Float64:
		return e.add(Float(v.Float())), nil
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return 0, fromGoErr(t, KindStr, "invalid UTF-8")
		}
		return e.add(Str(s)), nil
	}
	return 0, fromGoErr(t, KindInvalid, "unsupported type")
}

func (e *encoder) pointer(v reflect.Value, t reflect.Type, depth int) (NodeID, error) {
	if v.IsNil() {
		return e.add(None()), nil
	}
	k := visitKey{ptr: v.Pointer(), typ: t}
	if id, ok, err := e.enter(k, t); ok || err != nil {
		return id, err
	}
	id, err := e.encode(v.Elem(), depth+1)
	if err != nil {
		return 0, err
	}
	e.leave(k, id)
	return id, nil
}

// list encodes a slice or an array: bytes when the elements are bytes, a
// list otherwise.
func (e *encoder) list(v reflect.Value, t reflect.Type, depth int) (NodeID, error) {
	if t.Elem().Kind() == reflect.Uint8 && !elemEncodesItself(t.Elem()) {
		b := make([]byte, v.Len())
		if t.Kind() == reflect.Slice && t.Elem() == reflect.TypeFor[byte]() {
			copy(b, v.Bytes())
		} else {
			for i := range b {
				b[i] = byte(v.Index(i).Uint())
			}
		}
		return e.add(Bytes(b)), nil
	}
	if t.Kind() == reflect.Array || v.Len() == 0 {
		return e.sequence(v, KindList, depth)
	}
	k := visitKey{ptr: v.Pointer(), len: v.Len(), typ: t}
	if id, ok, err := e.enter(k, t); ok || err != nil {
		return id, err
	}
	id, err := e.sequence(v, KindList, depth)
	if err != nil {
		return 0, err
	}
	e.leave(k, id)
	return id, nil
}

func (e *encoder) mapValue(v reflect.Value, t reflect.Type, depth int) (NodeID, error) {
	if v.Len() == 0 {
		return e.add(Dict()), nil
	}
	k := visitKey{ptr: v.Pointer(), typ: t}
	if id, ok, err := e.enter(k, t); ok || err != nil {
		return id, err
	}
	id, err := e.mapDict(v, depth)
	if err != nil {
		return 0, err
	}
	e.leave(k, id)
	return id, nil
}

func elemEncodesItself(t reflect.Type) bool {
	return t.Implements(appenderType) || reflect.PointerTo(t).Implements(appenderType)
}

func (e *encoder) appender(a GraphAppender, t reflect.Type) (NodeID, error) {
	id, err := a.AppendGraph(e.g)
	if err != nil {
		if _, ok := err.(*ConversionError); ok {
			return 0, err
		}
		return 0, fromGoErr(t, KindInvalid, err.Error())
	}
	if int(id) >= len(e.g.Nodes) {
		return 0, fromGoErr(t, KindInvalid, "AppendGraph returned an id outside the graph")
	}
	return id, nil
}

// sequence encodes the items of a slice, array or []any-based value as a
// container of kind k.
func (e *encoder) sequence(v reflect.Value, k Kind, depth int) (NodeID, error) {
	refs := make([]NodeID, v.Len())
	for i := range refs {
		id, err := e.encode(v.Index(i), depth+1)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"]")
		}
		refs[i] = id
	}
	return e.add(Node{Kind: k, Refs: refs}), nil
}

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
}

// special encodes the types with a fixed Python counterpart. ok reports
// whether t was one of them.
func (e *encoder) special(v reflect.Value, t reflect.Type, depth int) (id NodeID, ok bool, err error) {
	sp := specialTypes[t]
	switch sp {
	case notSpecial:
		return 0, false, nil
	case spTuple:
		id, err = e.sequence(v, KindTuple, depth)
	case spSet:
		id, err = e.sequence(v, KindSet, depth)
	case spFrozenSet:
		id, err = e.sequence(v, KindFrozenSet, depth)
	case spDict:
		id, err = e.dictValue(v.Interface().(DictValue), depth)
	case spNamedTuple:
		id, err = e.namedTuple(v.Interface().(NamedTupleValue), t, depth)
	case spClass:
		c := v.Interface().(ClassValue)
		id, err = e.class(&c, depth)
	case spObject:
		o := v.Interface().(ObjectValue)
		id, err = e.object(&o, depth)
	default:
		id, err = e.specialLeaf(sp, v, t)
	}
	return id, true, err
}

func (e *encoder) namedTuple(nt NamedTupleValue, t reflect.Type, depth int) (NodeID, error) {
	if len(nt.Fields) != len(nt.Values) {
		return 0, fromGoErr(t, KindNamedTuple, "Fields and Values differ in length")
	}
	refs := make([]NodeID, len(nt.Values))
	for i, x := range nt.Values {
		var err error
		if refs[i], err = e.encode(reflect.ValueOf(x), depth+1); err != nil {
			return 0, atPath(err, "."+nt.Fields[i])
		}
	}
	return e.add(NamedTupleNode(nt.TypeName, slices.Clone(nt.Fields), refs...)), nil
}

// specialLeaf encodes the special types that have no children.
func (e *encoder) specialLeaf(sp specialType, v reflect.Value, t reflect.Type) (NodeID, error) {
	switch sp {
	case spTime:
		return e.timeValue(v.Interface().(time.Time), t)
	case spDuration:
		us := v.Int() / int64(time.Microsecond)
		days, secs, rem := normTimeDelta(0, 0, us)
		return e.add(TimeDeltaNode(TimeDelta{Days: int32(days), Seconds: int32(secs), Microseconds: int32(rem)})), nil
	case spBigInt:
		b := v.Interface().(big.Int)
		return e.add(BigIntNode(&b)), nil
	case spUUID:
		return e.add(Str(v.Interface().(UUID).String())), nil
	case spDate:
		return e.checked(DateNode(v.Interface().(Date)), t)
	case spTime_:
		return e.checked(TimeNode(v.Interface().(Time)), t)
	case spDateTime:
		return e.checked(DateTimeNode(v.Interface().(DateTime)), t)
	case spTimeDelta:
		x := v.Interface().(TimeDelta)
		days, secs, us := normTimeDelta(int64(x.Days), int64(x.Seconds), int64(x.Microseconds))
		if days < -999_999_999 || days > 999_999_999 {
			return 0, fromGoErr(t, KindTimeDelta, fmt.Sprintf("days %d is outside -999999999..999999999", days))
		}
		return e.add(TimeDeltaNode(TimeDelta{Days: int32(days), Seconds: int32(secs), Microseconds: int32(us)})), nil
	case spTimeZone:
		return e.checked(TimeZoneNode(v.Interface().(TimeZone)), t)
	case spException:
		return e.checked(ExceptionNode(v.Interface().(Exception)), t)
	case spFunction:
		return e.add(FunctionNode(v.Interface().(Function))), nil
	case spFileHandle:
		x := v.Interface().(FileHandle)
		var err error
		if x.Mode, err = NormalizeFileMode(x.Mode); err != nil {
			return 0, fromGoErr(t, KindFileHandle, err.Error())
		}
		return e.add(FileHandleNode(x)), nil
	case spPath:
		return e.add(Path(v.String())), nil
	case spBuiltin:
		return e.add(BuiltinFunction(v.String())), nil
	case spRepr:
		return e.add(Repr(v.String())), nil
	case spCycle:
		return e.add(Cycle(v.String())), nil
	case spSpecial:
		switch SpecialValue(v.Uint()) {
		case EllipsisValue:
			return e.add(Ellipsis()), nil
		case NotImplementedValue:
			return e.add(NotImplemented()), nil
		}
		return 0, fromGoErr(t, KindInvalid, "unknown SpecialValue "+strconv.FormatUint(v.Uint(), 10))
	}
	// spLocation
	return 0, fromGoErr(t, KindInvalid, "a time.Location has no Python counterpart; use TimeZone")
}

// checked adds a payload node after validating it.
func (e *encoder) checked(n Node, t reflect.Type) (NodeID, error) {
	if err := CheckLeaf(&n); err != nil {
		return 0, fromGoErr(t, n.Kind, err.Error())
	}
	return e.add(n), nil
}

func (e *encoder) timeValue(tm time.Time, t reflect.Type) (NodeID, error) {
	name, off := tm.Zone()
	if off < -86399 || off > 86399 {
		return 0, fromGoErr(t, KindDateTime, fmt.Sprintf("UTC offset %ds is outside -86399..86399", off))
	}
	y := tm.Year()
	if y < 1 || y > 9999 {
		return 0, fromGoErr(t, KindDateTime, fmt.Sprintf("year %d is outside 1..9999", y))
	}
	d := DateTime{
		Year: int32(y), Month: uint32(tm.Month()), Day: uint32(tm.Day()),
		Hour: uint32(tm.Hour()), Minute: uint32(tm.Minute()), Second: uint32(tm.Second()),
		Microsecond: uint32(tm.Nanosecond() / 1000),
		Offset:      Ptr(int32(off)),
	}
	if tm.Location() != time.UTC && name != "" && (off != 0 || name != "UTC") {
		d.TZName = Ptr(name)
	}
	return e.add(DateTimeNode(d)), nil
}

func (e *encoder) dictValue(d DictValue, depth int) (NodeID, error) {
	refs := make([]NodeID, 0, 2*len(d))
	for i, kv := range d {
		k, err := e.encode(reflect.ValueOf(kv.Key), depth+1)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"].Key")
		}
		v, err := e.encode(reflect.ValueOf(kv.Value), depth+1)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"].Value")
		}
		refs = append(refs, k, v)
	}
	return e.add(Node{Kind: KindDict, Refs: refs}), nil
}

func (e *encoder) attrs(as []Attr, depth int) ([]Pair, error) {
	if len(as) == 0 {
		return nil, nil
	}
	ps := make([]Pair, len(as))
	for i, a := range as {
		v, err := e.encode(reflect.ValueOf(a.Value), depth+1)
		if err != nil {
			return nil, atPath(err, "."+a.Name)
		}
		ps[i] = Pair{e.add(Str(a.Name)), v}
	}
	return ps, nil
}

func (e *encoder) class(c *ClassValue, depth int) (NodeID, error) {
	t := Type{Name: c.Name, ID: c.ID, Origin: c.Origin, IsDataclass: c.IsDataclass}
	if t.Origin == OriginUnspecified {
		t.Origin = OriginHost
		if t.ID.IsZero() {
			t.Origin = OriginBuiltin
		}
	}
	if t.Origin == OriginBuiltin && (len(c.Attrs) > 0 || !t.ID.IsZero()) {
		return 0, fromGoErr(reflect.TypeFor[ClassValue](), KindType, "a builtin type has neither an ID nor attributes")
	}
	var err error
	if t.Attrs, err = e.attrs(c.Attrs, depth); err != nil {
		return 0, err
	}
	return e.add(TypeNode(t)), nil
}

func (e *encoder) object(o *ObjectValue, depth int) (NodeID, error) {
	cls, err := e.class(&o.Class, depth)
	if err != nil {
		return 0, atPath(err, ".Class")
	}
	if e.g.Nodes[cls].Ext.(*Type).Origin == OriginBuiltin {
		return 0, fromGoErr(reflect.TypeFor[ObjectValue](), KindClassInstance, "the class of an instance must be a sandbox or host class")
	}
	attrs, err := e.attrs(o.Attrs, depth)
	if err != nil {
		return 0, err
	}
	return e.add(ClassInstanceNode(ClassInstance{Class: cls, InstanceID: o.InstanceID, Attrs: attrs})), nil
}

// mapDict encodes a Go map as a dict with its entries sorted by key.
func (e *encoder) mapDict(v reflect.Value, depth int) (NodeID, error) {
	keys := v.MapKeys()
	for _, k := range keys {
		if !keyKindOK(k) {
			return 0, fromGoErr(v.Type(), KindDict, "unsupported map key type "+k.Type().String())
		}
	}
	slices.SortFunc(keys, compareKeys)
	refs := make([]NodeID, 0, 2*len(keys))
	for _, k := range keys {
		kid, err := e.encode(k, depth+1)
		if err != nil {
			return 0, atPath(err, keyPath(k)+".key")
		}
		vid, err := e.encode(v.MapIndex(k), depth+1)
		if err != nil {
			return 0, atPath(err, keyPath(k))
		}
		refs = append(refs, kid, vid)
	}
	return e.add(Node{Kind: KindDict, Refs: refs}), nil
}

func keyKindOK(k reflect.Value) bool {
	if k.Kind() == reflect.Interface {
		if k.IsNil() {
			return false
		}
		k = k.Elem()
	}
	if k.Type() == uuidType {
		return true // becomes a str key
	}
	switch k.Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// compareKeys orders map keys: bools, then numbers (by value, NaN first),
// then strings (bytewise).
func compareKeys(a, b reflect.Value) int {
	if a.Kind() == reflect.Interface {
		a = a.Elem()
	}
	if b.Kind() == reflect.Interface {
		b = b.Elem()
	}
	ra, rb := keyRank(a), keyRank(b)
	if ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch ra {
	case 0:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool()))
	case 2:
		return strings.Compare(keyString(a), keyString(b))
	}
	return compareNumbers(a, b)
}

func keyString(v reflect.Value) string {
	if v.Type() == uuidType {
		return v.Interface().(UUID).String()
	}
	return v.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func keyRank(v reflect.Value) int {
	switch {
	case v.Kind() == reflect.Bool:
		return 0
	case v.Kind() == reflect.String, v.Type() == uuidType:
		return 2
	}
	return 1
}

func compareNumbers(a, b reflect.Value) int {
	isFloat := func(v reflect.Value) bool { return v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64 }
	isUint := func(v reflect.Value) bool { return v.CanUint() }
	if isFloat(a) || isFloat(b) {
		return cmp.Compare(numFloat(a), numFloat(b))
	}
	switch {
	case isUint(a) && isUint(b):
		return cmp.Compare(a.Uint(), b.Uint())
	case !isUint(a) && !isUint(b):
		return cmp.Compare(a.Int(), b.Int())
	case isUint(a): // a unsigned, b signed
		if b.Int() < 0 {
			return 1
		}
		return cmp.Compare(a.Uint(), uint64(b.Int()))
	default:
		if a.Int() < 0 {
			return -1
		}
		return cmp.Compare(uint64(a.Int()), b.Uint())
	}
}

func numFloat(v reflect.Value) float64 {
	switch {
	case v.CanFloat():
		return v.Float()
	case v.CanUint():
		return float64(v.Uint())
	}
	return float64(v.Int())
}

// structDict encodes a struct as a dict of its fields.
func (e *encoder) structDict(v reflect.Value, depth int) (NodeID, error) {
	fields := cachedFields(v.Type())
	refs := make([]NodeID, 0, 2*len(fields))
	for i := range fields {
		f := &fields[i]
		fv, ok := fieldByIndex(v, f.index)
		if !ok {
			continue // behind a nil embedded pointer
		}
		if f.omitEmpty && isEmptyValue(fv) || f.omitZero && isZeroValue(fv) {
			continue
		}
		id, err := e.encode(fv, depth+1)
		if err != nil {
			return 0, atPath(err, "."+f.goName)
		}
		refs = append(refs, e.add(Str(f.name)), id)
	}
	return e.add(Node{Kind: KindDict, Refs: refs}), nil
}

func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

func isZeroValue(v reflect.Value) bool {
	if z, ok := v.Interface().(isZeroer); ok {
		if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	return v.IsZero()
}

// ---------------------------------------------------------------------------
// struct fields

type field struct {
	name      string // the dict key
	goName    string
	tagged    bool
	index     []int
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
}

var fieldCache sync.Map // reflect.Type -> []field

func cachedFields(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	f, _ := fieldCache.LoadOrStore(t, typeFields(t))
	return f.([]field)
}

// typeFields lists the encoded fields of a struct type, promoting the
// fields of untagged embedded structs, with encoding/json's rules: the
// shallowest field of a name wins, a tagged one breaks a tie, and a tie
// that remains drops the name.
func typeFields(t reflect.Type) []field {
	type queued struct {
		typ   reflect.Type
		index []int
	}
	var fields []field
	next := []queued{{typ: t}}
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := range q.typ.NumField() {
				sf := q.typ.Field(i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if sf.Anonymous {
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("monty")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(q.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, queued{typ: ft, index: index})
					continue
				}
				if !sf.IsExported() {
					continue // an unexported embedded struct promotes, never encodes itself
				}
				f := field{name: name, goName: sf.Name, tagged: name != "", index: index, typ: sf.Type}
				if f.name == "" {
					f.name = sf.Name
				}
				for o := range strings.SplitSeq(opts, ",") {
					switch o {
					case "omitempty":
						f.omitEmpty = true
					case "omitzero":
						f.omitZero = true
					}
				}
				fields = append(fields, f)
			}
		}
	}
	// Keep the dominant field of each name.
	slices.SortStableFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.index), len(b.index)); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return 0
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		group := fields[i:j]
		if len(group) == 1 || len(group[1].index) > len(group[0].index) || group[0].tagged && !group[1].tagged {
			out = append(out, group[0])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return slices.Clip(out)
}

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
	d := decoder{g: g}
	v, err := d.any(id, maxParent, 0)
	return v, finishErr(err)
}

// ToGo decodes node id of g into the value dst points to; dst must be a
// non-nil pointer. It converts where Python would, checking ranges: an int
// fits any Go integer type that can hold it, a bigint only *big.Int,
// big.Int, uint64 (up to 2**64-1) or a float; an int converts to a float;
// list, tuple, set and frozenset decode into slices or (of exactly the right
// length) arrays; dict, named tuple and class instance decode into maps and
// structs (fields matched by tag or name, exactly, then case-insensitively;
// unknown keys are ignored); datetime and date decode into time.Time (a
// naive datetime and a date are taken as UTC), timedelta into time.Duration
// (overflow checked); a str or a pathlib.Path decodes into a string, a str
// into a UUID (parsed), a timezone into a *time.Location; None decodes into
// pointers, interfaces, slices and maps as nil and is an error for anything
// else. Each kind also decodes into its own type of the [ToAny] table, and an
// empty interface destination receives what ToAny returns. A type
// implementing [GraphDecoder] decodes itself.
func ToGo(g *Graph, id NodeID, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &ConversionError{GoType: reflect.TypeOf(dst), Reason: "the destination must be a non-nil pointer"}
	}
	d := decoder{g: g}
	return finishErr(d.decode(id, maxParent, rv.Elem(), 0))
}

// maxParent is the "parent" of a root: every valid id is below it.
const maxParent = NodeID(math.MaxUint32)

type decoder struct {
	g    *Graph
	memo map[NodeID]any
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

func (d *decoder) any(id, parent NodeID, depth int) (any, error) {
	n, err := d.node(id, parent, anyType, depth)
	if err != nil {
		return nil, err
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
	out := make([]any, len(n.Refs))
	for i, r := range n.Refs {
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
		return n.Text, nil
	case KindBytes:
		b, ok := n.Ext.([]byte)
		if !ok {
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
		nt, ok := n.Ext.(*NamedTuple)
		if !ok {
			return nil, missingPayload(n)
		}
		v, err := d.items(n, id, depth)
		if err != nil {
			return nil, err
		}
		return NamedTupleValue{TypeName: nt.TypeName, Fields: slices.Clone(nt.FieldNames), Values: v}, nil
	case KindDate:
		x, ok := n.Ext.(*Date)
		if !ok {
			return nil, missingPayload(n)
		}
		return *x, nil
	case KindTime:
		x, ok := n.Ext.(*Time)
		if !ok {
			return nil, missingPayload(n)
		}
		c := *x
		c.Offset, c.TZName = clonePtr(x.Offset), clonePtr(x.TZName)
		return c, nil
	case KindDateTime:
		x, ok := n.Ext.(*DateTime)
		if !ok {
			return nil, missingPayload(n)
		}
		if x.Offset == nil {
			return *x, nil
		}
		return awareTime(x), nil
	case KindTimeDelta:
		x, ok := n.Ext.(*TimeDelta)
		if !ok {
			return nil, missingPayload(n)
		}
		dur, ok := timeDeltaDuration(x)
		if !ok {
			return nil, toGoErr(n.Kind, durationType, "the duration overflows time.Duration")
		}
		return dur, nil
	case KindTimeZone:
		x, ok := n.Ext.(*TimeZone)
		if !ok {
			return nil, missingPayload(n)
		}
		return TimeZone{Offset: x.Offset, Name: clonePtr(x.Name)}, nil
	case KindException:
		x, ok := n.Ext.(*Exception)
		if !ok {
			return nil, missingPayload(n)
		}
		return Exception{Type: x.Type, Arg: clonePtr(x.Arg)}, nil
	case KindType:
		return d.class(n, id, depth)
	case KindClassInstance:
		ci, ok := n.Ext.(*ClassInstance)
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
		x, ok := n.Ext.(*Function)
		if !ok {
			return nil, missingPayload(n)
		}
		return Function{Name: x.Name, Docstring: clonePtr(x.Docstring)}, nil
	case KindBuiltinFunction:
		return BuiltinFunctionValue(n.Text), nil
	case KindPath:
		return PathValue(n.Text), nil
	case KindFileHandle:
		x, ok := n.Ext.(*FileHandle)
		if !ok {
			return nil, missingPayload(n)
		}
		return *x, nil
	case KindRepr:
		return ReprValue(n.Text), nil
	case KindCycle:
		return CycleValue(n.Text), nil
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
	for i := 0; i+1 < len(n.Refs); i += 2 {
		if k := n.Refs[i]; int(k) >= len(d.g.Nodes) || d.g.Nodes[k].Kind != KindStr {
			allStr = false
			break
		}
	}
	if allStr {
		m := make(map[string]any, len(n.Refs)/2)
		for i := 0; i+1 < len(n.Refs); i += 2 {
			if _, err := d.node(n.Refs[i], id, anyType, depth+1); err != nil {
				return nil, err
			}
			k := d.g.Nodes[n.Refs[i]].Text
			v, err := d.any(n.Refs[i+1], id, depth+1)
			if err != nil {
				return nil, atPath(err, "["+strconv.Quote(k)+"]")
			}
			m[k] = v
		}
		return m, nil
	}
	out := make(DictValue, 0, len(n.Refs)/2)
	for i := 0; i+1 < len(n.Refs); i += 2 {
		k, err := d.any(n.Refs[i], id, depth+1)
		if err != nil {
			return nil, atPath(err, "[key "+strconv.Itoa(i/2)+"]")
		}
		v, err := d.any(n.Refs[i+1], id, depth+1)
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
			return nil, atPath(err, "."+kn.Text)
		}
		out[i] = Attr{Name: kn.Text, Value: v}
	}
	return out, nil
}

func (d *decoder) class(n *Node, id NodeID, depth int) (ClassValue, error) {
	t, ok := n.Ext.(*Type)
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
	if v.CanAddr() && reflect.PointerTo(t).Implements(decoderType) {
		return v.Addr().Interface().(GraphDecoder).DecodeGraph(d.g, id)
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
	if ok, err := d.decodeSpecial(n, id, parent, v, depth); ok || err != nil {
		return err
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
		v.SetString(n.Text)
		return nil
	case reflect.Slice:
		if n.Kind == KindBytes && t.Elem().Kind() == reflect.Uint8 {
			b, _ := n.Ext.([]byte)
			s := reflect.MakeSlice(t, len(b), len(b))
			setBytes(s, b)
			v.Set(s)
			return nil
		}
		if !isSequence(n.Kind) {
			return fail("")
		}
		s := reflect.MakeSlice(t, len(n.Refs), len(n.Refs))
		for i, r := range n.Refs {
			if err := d.decode(r, id, s.Index(i), depth+1); err != nil {
				return atPath(err, "["+strconv.Itoa(i)+"]")
			}
		}
		v.Set(s)
		return nil
	case reflect.Array:
		if n.Kind == KindBytes && t.Elem().Kind() == reflect.Uint8 {
			b, _ := n.Ext.([]byte)
			if len(b) != t.Len() {
				return fail(fmt.Sprintf("%d bytes do not fit an array of %d", len(b), t.Len()))
			}
			setBytes(v, b)
			return nil
		}
		if !isSequence(n.Kind) {
			return fail("")
		}
		if len(n.Refs) != t.Len() {
			return fail(fmt.Sprintf("%d items do not fit an array of %d", len(n.Refs), t.Len()))
		}
		for i, r := range n.Refs {
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
		es := make([]entry, 0, len(n.Refs)/2)
		for i := 0; i+1 < len(n.Refs); i += 2 {
			kn, err := d.node(n.Refs[i], id, t, depth+1)
			if err != nil {
				return nil, true, err
			}
			e := entry{key: n.Refs[i], value: n.Refs[i+1]}
			if kn.Kind == KindStr {
				e.name, e.named = kn.Text, true
			}
			es = append(es, e)
		}
		return es, true, nil
	case KindNamedTuple:
		nt, ok := n.Ext.(*NamedTuple)
		if !ok || len(nt.FieldNames) != len(n.Refs) {
			return nil, true, toGoErr(n.Kind, t, "field names and values differ in length")
		}
		es := make([]entry, len(n.Refs))
		for i, r := range n.Refs {
			es[i] = entry{name: nt.FieldNames[i], named: true, value: r}
		}
		return es, false, nil
	case KindClassInstance:
		ci, ok := n.Ext.(*ClassInstance)
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
			es[i] = entry{name: kn.Text, named: true, value: p.Value}
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
	m := reflect.MakeMapWithSize(t, len(es))
	for _, e := range es {
		k := reflect.New(t.Key()).Elem()
		if isDict {
			if err := d.decode(e.key, id, k, depth+1); err != nil {
				return atPath(err, "[key]")
			}
		} else {
			k.SetString(e.name)
		}
		val := reflect.New(t.Elem()).Elem()
		if err := d.decode(e.value, id, val, depth+1); err != nil {
			return atPath(err, entryPath(d.g, e))
		}
		m.SetMapIndex(k, val)
	}
	v.Set(m)
	return nil
}

func entryPath(g *Graph, e entry) string {
	if e.named {
		return "[" + strconv.Quote(e.name) + "]"
	}
	return "[" + g.Repr(e.key) + "]"
}

func (d *decoder) decodeStruct(n *Node, id NodeID, v reflect.Value, depth int) error {
	t := v.Type()
	es, _, err := d.entries(n, id, t, depth)
	if err != nil {
		return err
	}
	fields := cachedFields(t)
	for _, e := range es {
		if !e.named {
			return toGoErr(d.g.Nodes[e.key].Kind, t, "a struct field name must be a str")
		}
		f := findField(fields, e.name)
		if f == nil {
			continue
		}
		fv, err := settableField(v, f.index)
		if err != nil {
			return toGoErr(n.Kind, t, err.Error())
		}
		if err := d.decode(e.value, id, fv, depth+1); err != nil {
			return atPath(err, "."+f.goName)
		}
	}
	return nil
}

func findField(fs []field, name string) *field {
	for i := range fs {
		if fs[i].name == name {
			return &fs[i]
		}
	}
	for i := range fs {
		if strings.EqualFold(fs[i].name, name) {
			return &fs[i]
		}
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
	case timeType:
		switch x := n.Ext.(type) {
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
		x, ok := n.Ext.(*TimeDelta)
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
		u, err := ParseUUID(n.Text)
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
		out := make(DictValue, 0, len(n.Refs)/2)
		for i := 0; i+1 < len(n.Refs); i += 2 {
			k, err := d.any(n.Refs[i], id, depth+1)
			if err != nil {
				return true, err
			}
			val, err := d.any(n.Refs[i+1], id, depth+1)
			if err != nil {
				return true, err
			}
			out = append(out, KV{k, val})
		}
		v.Set(reflect.ValueOf(out))
		return true, nil
	case reflect.TypeFor[DateTime]():
		x, ok := n.Ext.(*DateTime)
		if n.Kind != KindDateTime || !ok {
			return fail("")
		}
		c := *x
		c.Offset, c.TZName = clonePtr(x.Offset), clonePtr(x.TZName)
		v.Set(reflect.ValueOf(c))
		return true, nil
	case reflect.TypeFor[TimeDelta]():
		x, ok := n.Ext.(*TimeDelta)
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
	return false, nil
}

// decodeLocation stores a timezone into a *time.Location: time.UTC for
// timezone.utc, a fixed zone otherwise.
func (d *decoder) decodeLocation(n *Node, v reflect.Value) error {
	x, ok := n.Ext.(*TimeZone)
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
