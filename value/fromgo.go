package value

import (
	"cmp"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
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
//	map with string, int, uint, bool,    dict, entries sorted by key (Go maps
//	  float, TextMarshaler, date or        have no order; nil map: empty dict);
//	  time keys, or arrays of them (or     an array key is a tuple of its
//	  any holding them): [KeyConverts]     items as keys ([N]byte: bytes)
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
//	json.RawMessage                      the value of the JSON text, as
//	                                       [FromJSON] reads it (empty: None)
//	json.Number                          int or float, as [FromJSON] reads
//	                                       the number (empty: 0)
//	GraphAppender                        whatever AppendGraph appends
//	other types implementing             str, their MarshalText, whatever their
//	  encoding.TextMarshaler (or whose     kind, as encoding/json writes them
//	  pointer does)                        (netip.Addr, slog.Level, net.IP)
//	other types implementing             the value of their MarshalJSON's
//	  json.Marshaler (or whose pointer     text, as [FromJSON] reads it,
//	  does)                                whatever their kind
//
// Struct fields are encoded like encoding/json does it: exported fields only,
// under their Go name or the name of a `monty:"name"` tag; `monty:"-"` skips
// a field, the omitempty option skips false, 0, "", nil and empty
// containers, and omitzero skips zero values (or values whose IsZero method
// reports true). A field without a `monty` tag reads its `json` tag the
// same way (name, "-", omitempty, omitzero), so a type written for
// encoding/json shows Python the keys its JSON has; a `monty` tag, even an
// empty one, overrides it. The tags' string option, with which
// encoding/json writes a number or a bool as a JSON string, is ignored:
// Python gets the number or the bool. Untagged embedded structs have
// their fields promoted, with encoding/json's rules for conflicting names.
//
// A map's entries are sorted by key: bools, then numbers (equal numbers of
// different Go types by type name; NaN keys, equal to one another, by the
// repr of their values), then strings (a TextMarshaler key by its text;
// equal texts of different Go types by type name, of one type by the repr
// of their values), then bytes, then tuples (both item by item, then by
// length), then dates and times (datetimes, dates, times, timedeltas,
// timezones; naive before aware, in time, aware ones by instant), so the
// dict's order does not depend on Go's map iteration. Map key types other
// than those [KeyConverts] accepts are refused. Keys that are distinct in
// Go but one key to the worker (1, 1.0 and true in a map[any]; two keys
// with one text; NaNs; one instant in two zones) are all
// written, and the worker keeps one entry of each such group, with the
// value of the last. Every NaN key (and NaN item of a tuple key) is
// written with the bits of Python's float('nan'), whatever the Go NaN's
// (a float32 NaN, a payload): the worker takes NaN keys with one bit
// pattern as one key, so the sandbox sees one nan key, which
// float('nan') finds, holding the value of the last NaN entry (of one Go
// type, the value whose repr sorts last; of several, the last type's by
// name).
//
// Every string FromGo writes must be valid UTF-8, as the protocol
// requires: a str, and also the text of a path, a time zone's name, an
// exception's argument, a named tuple's or a class's names; one that is
// not is refused with an error.
//
// The encoding.TextMarshaler rule follows encoding/json, a method promoted
// from an embedded field included: a struct that embeds a netip.Addr (or a
// time.Time) converts to the embedded value's text alone; give it a
// MarshalText of its own, or a named field, to keep its other fields.
//
// The json.Marshaler rule does too (a type whose only custom form is its
// JSON, its fields unexported, converts to what encoding/json writes for
// it, not to {}), with one difference in precedence: the dedicated
// conversions of the table come first (time.Time, json.RawMessage,
// GraphAppender, ...), then MarshalText, then MarshalJSON, where
// encoding/json calls MarshalJSON before MarshalText. A type with both
// forms thus always converts to a str, its text (for slog.Level the two
// agree). The JSON is read as [FromJSON] reads a json.RawMessage's, and
// a text that is not JSON is refused with an error.
//
// A big.Float or a big.Rat, for which Python has no type, is refused with
// an error (convert it with its Float64 method first), as is a
// time.Location value (use a *time.Location or TimeZone): none converts
// as a struct.
//
// A *time.Location that is not nil becomes a datetime.timezone when its
// zone is fixed (time.FixedZone, an IANA zone such as Etc/GMT+5 whose
// offset never changed): its offset, and its zone's abbreviation as the
// name, except for UTC (as for a time.Time below), which becomes
// datetime.timezone.utc, and for a zone without a name. A location whose
// offset changes (America/New_York) has no Python timezone and is
// refused with an error; ToGo reads a timezone back as a fixed zone of
// that name and offset (time.UTC for timezone.utc).
//
// A time.Time is an instant, so it always becomes an aware datetime: its
// offset is the one of its location at that instant, and the zone
// abbreviation becomes the timezone name, except for UTC (time.UTC, or a
// zero offset named "UTC"), which becomes datetime.timezone.utc, and for
// zones without a name. Sub-microsecond digits are dropped. A naive
// datetime is a DateTime with a nil Offset.
//
// Go values that reach themselves through pointers, maps or slices are
// refused with an error, as is nesting deeper than [MaxConvertDepth], and
// a value that would append more than [MaxConvertNodes] nodes (a slice of
// zero-size items can be that long) is refused, before they are
// allocated, with an error matching [ErrTooManyNodes]. A
// pointer, map or slice met twice (not cyclically) becomes one node
// referenced twice, so Python sees one shared object, as Go does; an empty
// map or slice, and a pointer to or a slice of zero-size values (which Go
// may place at one address), become a node at each reference.
func FromGo(g *Graph, v any) (NodeID, error) {
	var e Encoder
	return e.Encode(g, v)
}

// EncodeHook is consulted by an [Encoder] for a Go value before the default
// rules of [FromGo]. It returns handled false to leave v to those rules, or
// the id of the node it appended for v. It appends through s (and converts
// nested values with s.Encode, which consults the hook again).
//
// An Encoder calls it on the converting goroutine; an Encoder used from
// several goroutines at once calls it concurrently.
type EncodeHook func(s *EncodeState, v reflect.Value) (id NodeID, handled bool, err error)

// Encoder converts Go values into graph nodes like [FromGo], with a hook
// consulted at every node. The zero Encoder is FromGo. An Encoder is
// plain configuration, safe for concurrent use when its hooks are.
type Encoder struct {
	// Hook, when set, is consulted for every Go value met (after
	// interfaces are unwrapped, before GraphAppender and the default
	// rules), nil pointers and nil interfaces excepted.
	Hook EncodeHook
	// HookTypes, when set, says which Go types the hook wants to see; the
	// hook is not called for values of other types. A conversion asks it
	// at most once per type, so containers of types it refuses keep their
	// fast paths.
	HookTypes func(reflect.Type) bool
}

// Encode appends the nodes for v to g and returns the id of its root. On
// error g is left as it was. A nil g is a *ConversionError.
func (enc *Encoder) Encode(g *Graph, v any) (NodeID, error) {
	if g == nil {
		return 0, &ConversionError{GoType: reflect.TypeOf(v), FromGo: true, Reason: "nil Graph to append to"}
	}
	start := len(g.Nodes)
	e := encoder{g: g, hook: enc.Hook, hookTypes: enc.HookTypes}
	if enc.Hook != nil {
		// Only a hooked conversion needs a state for its hook (and so an
		// encoder on the heap).
		he := new(encoder)
		*he = e
		he.state = &EncodeState{e: he}
		return he.run(g, reflect.ValueOf(v), start)
	}
	return e.run(g, reflect.ValueOf(v), start)
}

func (e *encoder) run(g *Graph, rv reflect.Value, start int) (NodeID, error) {
	e.start = start
	if e.hook == nil {
		// Pre-size the graph when the value's shape tells its node count.
		if n, ok := countNodes(rv, 0); ok {
			if err := e.room(n, rv.Type(), KindInvalid); err != nil {
				return 0, err
			}
			e.zeroed = g.reserveExact(n)
		}
	}
	id, err := e.encode(rv, 0)
	if err != nil {
		g.Truncate(start)
		return 0, finishErr(err)
	}
	return id, nil
}

// EncodeState is one running [Encoder.Encode], as a hook sees it. It is
// only valid during the hook's call.
//
// It belongs to one conversion and is not safe for concurrent use.
type EncodeState struct {
	e     *encoder
	depth int
}

// Graph returns the graph being appended to.
func (s *EncodeState) Graph() *Graph { return s.e.g }

// Depth returns the nesting level of the value the hook is called for: 0
// for the value given to Encode, one more than its container for a nested
// value (and for a value given to EncodeState.Encode by a hook at level d,
// d+1).
func (s *EncodeState) Depth() int { return s.depth }

// Encode converts a nested Go value with the same rules, hook, cycle
// detection and depth bound as the value being converted.
func (s *EncodeState) Encode(v any) (NodeID, error) {
	return s.e.encode(reflect.ValueOf(v), s.depth+1)
}

// visitKey identifies a pointer, map or slice for cycle detection and
// sharing.
type visitKey struct {
	ptr uintptr
	len int
	typ unsafe.Pointer // the reflect.Type's *rtype: plain memory to hash
}

// typeKey returns the identity of t for a visitKey: the data word of the
// interface (every reflect.Type is a *rtype, which lives as long as the
// program does).
func typeKey(t reflect.Type) unsafe.Pointer { return (*[2]unsafe.Pointer)(unsafe.Pointer(&t))[1] }

type encoder struct {
	g      *Graph
	start  int // the graph's length before the conversion
	onPath map[visitKey]struct{}
	done   map[visitKey]NodeID

	hook      EncodeHook
	hookTypes func(reflect.Type) bool
	hookSeen  typeAnswers // hookTypes' answers
	state     *EncodeState
	slow      bool // no fast paths (the reference for the property tests)
	// zeroed says that the graph's storage past its length is known to be
	// zero: the encoder allocated it, and only appends have written to it
	// since (no hook or GraphAppender ran, which might have written past
	// the length and shrunk it again).
	zeroed bool

	lastType reflect.Type // the info cache
	lastInfo *typeInfo
}

// hooked reports whether the hook wants values of type t.
func (e *encoder) hooked(t reflect.Type) bool {
	if e.hook == nil {
		return false
	}
	if e.hookTypes == nil {
		return true
	}
	return e.hookSeen.ask(t, e.hookTypes)
}

func (e *encoder) callHook(v reflect.Value, depth int) (NodeID, bool, error) {
	saved := e.state.depth
	e.state.depth = depth
	id, ok, err := e.hook(e.state, v)
	e.state.depth = saved
	e.zeroed = false
	if err != nil {
		return 0, true, callerErr(err, KindInvalid, v.Type(), true)
	}
	if ok && int(id) >= len(e.g.Nodes) {
		return 0, true, fromGoErr(v.Type(), KindInvalid, "the encode hook returned an id outside the graph")
	}
	return id, ok, nil
}

func (e *encoder) add(n Node) NodeID { return e.g.Add(n) }

// maxConvertNodes is MaxConvertNodes, lowered by tests.
var maxConvertNodes = MaxConvertNodes

// room refuses, before they are allocated, n more nodes that would take
// the conversion past MaxConvertNodes.
func (e *encoder) room(n int, t reflect.Type, k Kind) error {
	if n > maxConvertNodes-(len(e.g.Nodes)-e.start) {
		return &ConversionError{Kind: k, GoType: t, FromGo: true, Err: ErrTooManyNodes,
			Reason: "the value makes more than " + strconv.Itoa(MaxConvertNodes) + " nodes (MaxConvertNodes)"}
	}
	return nil
}

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
	if e.hook != nil && e.hooked(t) && !(t.Kind() == reflect.Pointer && v.IsNil()) {
		if id, ok, err := e.callHook(v, depth); ok || err != nil {
			return id, err
		}
	}
	ti := infoOf(t)
	if ti.encScalar {
		return e.scalar(v, t)
	}
	if ti.appender {
		if t.Kind() == reflect.Pointer && v.IsNil() {
			return e.add(None()), nil
		}
		return e.appender(v.Interface().(GraphAppender), t)
	}
	if ti.ptrAppender && v.CanAddr() {
		return e.appender(v.Addr().Interface().(GraphAppender), t)
	}
	if ti.special != notSpecial {
		if id, ok, err := e.special(v, t, depth); ok || err != nil {
			return id, err
		}
	}
	if ti.text || ti.ptrText {
		return e.text(v, t, ti.text)
	}
	if ti.json || ti.ptrJSON {
		return e.json(v, t, ti.json)
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

// text encodes a value whose type implements encoding.TextMarshaler (its
// pointer type, unless byValue) as a str of its text.
func (e *encoder) text(v reflect.Value, t reflect.Type, byValue bool) (NodeID, error) {
	b, err := marshalText(v, byValue)
	if err != nil {
		return 0, callerErr(err, KindStr, t, true)
	}
	if !utf8.Valid(b) {
		return 0, fromGoErr(t, KindStr, "MarshalText returned invalid UTF-8")
	}
	return e.add(Str(string(b))), nil
}

// json encodes a value whose type implements json.Marshaler (its pointer
// type, unless byValue) as the value of its JSON, as FromJSON reads it.
func (e *encoder) json(v reflect.Value, t reflect.Type, byValue bool) (NodeID, error) {
	if !byValue {
		v = addressable(v).Addr()
	}
	b, err := v.Interface().(json.Marshaler).MarshalJSON()
	if err != nil {
		return 0, callerErr(err, KindInvalid, t, true)
	}
	id, err := FromJSON(e.g, b)
	if err != nil {
		// This text is t's MarshalJSON's.
		return 0, jsonErrAs(err, t, "MarshalJSON returned ")
	}
	return id, nil
}

// jsonErrAs returns err, from FromJSON or AppendJSON, which name their own
// Go type (json.RawMessage) in a *ConversionError, as naming t instead,
// its reason after prefix; any other error as is.
func jsonErrAs(err error, t reflect.Type, prefix string) error {
	if ce, ok := err.(*ConversionError); ok && ce.GoType == jsonType {
		c := *ce
		c.GoType, c.Reason = t, prefix+ce.Reason
		return &c
	}
	return err
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
	if t == locationPtrType {
		return e.location(v.Interface().(*time.Location), t)
	}
	if t.Elem().Size() == 0 {
		// Go may put distinct zero-size values at one address: no
		// identity to share, and nothing in them to lead back.
		return e.encode(v.Elem(), depth+1)
	}
	k := visitKey{ptr: v.Pointer(), typ: typeKey(t)}
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
	if t.Kind() == reflect.Array || v.Len() == 0 || t.Elem().Size() == 0 {
		// (Distinct slices of zero-size items may share an address.)
		return e.items(v, KindList, depth)
	}
	k := visitKey{ptr: v.Pointer(), len: v.Len(), typ: typeKey(t)}
	if e.fastItems(t.Elem(), depth) {
		// The items cannot lead back to the slice: no cycle to look for,
		// only sharing.
		return e.sharedScalars(v, k, depth)
	}
	if id, ok, err := e.enter(k, t); ok || err != nil {
		return id, err
	}
	id, err := e.items(v, KindList, depth)
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
	k := visitKey{ptr: v.Pointer(), typ: typeKey(t)}
	if id, ok, err := e.enter(k, t); ok || err != nil {
		return id, err
	}
	var id NodeID
	var err error
	if t.Key().Kind() == reflect.String && infoOf(t.Key()).encScalar && e.fastItems(t.Key(), depth) && e.fastItems(t.Elem(), depth) {
		id, err = e.stringMap(v, t.Elem(), depth)
	} else {
		id, err = e.mapDict(v, depth)
	}
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
	e.zeroed = false
	if err != nil {
		return 0, callerErr(err, KindInvalid, t, true)
	}
	if int(id) >= len(e.g.Nodes) {
		return 0, fromGoErr(t, KindInvalid, "AppendGraph returned an id outside the graph")
	}
	return id, nil
}

// items encodes a slice or array as a container of kind k: by the scalar
// fast path when it can, else as sequence does.
func (e *encoder) items(v reflect.Value, k Kind, depth int) (NodeID, error) {
	if et := v.Type().Elem(); e.fastItems(et, depth) {
		return e.scalarItems(v, et, k, depth)
	}
	return e.sequence(v, k, depth)
}

// fastItems reports whether items of type et at depth+1 take the scalar
// fast path.
func (e *encoder) fastItems(et reflect.Type, depth int) bool {
	return !e.slow && depth+1 <= MaxConvertDepth && infoOf(et).encScalar && (e.hook == nil || !e.hooked(et))
}

// sequence encodes the items of a slice, array or []any-based value as a
// container of kind k.
func (e *encoder) sequence(v reflect.Value, k Kind, depth int) (NodeID, error) {
	if err := e.room(v.Len()+1, v.Type(), k); err != nil {
		return 0, err
	}
	refs := make([]NodeID, v.Len())
	for i := range refs {
		id, err := e.encode(v.Index(i), depth+1)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"]")
		}
		refs[i] = id
	}
	return e.add(Node{Kind: k}.WithRefs(refs)), nil
}

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
	if err == nil {
		// The payload strings, which the codecs refuse to send unless
		// UTF-8: refused here, as a plain str is.
		if n := &e.g.Nodes[id]; badText(n) != "" {
			return 0, true, fromGoErr(t, n.Kind, "invalid UTF-8 in "+badText(n))
		}
	}
	return id, true, err
}

