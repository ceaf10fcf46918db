package session

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gomonty/monty/internal/pyident"
	"github.com/gomonty/monty/value"
)

// Stubs returns Python type stubs for what the registry offers the
// sandbox: a def (async def for Async functions) per function, a class per
// host class (its eager and lazy fields, its methods, a constructor when
// the sandbox may call it) and an annotated name per value, with types
// derived from the Go signatures as the conversions treat them (string:
// str, []T: list[T], map[K]V: dict[K, V] (an array key: a tuple),
// time.Time: datetime.datetime, a type with no conversion of its own
// that implements encoding.TextMarshaler (netip.Addr): str, one that
// implements json.Marshaler instead: Any (the value of its JSON),
// a named struct: a TypedDict of its fields (of a generic type's
// instance, named after the type and its arguments: Pair_int_string), a
// registered class's Go type: that class (a pointer to it: that class |
// None, but a value given to SetValue that is not nil: the class), a
// pointer: T | None, json.Number: int | float, value's own types: the
// values they convert to (value.Exception: BaseException,
// value.ClassValue: type), a type no conversion takes (a channel, a
// complex number, big.Float) or a map key type that value.KeyConverts
// refuses: typing.Never (but as a parameter, a func or chan type whose
// pointer has an UnmarshalText: str, an UnmarshalJSON: Any, what decodes
// into it), so that dict[Never, V] takes only an empty dict,
// the one such map FromGo converts (ToGo also decodes named tuple keys
// into a struct key type, but the stubs declare only what converts both
// ways), anything else: Any). Parameters named with
// [Params] may be passed by keyword; the others are positional-only.
//
// Give them to a type-checked session as Config.TypeCheckStubs: without
// them the type checker reports every call of a host function as an
// unresolved name. They also tell a model writing code what it may call.
// The text is the same for the same registry, declarations sorted by name.
//
// A name Go's Unicode tables cannot vouch for is left out: one with a
// character they do not assign yet (a letter of a script newer than
// unicode.Version, which Register accepts and the worker may read as a
// letter), or a value's name that is no identifier. The worker's type
// checker reads the stubs as one file, and a declaration its parser
// refuses makes it ignore them all, silently; checked code that calls a
// function left out is reported as an unresolved name, so declare it in
// stubs of your own if the worker takes the name.
func (r *Registry) Stubs() string {
	if r == nil {
		r = &Registry{}
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	st := stubWriter{r: r}
	var body strings.Builder
	for _, name := range sortedKeys(r.classes) {
		if stubbable(name) {
			st.class(&body, name, r.classes[name])
		}
	}
	for _, name := range sortedKeys(r.funcs) {
		if stubbable(name) {
			st.function(&body, name, r.funcs[name])
		}
	}
	for _, name := range sortedKeys(r.values) {
		if stubbable(name) {
			body.WriteString(name + ": " + st.valueType(r.values[name]) + "\n")
		}
	}
	// The TypedDicts of the struct types met above (and of those their
	// fields hold), sorted by name, before everything that names them.
	var dicts []string
	for len(st.pending) > 0 {
		t := st.pending[0]
		st.pending = st.pending[1:]
		dicts = append(dicts, st.typedDict(t))
	}
	slices.Sort(dicts)
	var head strings.Builder
	if st.datetime {
		head.WriteString("import datetime\n")
	}
	if st.pathlib {
		head.WriteString("import pathlib\n")
	}
	var typing []string
	for _, name := range []struct {
		used bool
		name string
	}{{st.any, "Any"}, {st.never, "Never"}, {st.notRequired, "NotRequired"}, {len(dicts) > 0, "TypedDict"}} {
		if name.used {
			typing = append(typing, name.name)
		}
	}
	if len(typing) > 0 {
		head.WriteString("from typing import " + strings.Join(typing, ", ") + "\n")
	}
	if head.Len() > 0 && body.Len() > 0 {
		head.WriteString("\n")
	}
	return head.String() + strings.Join(dicts, "") + body.String()
}

// stubbable reports whether Stubs declares the global name (as the sandbox
// reads it): Go's Unicode tables must know it for an identifier that is
// not a keyword.
func stubbable(name string) bool { return pyident.Name(name) }

// dictName returns the TypedDict name of struct type t, naming it (and
// queueing it to be written) the first time: its Go name, made unique
// against the registry's names and other struct types of that name. ok
// is false for a struct without a TypedDict form (anonymous, no fields, a
// key that is not an identifier), which is then a dict[str, Any].
func (st *stubWriter) dictName(t reflect.Type) (string, bool) {
	if name, ok := st.dicts[t]; ok {
		return name, name != ""
	}
	if st.dicts == nil {
		st.dicts, st.dictTypes = map[reflect.Type]string{}, map[string]reflect.Type{}
	}
	fields := value.StructFields(t)
	base := stubName(t.Name())
	ok := base != "" && len(fields) > 0 && isIdentifier(base)
	for _, f := range fields {
		ok = ok && isIdentifier(f.Name)
	}
	if !ok {
		st.dicts[t] = ""
		return "", false
	}
	name := base
	for i := 2; st.taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	st.dicts[t], st.dictTypes[name] = name, t
	st.pending = append(st.pending, t)
	return name, true
}

// stubName returns the TypedDict name of a struct type named name: the
// name itself, or for an instance of a generic type (Pair[int,string],
// Pair[example.com/m.Job]) the type's name and its arguments' names
// joined by underscores, package paths dropped (Pair_int_string,
// Pair_Job).
func stubName(name string) string {
	if !strings.Contains(name, "[") {
		return name
	}
	var parts []string
	for _, tok := range strings.FieldsFunc(name, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '/' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80)
	}) {
		if i := strings.LastIndexAny(tok, "./"); i >= 0 {
			tok = tok[i+1:]
		}
		if tok != "" {
			parts = append(parts, tok)
		}
	}
	return strings.Join(parts, "_")
}