// badText names the first string of n's payload that is not valid UTF-8
// ("" if none is): the fields every decoder checks, so FromGo refuses to
// build such a node and the codecs (through internal/valuecheck) refuse to
// send one. The encoders call it for every node they write, so the kinds
// without text cost one comparison.
func badText(n *Node) string {
	switch n.Kind {
	case KindStr, KindPath, KindBuiltinFunction, KindRepr:
		if !utf8.ValidString(n.Text()) {
			return "text"
		}
	case KindCycle:
		if !utf8.ValidString(n.Text()) {
			return "placeholder"
		}
	case KindNamedTuple, KindTime, KindDateTime, KindTimeZone, KindException,
		KindFunction, KindFileHandle, KindType:
		return extBadText(n)
	}
	return ""
}

// extBadText is badText for the kinds whose strings are in their payload.
func extBadText(n *Node) string {
	bad := func(name string, s *string) string {
		if s != nil && !utf8.ValidString(*s) {
			return name
		}
		return ""
	}
	switch x := n.Ext().(type) {
	case *NamedTuple:
		if f := bad("type_name", &x.TypeName); f != "" {
			return f
		}
		for i := range x.FieldNames {
			if f := bad("field name", &x.FieldNames[i]); f != "" {
				return f
			}
		}
	case *Time:
		return bad("timezone_name", x.TZName)
	case *DateTime:
		return bad("timezone_name", x.TZName)
	case *TimeZone:
		return bad("name", x.Name)
	case *Exception:
		if f := bad("exc_type", &x.Type); f != "" {
			return f
		}
		return bad("arg", x.Arg)
	case *Function:
		if f := bad("name", &x.Name); f != "" {
			return f
		}
		return bad("docstring", x.Docstring)
	case *FileHandle:
		return bad("path", &x.Path)
	case *Type:
		return bad("name", &x.Name)
	}
	return ""
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
	case spJSON:
		// JSON text: its value, as json.loads reads it (encoding/json
		// writes an empty RawMessage as null).
		if v.Len() == 0 {
			return e.add(None()), nil
		}
		return FromJSON(e.g, v.Bytes())
	case spNumber:
		// The number it spells, as json.loads reads it; encoding/json
		// writes an empty Number as 0 and refuses one that is not a
		// JSON number.
		text := v.String()
		if text == "" {
			return e.add(Int(0)), nil
		}
		if !isJSONNumber(text) {
			return 0, fromGoErr(t, KindInvalid, fmt.Sprintf("%q is not a JSON number", text))
		}
		return FromJSON(e.g, []byte(text))
	case spNoPython:
		return 0, fromGoErr(t, KindInvalid, noPython(t)+"; convert it with its Float64 method")
	}
	// spLocation
	return 0, fromGoErr(t, KindInvalid, "a time.Location value has no Python counterpart; use a *time.Location or TimeZone")
}

// checked adds a payload node after validating it.
func (e *encoder) checked(n Node, t reflect.Type) (NodeID, error) {
	if err := checkLeaf(&n); err != nil {
		return 0, fromGoErr(t, n.Kind, err.Error())
	}
	return e.add(n), nil
}

func (e *encoder) timeValue(tm time.Time, t reflect.Type) (NodeID, error) {
	_, off := tm.Zone()
	if off < -86399 || off > 86399 {
		return 0, fromGoErr(t, KindDateTime, fmt.Sprintf("UTC offset %ds is outside -86399..86399", off))
	}
	y := tm.Year()
	if y < 1 || y > 9999 {
		return 0, fromGoErr(t, KindDateTime, fmt.Sprintf("year %d is outside 1..9999", y))
	}
	return e.add(DateTimeNode(timeDateTime(tm))), nil
}

// timeDateTime returns the aware datetime of tm, unchecked (timeValue
// checks the year and offset first).
func timeDateTime(tm time.Time) DateTime {
	name, off := tm.Zone()
	d := DateTime{
		Year: int32(tm.Year()), Month: uint32(tm.Month()), Day: uint32(tm.Day()),
		Hour: uint32(tm.Hour()), Minute: uint32(tm.Minute()), Second: uint32(tm.Second()),
		Microsecond: uint32(tm.Nanosecond() / 1000),
		Offset:      Ptr(int32(off)),
	}
	if zoneName(tm.Location(), name, off) {
		d.TZName = Ptr(name)
	}
	return d
}