// taken reports whether a TypedDict may not take name.
func (st *stubWriter) taken(name string) bool {
	_, dict := st.dictTypes[name]
	_, fn := st.r.funcs[name]
	_, class := st.r.classes[name]
	_, val := st.r.values[name]
	return dict || fn || class || val || sandboxResolves(name) || stubImports[name]
}

// stubImports are the names the stubs import.
var stubImports = map[string]bool{"Any": true, "Never": true, "NotRequired": true, "TypedDict": true, "datetime": true, "pathlib": true}

// typedDict writes the TypedDict of struct type t: a field FromGo may
// leave out (omitempty, omitzero) is NotRequired. (ToGo also accepts a
// dict without the other keys; the stub asks for complete records.)
func (st *stubWriter) typedDict(t reflect.Type) string {
	var b strings.Builder
	b.WriteString("class " + st.dicts[t] + "(TypedDict):\n")
	for _, f := range value.StructFields(t) {
		typ := st.pyType(f.Type)
		if f.OmitEmpty || f.OmitZero {
			st.notRequired = true
			typ = "NotRequired[" + typ + "]"
		}
		b.WriteString("    " + f.Name + ": " + typ + "\n")
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// stubWriter renders stubs, noting the imports they need.
type stubWriter struct {
	r                      *Registry
	datetime, pathlib, any bool
	never, notRequired     bool
	// in is set while a parameter is annotated (what the sandbox passes
	// in, see pyTypeIn).
	in        bool
	dicts     map[reflect.Type]string // TypedDict name of a struct type
	dictTypes map[string]reflect.Type // and back
	pending   []reflect.Type          // named, not yet written
}

func (st *stubWriter) anyType() string {
	st.any = true
	return "Any"
}

// neverType annotates a Go type that no conversion takes or gives (a
// channel, a map key type that value.KeyConverts refuses): typing.Never,
// which no value is, so that a container of it is declared as what
// converts, an empty one (dict[Never, int] takes only {}).
func (st *stubWriter) neverType() string {
	st.never = true
	return "Never"
}

func (st *stubWriter) function(b *strings.Builder, name string, h *hostFunc) {
	if h.async {
		b.WriteString("async ")
	}
	b.WriteString("def " + name + "(")
	if h.sig == nil {
		// A Func takes whatever the sandbox passes.
		for _, p := range h.params {
			b.WriteString(p + ": " + st.anyType() + ", ")
		}
		b.WriteString("*" + freeName("args", h.params) + ": " + st.anyType() +
			", **" + freeName("kwargs", h.params) + ": " + st.anyType() + ") -> " + st.anyType() + ":")
		writeBody(b, h.doc)
		return
	}
	st.params(b, h.sig, "")
	b.WriteString(") -> " + st.result(h.sig) + ":")
	writeBody(b, h.doc)
}

// writeBody ends a def: with its docstring, indented, or with "...".
func writeBody(b *strings.Builder, doc *string) {
	if doc == nil {
		b.WriteString(" ...\n")
		return
	}
	text := strings.ReplaceAll(*doc, `\`, `\\`)
	text = strings.ReplaceAll(text, `"""`, `\"\"\"`)
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i] != "" {
			lines[i] = "    " + lines[i]
		}
	}
	text = strings.Join(lines, "\n")
	if strings.HasSuffix(text, `"`) {
		text = text[:len(text)-1] + `\"`
	}
	b.WriteString("\n    \"\"\"" + text + "\"\"\"\n")
}

// freeName returns name, or name with underscores appended, whichever
// first is none of the parameter names taken: a def whose parameters
// repeat a name (a Params name args beside *args) is a SyntaxError in
// Python.
func freeName(name string, taken []string) string {
	for slices.Contains(taken, name) {
		name += "_"
	}
	return name
}

// params writes a signature's parameters after first (self, or nothing).
func (st *stubWriter) params(b *strings.Builder, sig *signature, first string) {
	var ps []string
	if first != "" {
		ps = append(ps, freeName(first, sig.names))
	}
	for i := range sig.fixed {
		n := "arg" + strconv.Itoa(i)
		if sig.names != nil {
			n = sig.names[i]
		}
		ps = append(ps, n+": "+st.pyTypeIn(sig.params[i]))
	}
	if sig.names == nil && sig.fixed > 0 {
		ps = append(ps, "/")
	}
	if sig.variadic {
		ps = append(ps, "*"+freeName("args", sig.names)+": "+st.pyTypeIn(sig.params[sig.fixed].Elem()))
	}
	b.WriteString(strings.Join(ps, ", "))
}

// unconvertible returns an error naming the first parameter of sig that
// no sandbox value converts into, or else its result when no Go value of
// that type converts out: those whose stub type is typing.Never (a
// channel, a function, a complex number, unsafe.Pointer, big.Float, ...;
// not a pointer to one, which takes None, nor a container of one, which
// takes an empty one), judged by pyType itself against the registry's
// classes as they are now, so that Register (and RegisterClass) never
// refuses what the stubs declare. A variadic parameter is not checked: it
// may take no arguments. Nor is a parameter of a type that ToGo decodes
// through its UnmarshalText or UnmarshalJSON (a named func or chan type
// with one), which pyTypeIn annotates as what decodes into it (str, or
// Any). r.mu must be held (for reading at least).
func (r *Registry) unconvertible(sig *signature) error {
	st := stubWriter{r: r}
	for i := range sig.fixed {
		if t := sig.params[i]; st.pyTypeIn(t) == "Never" {
			which := fmt.Sprintf("argument %d", i+1)
			if sig.names != nil {
				which = fmt.Sprintf("parameter %q", sig.names[i])
			}
			return fmt.Errorf("monty session: %q: %s is a %v, which no sandbox value converts into, so every call would fail (its stub type is typing.Never); take a type the conversions accept, or register a host class for %v first", sig.name, which, t, t)
		}
	}
	if sig.hasVal && st.pyType(sig.out) == "Never" {
		return fmt.Errorf("monty session: %q: the result is a %v, which converts to no sandbox value, so every call would fail (its stub type is typing.Never); return a type the conversions accept, or register a host class for %v first", sig.name, sig.out, sig.out)
	}
	return nil
}

func (st *stubWriter) result(sig *signature) string {
	if !sig.hasVal {
		return "None"
	}
	return st.pyType(sig.out)
}

func (st *stubWriter) class(b *strings.Builder, name string, c *Class) {
	b.WriteString("class " + name + ":\n")
	n := 0
	for _, a := range c.p.ClassAttrs {
		b.WriteString("    " + a.Name + ": " + st.anyType() + "\n")
		n++
	}
	seen := map[string]bool{}
	for _, f := range c.eager {
		b.WriteString("    " + f.name + ": " + st.pyType(f.typ) + "\n")
		seen[f.name] = true
		n++
	}
	for _, fname := range sortedKeys(c.fields) {
		if f := c.fields[fname]; !seen[fname] {
			b.WriteString("    " + f.name + ": " + st.pyType(f.typ) + "\n")
			n++
		}
	}
	switch {
	case c.ctor != nil:
		b.WriteString("    def __init__(")
		st.params(b, c.ctor, "self")
		b.WriteString(") -> None: ...\n")
		n++
	case c.p.Construct:
		// Positional arguments set the eager fields in order; keywords
		// set any field; all may be left out.
		ps := []string{freeName("self", slices.Collect(maps.Keys(c.fields)))}
		for _, f := range c.eager {
			ps = append(ps, f.name+": "+st.pyTypeIn(f.typ)+" = ...")
		}
		if lazy := len(c.fields) > len(c.eager); lazy {
			ps = append(ps, "*")
			for _, fname := range sortedKeys(c.fields) {
				if !seen[fname] {
					ps = append(ps, fname+": "+st.pyTypeIn(c.fields[fname].typ)+" = ...")
				}
			}
		}
		b.WriteString("    def __init__(" + strings.Join(ps, ", ") + ") -> None: ...\n")
		n++
	}
	for _, mname := range sortedKeys(c.methods) {
		m := c.methods[mname]
		b.WriteString("    def " + m.py + "(")
		st.params(b, m.sig, "self")
		b.WriteString(") -> " + st.result(m.sig) + ": ...\n")
		n++
	}
	if c.p.Getattr != nil {
		b.WriteString("    def __getattr__(self, name: str) -> " + st.anyType() + ": ...\n")
		n++
	}
	if n == 0 {
		b.WriteString("    ...\n")
	}
}

// valueType annotates a value given to SetValue.
func (st *stubWriter) valueType(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case Value:
		return st.anyType()
	case *hostObject:
		if x.c != nil {
			return x.c.name
		}
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if c := st.r.types[rv.Type().Elem()]; c != nil {
			return c.name // an instance: the pointer is not nil
		}
	}
	return st.pyType(reflect.TypeOf(v))
}

var (
	bigIntStub   = reflect.TypeFor[big.Int]()
	rawJSONStub  = reflect.TypeFor[json.RawMessage]()
	numberStub   = reflect.TypeFor[json.Number]()
	sessionValue = reflect.TypeFor[Value]()
	appenderStub = reflect.TypeFor[value.GraphAppender]()
	decoderStub  = reflect.TypeFor[value.GraphDecoder]()
	textStub     = reflect.TypeFor[encoding.TextMarshaler]()
	jsonStub     = reflect.TypeFor[json.Marshaler]()

	textUnmarshalerStub = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonUnmarshalerStub = reflect.TypeFor[json.Unmarshaler]()
)

// pyType annotates a Go type as the conversions treat it.
func (st *stubWriter) pyType(t reflect.Type) string { return st.pyTypeAt(t, 0) }

// pyTypeIn annotates the type of a parameter: as pyType, except that a
// type with no conversion either way but its pointer's UnmarshalText
// (a named func or chan type with one) is a str, which ToGo decodes into
// it through that method, and one with UnmarshalJSON instead is Any: ToGo
// hands that method the JSON text of whatever value the sandbox passes,
// and which JSON it takes is the method's business (the stubs write Any
// for the way out through MarshalJSON too). Such a type converts out to
// nothing, so as a result, a value or a field it stays typing.Never.
// The TypedDicts of struct types are written for both ways (a struct type
// has one), so such a field of a struct parameter is Never there.
func (st *stubWriter) pyTypeIn(t reflect.Type) string {
	st.in = true
	defer func() { st.in = false }()
	return st.pyTypeAt(t, 0)
}

// keyTypeAt annotates a map key type: a Go array (other than of bytes)
// is a tuple there, the one hashable sequence, which is what converts to
// it (a list, unhashable, can be no dict's key); a key type the
// conversions refuse (value.KeyConverts: a pointer, a struct) is Never,
// but a registered class's Go type (T or *T), whose instances the
// session's hook decodes; other types as pyTypeAt. (ToGo also takes a
// named tuple key into a struct key type, which FromGo never gives: the
// stub declares only what converts both ways.)
func (st *stubWriter) keyTypeAt(t reflect.Type, depth int) string {
	if !value.KeyConverts(t) && st.r.types[t] == nil && (t.Kind() != reflect.Pointer || st.r.types[t.Elem()] == nil) {
		return st.neverType()
	}
	typ := st.pyTypeAt(t, depth)
	if t.Kind() == reflect.Array && strings.HasPrefix(typ, "list[") && depth <= 8 {
		return "tuple[" + st.keyTypeAt(t.Elem(), depth+1) + ", ...]"
	}
	return typ
}

// pyTypeAt is pyType for a type nested depth levels deep: past a few
// levels Any, so that a type that holds itself (type Tree map[string]Tree)
// ends.
func (st *stubWriter) pyTypeAt(t reflect.Type, depth int) string {
	if depth > 8 {
		return st.anyType()
	}
	pyType := func(t reflect.Type) string { return st.pyTypeAt(t, depth+1) }
	if c := st.r.types[t]; c != nil {
		return c.name
	}
	if t.Kind() == reflect.Pointer {
		if c := st.r.types[t.Elem()]; c != nil {
			return c.name + " | None" // a nil pointer is None both ways
		}
	}
	switch t {
	case reflect.TypeFor[time.Time](), reflect.TypeFor[value.DateTime]():
		st.datetime = true
		return "datetime.datetime"
	case reflect.TypeFor[time.Duration](), reflect.TypeFor[value.TimeDelta]():
		st.datetime = true
		return "datetime.timedelta"
	case reflect.TypeFor[value.Date]():
		st.datetime = true
		return "datetime.date"
	case reflect.TypeFor[value.Time]():
		st.datetime = true
		return "datetime.time"
	case reflect.TypeFor[value.TimeZone]():
		st.datetime = true
		return "datetime.timezone"
	case reflect.TypeFor[*time.Location]():
		st.datetime = true
		return "datetime.timezone | None" // a fixed zone is a timezone, a nil one None, both ways
	case reflect.TypeFor[value.PathValue]():
		st.pathlib = true
		return "pathlib.Path"
	case reflect.TypeFor[value.UUID]():
		return "str"
	case bigIntStub:
		return "int"
	case reflect.PointerTo(bigIntStub):
		return "int | None" // a nil *big.Int is None both ways
	case reflect.TypeFor[value.TupleValue](), reflect.TypeFor[value.NamedTupleValue]():
		return "tuple[" + st.anyType() + ", ...]"
	case reflect.TypeFor[value.SetValue]():
		return "set[" + st.anyType() + "]"
	case reflect.TypeFor[value.FrozenSetValue]():
		return "frozenset[" + st.anyType() + "]"
	case reflect.TypeFor[value.DictValue]():
		return "dict[" + st.anyType() + ", " + st.anyType() + "]"
	case numberStub:
		return "int | float"
	case reflect.TypeFor[value.Exception]():
		return "BaseException"
	case reflect.TypeFor[value.ClassValue]():
		return "type"
	case rawJSONStub, sessionValue,
		// Values of other kinds than their Go kinds say, with no name
		// to import: an instance, a function, a builtin function, a file,
		// Ellipsis or NotImplemented, and the output-only repr and cycle
		// placeholders.
		reflect.TypeFor[value.ObjectValue](), reflect.TypeFor[value.Function](),
		reflect.TypeFor[value.BuiltinFunctionValue](), reflect.TypeFor[value.FileHandle](),
		reflect.TypeFor[value.SpecialValue](), reflect.TypeFor[value.ReprValue](),
		reflect.TypeFor[value.CycleValue]():
		return st.anyType()
	case reflect.TypeFor[big.Float](), reflect.TypeFor[big.Rat](), reflect.TypeFor[time.Location]():
		// No Python counterpart: the conversions refuse them both ways,
		// as they refuse a channel (a *time.Location, above, is a
		// timezone).
		return st.neverType()
	}
	if t.Implements(appenderStub) || t.Implements(decoderStub) || reflect.PointerTo(t).Implements(decoderStub) {
		return st.anyType() // converts itself
	}
	if k := t.Kind(); k != reflect.Pointer && k != reflect.Interface && !reflect.PointerTo(t).Implements(appenderStub) &&
		(t.Implements(textStub) || reflect.PointerTo(t).Implements(textStub)) {
		return "str" // its MarshalText's text, as value.FromGo converts it
	}
	if k := t.Kind(); k != reflect.Pointer && k != reflect.Interface && !reflect.PointerTo(t).Implements(appenderStub) &&
		(t.Implements(jsonStub) || reflect.PointerTo(t).Implements(jsonStub)) {
		return st.anyType() // the value of its MarshalJSON's text, as value.FromGo converts it
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	case reflect.String:
		return "str"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "list[" + pyType(t.Elem()) + "]"
	case reflect.Map:
		return "dict[" + st.keyTypeAt(t.Key(), depth+1) + ", " + pyType(t.Elem()) + "]"
	case reflect.Struct:
		if name, ok := st.dictName(t); ok {
			return name
		}
		return "dict[str, " + st.anyType() + "]"
	case reflect.Pointer:
		if elem := pyType(t.Elem()); elem != "Never" {
			return elem + " | None"
		}
		return "None" // only a nil one converts
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		if st.in {
			switch pt := reflect.PointerTo(t); {
			case pt.Implements(textUnmarshalerStub):
				return "str" // decoded through UnmarshalText
			case pt.Implements(jsonUnmarshalerStub):
				return st.anyType() // decoded through UnmarshalJSON
			}
		}
		return st.neverType() // refused both ways
	}
	return st.anyType()
}