// zoneName reports whether a zone of loc called name, off seconds east
// of UTC, keeps its name in Python: every zone but UTC (time.UTC, or a
// zero offset named "UTC"), which is datetime.timezone.utc, and a zone
// without a name.
func zoneName(loc *time.Location, name string, off int) bool {
	return loc != time.UTC && name != "" && (off != 0 || name != "UTC")
}

// location encodes a non-nil *time.Location as a timezone: a fixed zone
// (time.FixedZone, time.UTC, an IANA zone whose offset never changed) as
// the timezone of its offset and name (timezone.utc for UTC, as for a
// time.Time); a location whose offset changes (daylight saving time, a
// change of rules) has no Python timezone and is refused. The fixed zone
// is the one whose offset holds from the beginning of time to its end,
// which time.Time.ZoneBounds reports as zero bounds.
func (e *encoder) location(loc *time.Location, t reflect.Type) (NodeID, error) {
	tm := time.Unix(0, 0).In(loc)
	if start, end := tm.ZoneBounds(); !start.IsZero() || !end.IsZero() {
		return 0, fromGoErr(t, KindTimeZone, "location "+strconv.Quote(loc.String())+
			" changes its UTC offset; only a fixed zone converts to a timezone")
	}
	name, off := tm.Zone()
	if off < -86399 || off > 86399 {
		return 0, fromGoErr(t, KindTimeZone, fmt.Sprintf("UTC offset %ds is outside -86399..86399", off))
	}
	tz := TimeZone{Offset: int32(off)}
	if zoneName(loc, name, off) {
		tz.Name = Ptr(name)
	}
	return e.checked(TimeZoneNode(tz), t)
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
	return e.add(Node{Kind: KindDict}.WithRefs(refs)), nil
}

func (e *encoder) attrs(as []Attr, depth int) ([]Pair, error) {
	if len(as) == 0 {
		return nil, nil
	}
	ps := make([]Pair, len(as))
	for i, a := range as {
		if !utf8.ValidString(a.Name) {
			// The caller names its own type.
			return nil, &ConversionError{FromGo: true, Reason: "invalid UTF-8 in attribute name"}
		}
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
	if !utf8.ValidString(t.Name) {
		return 0, fromGoErr(reflect.TypeFor[ClassValue](), KindType, "invalid UTF-8 in name")
	}
	var err error
	if t.Attrs, err = e.attrs(c.Attrs, depth); err != nil {
		if ce, ok := err.(*ConversionError); ok && ce.GoType == nil {
			ce.GoType, ce.Kind = reflect.TypeFor[ClassValue](), KindType
		}
		return 0, err
	}
	return e.add(TypeNode(t)), nil
}

func (e *encoder) object(o *ObjectValue, depth int) (NodeID, error) {
	cls, err := e.class(&o.Class, depth)
	if err != nil {
		return 0, atPath(err, ".Class")
	}
	if e.g.Nodes[cls].Ext().(*Type).Origin == OriginBuiltin {
		return 0, fromGoErr(reflect.TypeFor[ObjectValue](), KindClassInstance, "the class of an instance must be a sandbox or host class")
	}
	attrs, err := e.attrs(o.Attrs, depth)
	if err != nil {
		if ce, ok := err.(*ConversionError); ok && ce.GoType == nil {
			ce.GoType, ce.Kind = reflect.TypeFor[ObjectValue](), KindClassInstance
		}
		return 0, err
	}
	return e.add(ClassInstanceNode(ClassInstance{Class: cls, InstanceID: o.InstanceID, Attrs: attrs})), nil
}

// mapEntry is one entry of a Go map being encoded.
type mapEntry struct{ key, val reflect.Value }

// mapDict encodes a Go map as a dict with its entries sorted by key.
func (e *encoder) mapDict(v reflect.Value, depth int) (NodeID, error) {
	if err := e.room(2*v.Len()+1, v.Type(), KindDict); err != nil {
		return 0, err
	}
	keys := v.MapKeys()
	for _, k := range keys {
		if !keyKindOK(k) {
			kt := k.Type()
			if k.Kind() == reflect.Interface {
				kt = k.Elem().Type() // the key's own type
			}
			return 0, fromGoErr(v.Type(), KindDict, "unsupported map key type "+kt.String())
		}
	}
	kt := v.Type().Key()
	var tieOf []int // see below
	if keysHaveText(kt, keys) {
		// Keys that convert through MarshalText: each key's text is
		// taken once, not at every comparison.
		tks := make([]textedKey, len(keys))
		for i, k := range keys {
			tks[i] = textedKey{k, keyText(k)}
		}
		slices.SortFunc(tks, func(a, b textedKey) int { return compareKeysText(a.k, b.k, &a.text, &b.text) })
		for i := range tks {
			keys[i] = tks[i].k
		}
		tieOf = tieRuns(len(tks), func(i int) bool {
			return compareKeysText(tks[i-1].k, tks[i].k, &tks[i-1].text, &tks[i].text) == 0
		})
	} else {
		slices.SortFunc(keys, compareKeys)
		if keysCanTie(kt) {
			tieOf = tieRuns(len(keys), func(i int) bool { return compareKeys(keys[i-1], keys[i]) == 0 })
		}
	}
	// tieOf numbers the runs of keys that sort as equals, pair by pair,
	// for the key types that can have them (see orderTies).
	refs := make([]NodeID, 0, 2*len(keys))
	var nans []mapEntry
	nansRead := false
	for _, k := range keys {
		val := v.MapIndex(k)
		if !val.IsValid() {
			// A NaN key, which no lookup finds (NaN != NaN): its entry
			// shows only while iterating. The NaN keys sort together,
			// as equals, so they take the NaN entries in turn.
			if !nansRead {
				nans, nansRead = nanEntries(v), true
			}
			if len(nans) > 0 {
				k, val = nans[0].key, nans[0].val
				nans = nans[1:]
			}
		}
		kid, err := e.key(k, depth+1)
		if err != nil {
			return 0, atPath(err, keyPath(k)+".key")
		}
		vid, err := e.encode(val, depth+1)
		if err != nil {
			return 0, atPath(err, keyPath(k))
		}
		refs = append(refs, kid, vid)
	}
	e.orderTies(refs, tieOf)
	return e.add(Node{Kind: KindDict}.WithRefs(refs)), nil
}

// pythonNaN is the bits of Python's float('nan'), which every NaN map key
// is written with (see key).
const pythonNaN = 0x7ff8000000000000

// key encodes a map key: an array (other than of bytes, which is bytes)
// as a tuple, the hashable sequence that ToGo reads back into the array,
// its items as keys too; a NaN with Python's NaN bits (pythonNaN), as
// the worker takes NaN keys with one bit pattern as one key and with
// different bits as different keys; anything else as encode does.
func (e *encoder) key(k reflect.Value, depth int) (NodeID, error) {
	v := k
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() || !tupleKey(v.Type()) {
		start := len(e.g.Nodes)
		id, err := e.encode(k, depth)
		if err == nil && int(id) >= start {
			// A node of this key's own (not one a hook handed back).
			if n := &e.g.Nodes[id]; n.Kind == KindFloat && math.IsNaN(n.Float()) {
				n.Num = pythonNaN
			}
		}
		return id, err
	}
	if depth > MaxConvertDepth {
		return 0, fromGoErr(v.Type(), KindTuple, fmt.Sprintf("nesting exceeds %d levels", MaxConvertDepth))
	}
	if err := e.room(v.Len()+1, v.Type(), KindTuple); err != nil {
		return 0, err
	}
	refs := make([]NodeID, v.Len())
	for i := range refs {
		id, err := e.key(v.Index(i), depth+1)
		if err != nil {
			return 0, atPath(err, "["+strconv.Itoa(i)+"]")
		}
		refs[i] = id
	}
	return e.add(Tuple(refs...)), nil
}

// plainArray reports whether t is an array with no conversion of its own.
func plainArray(t reflect.Type) bool {
	if t.Kind() != reflect.Array || t == uuidType {
		return false
	}
	ti := infoOf(t)
	return !ti.appender && !ti.ptrAppender && ti.special == notSpecial && !ti.text && !ti.ptrText && !ti.json && !ti.ptrJSON
}

// tupleKey reports whether a map key of type t is a tuple: a plain array
// of anything but bytes.
func tupleKey(t reflect.Type) bool {
	return plainArray(t) && (t.Elem().Kind() != reflect.Uint8 || elemEncodesItself(t.Elem()))
}

// bytesKey reports whether a map key of type t is bytes: a plain array of
// bytes.
func bytesKey(t reflect.Type) bool {
	return plainArray(t) && t.Elem().Kind() == reflect.Uint8 && !elemEncodesItself(t.Elem())
}

// tieRuns numbers the runs of n sorted items that sort as equals: item i
// is in run tieRuns(n, same)[i], and same(i) reports whether item i sorts
// equal to item i-1.
func tieRuns(n int, same func(i int) bool) []int {
	tie := make([]int, n)
	for i := 1; i < n; i++ {
		tie[i] = tie[i-1]
		if !same(i) {
			tie[i]++
		}
	}
	return tie
}

// keysHaveText reports whether some of keys, of type t, convert to a str
// through a method (MarshalText, a UUID's String).
func keysHaveText(t reflect.Type, keys []reflect.Value) bool {
	if t.Kind() != reflect.Interface {
		return t == uuidType || textKey(t)
	}
	for _, k := range keys {
		if k = k.Elem(); k.IsValid() && (k.Type() == uuidType || textKey(k.Type())) {
			return true
		}
	}
	return false
}

// keysCanTie reports whether two distinct Go map keys of type t can sort
// as equals: NaNs (of a float type, or in an interface), keys of a
// TextMarshaler type whose texts are equal, and date and time keys that
// convert to the same node.
func keysCanTie(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface, reflect.Float32, reflect.Float64:
		return true
	}
	if tupleKey(t) {
		return keysCanTie(t.Elem())
	}
	// Date and time keys that differ in Go only where Python does not
	// look: a time.Time's *Location and monotonic reading, a DateTime's
	// pointers.
	return textKey(t) || dateKey(t)
}

// orderTies orders each run of entries whose keys sort as equals (NaN
// keys of one type; keys of one TextMarshaler type with the same text),
// which came in Go's random map iteration order, by their values' repr
// (then the keys' nodes: a NaN's bits), so that the dict's order, and
// with it the value Python keeps for equal str keys, does not change from
// one conversion to the next. tieOf numbers each pair's run.
func (e *encoder) orderTies(refs []NodeID, tieOf []int) {
	type entry struct {
		k, v NodeID
		repr string
	}
	for i := 0; i < len(tieOf); {
		j := i + 1
		for j < len(tieOf) && tieOf[j] == tieOf[i] {
			j++
		}
		if j-i > 1 {
			run := make([]entry, 0, j-i)
			for p := i; p < j; p++ {
				k, v := refs[2*p], refs[2*p+1]
				run = append(run, entry{k, v, e.g.Repr(v)})
			}
			slices.SortStableFunc(run, func(a, b entry) int {
				if c := strings.Compare(a.repr, b.repr); c != 0 {
					return c
				}
				return cmp.Compare(e.g.Nodes[a.k].Num, e.g.Nodes[b.k].Num)
			})
			for x, en := range run {
				refs[2*(i+x)], refs[2*(i+x)+1] = en.k, en.v
			}
		}
		i = j
	}
}

// keyHasNaN reports whether map key k is or holds a NaN (in an array), which
// makes it a key no lookup finds.
func keyHasNaN(k reflect.Value) bool {
	if k.Kind() == reflect.Interface && !k.IsNil() {
		k = k.Elem()
	}
	switch {
	case k.CanFloat():
		return math.IsNaN(k.Float())
	case k.Kind() == reflect.Array && tupleKey(k.Type()):
		for i := range k.Len() {
			if keyHasNaN(k.Index(i)) {
				return true
			}
		}
	}
	return false
}

// nanEntries returns the entries of map v whose keys are or hold NaN.
func nanEntries(v reflect.Value) []mapEntry {
	var out []mapEntry
	for it := v.MapRange(); it.Next(); {
		if keyHasNaN(it.Key()) {
			out = append(out, mapEntry{it.Key(), it.Value()})
		}
	}
	// In key order, as the keys that take them (NaNs of different types
	// by type name).
	slices.SortFunc(out, func(a, b mapEntry) int { return compareKeys(a.key, b.key) })
	return out
}

func keyKindOK(k reflect.Value) bool {
	if k.Kind() == reflect.Interface {
		if k.IsNil() {
			return true // None
		}
		k = k.Elem()
	}
	if tupleKey(k.Type()) {
		for i := range k.Len() {
			if !keyKindOK(k.Index(i)) {
				return false
			}
		}
		return true // a tuple key
	}
	return KeyConverts(k.Type())
}

// compareKeys orders map keys: None (a nil interface), bools, then numbers
// (by value, NaN first; equal numbers of different Go types, such as 1 and
// 1.0 in a map[any], by type name), then strings (bytewise; equal texts of
// different Go types by type name).
func compareKeys(a, b reflect.Value) int {
	return compareKeysText(a, b, nil, nil)
}

// textedKey is a map key with its text (see keyText).
type textedKey struct {
	k    reflect.Value
	text string
}

// keyText returns the text of a map key that converts to a str, which
// compareKeysText orders by; "" for any other key.
func keyText(k reflect.Value) string {
	if k.Kind() == reflect.Interface {
		k = k.Elem()
	}
	if keyRank(k) != 2 {
		return ""
	}
	return keyString(k)
}

// compareKeysText is compareKeys for keys whose texts are *ta and *tb
// (nil: taken when needed).
func compareKeysText(a, b reflect.Value, ta, tb *string) int {
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
	case -1:
		return 0
	case 0:
		return cmp.Compare(boolInt(a.Bool()), boolInt(b.Bool()))
	case 2:
		if ta == nil {
			sa, sb := keyString(a), keyString(b)
			ta, tb = &sa, &sb
		}
		if c := strings.Compare(*ta, *tb); c != 0 || a.Type() == b.Type() {
			return c
		}
		// Distinct Go keys with one text ("a" and a TextMarshaler
		// writing "a"): ordered by type name, as equal numbers are.
		return strings.Compare(a.Type().String(), b.Type().String())
	case 3, 4:
		// bytes, then tuples: item by item (as keys), then by length.
		for i := range min(a.Len(), b.Len()) {
			if c := compareKeys(a.Index(i), b.Index(i)); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.Len(), b.Len()); c != 0 || a.Type() == b.Type() {
			return c
		}
		return strings.Compare(a.Type().String(), b.Type().String())
	case 5:
		if c := compareDateKeys(a, b); c != 0 || a.Type() == b.Type() {
			return c
		}
		return strings.Compare(a.Type().String(), b.Type().String())
	}
	if c := compareNumbers(a, b); c != 0 || a.Type() == b.Type() {
		return c
	}
	// Distinct Go keys, one Python key: an order that does not depend on
	// the map's iteration decides which value Python's dict keeps.
	return strings.Compare(a.Type().String(), b.Type().String())
}

func keyString(v reflect.Value) string {
	if v.Type() == uuidType {
		return v.Interface().(UUID).String()
	}
	if ti := infoOf(v.Type()); ti.text || ti.ptrText {
		// A failing MarshalText sorts as "": encode reports its error.
		b, _ := marshalText(v, ti.text)
		return string(b)
	}
	return v.String()
}

// marshalText calls v's MarshalText, or its pointer's unless byValue (on
// a copy when v is not addressable).
func marshalText(v reflect.Value, byValue bool) ([]byte, error) {
	if !byValue {
		v = addressable(v).Addr()
	}
	return v.Interface().(encoding.TextMarshaler).MarshalText()
}

// addressable returns v, or an addressable copy of it.
func addressable(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return v
	}
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	return c
}

// textKey reports whether map keys of type t become str keys through
// encoding.TextMarshaler.
func textKey(t reflect.Type) bool {
	ti := infoOf(t)
	return ti.text || ti.ptrText
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func keyRank(v reflect.Value) int {
	if !v.IsValid() {
		return -1 // a nil interface: None
	}
	k := v.Kind()
	switch {
	case k == reflect.Bool:
		return 0
	case k == reflect.String:
		return 2
	}
	t := v.Type()
	if k >= reflect.Int && k <= reflect.Float64 && t.PkgPath() == "" {
		// A predeclared number type has no methods, so no text of its
		// own: a number, without the type lookups below (the sort calls
		// this twice per comparison).
		return 1
	}
	switch {
	case t == uuidType, textKey(t):
		return 2
	case bytesKey(t):
		return 3
	case tupleKey(t):
		return 4
	case dateKey(t):
		return 5
	}
	return 1
}

// compareNumbers orders two number keys by their exact values, NaN
// first. (Converting an integer to a float would make 2**53+1 equal to
// 2**53 as a float but not as an integer, and an order that is not
// transitive leaves the sort's result to the map's iteration order.)
func compareNumbers(a, b reflect.Value) int {
	isUint := func(v reflect.Value) bool { return v.CanUint() }
	switch fa, fb := a.CanFloat(), b.CanFloat(); {
	case fa && fb:
		return cmp.Compare(a.Float(), b.Float())
	case fa:
		return compareFloatInt(a.Float(), b)
	case fb:
		return -compareFloatInt(b.Float(), a)
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

// compareFloatInt compares f with the integer held by n exactly, NaN
// first.
func compareFloatInt(f float64, n reflect.Value) int {
	const two63 = 1 << 63
	switch {
	case math.IsNaN(f):
		return -1
	case n.CanUint():
		if f < 0 {
			return -1
		}
		if f >= 2*two63 {
			return 1
		}
		tr := math.Trunc(f)
		if c := cmp.Compare(uint64(tr), n.Uint()); c != 0 {
			return c
		}
		return cmp.Compare(f, tr)
	}
	if f < -two63 {
		return -1
	}
	if f >= two63 {
		return 1
	}
	tr := math.Trunc(f)
	if c := cmp.Compare(int64(tr), n.Int()); c != 0 {
		return c
	}
	return cmp.Compare(f, tr)
}

// structDict encodes a struct as a dict of its fields.
func (e *encoder) structDict(v reflect.Value, depth int) (NodeID, error) {
	ti := e.info(v.Type())
	fields := ti.fields
	plan := !e.slow && (e.hook == nil || e.hookTypes != nil) && v.CanAddr() && depth+1 <= MaxConvertDepth
	var base unsafe.Pointer
	if plan {
		base = v.Addr().UnsafePointer()
	}
	refs := make([]NodeID, 0, 2*len(fields))
	for i := range fields {
		f := &fields[i]
		if fp := &ti.plans[i]; plan && fp.encDirect {
			if id, ok := e.planField(fp, unsafe.Add(base, fp.offset), depth); ok {
				refs = append(refs, e.add(fp.name), id)
				continue
			}
		}
		fv, ok := fieldByIndex(v, f.Index)
		if !ok {
			continue // behind a nil embedded pointer
		}
		if f.OmitEmpty && isEmptyValue(fv) || f.OmitZero && f.isZero(fv) {
			continue
		}
		id, err := e.encode(fv, depth+1)
		if err != nil {
			return 0, atPath(err, "."+f.GoName)
		}
		refs = append(refs, e.add(Str(f.Name)), id)
	}
	return e.add(Node{Kind: KindDict}.WithRefs(refs)), nil
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

var isZeroerType = reflect.TypeFor[isZeroer]()

// zeroCheck says how omitzero tests a field, as encoding/json decides it
// from the field's type.
type zeroCheck uint8

const (
	zeroReflect zeroCheck = iota // no IsZero: reflect.Value.IsZero
	zeroIface                    // an interface type with IsZero
	zeroPtr                      // a pointer type with IsZero
	zeroMethod                   // IsZero on the value
	zeroAddr                     // IsZero on a pointer to the value
)

func zeroCheckOf(t reflect.Type) zeroCheck {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return zeroIface
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return zeroPtr
	case t.Implements(isZeroerType):
		return zeroMethod
	case reflect.PointerTo(t).Implements(isZeroerType):
		return zeroAddr
	}
	return zeroReflect
}

// isZero reports whether omitzero skips v, a value of f: its type's IsZero
// method (a pointer receiver's too, the value boxed when it is not
// addressable), never called on a nil pointer, else v.IsZero. An
// interface field without IsZero in its method set (any) is zero only
// when nil, whatever it holds.
func (f *Field) isZero(v reflect.Value) bool {
	switch f.zero {
	case zeroIface:
		return v.IsNil() || v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil() ||
			v.Interface().(isZeroer).IsZero()
	case zeroPtr:
		return v.IsNil() || v.Interface().(isZeroer).IsZero()
	case zeroMethod:
		return v.Interface().(isZeroer).IsZero()
	case zeroAddr:
		if !v.CanAddr() {
			b := reflect.New(v.Type()).Elem()
			b.Set(v)
			v = b
		}
		return v.Addr().Interface().(isZeroer).IsZero()
	}
	return v.IsZero()
}
