package session

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/gomonty/monty/internal/pyident"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Func is a host function callable from the sandbox. It returns the call's
// result as a Go value (anything value.FromGo accepts, a [Value], or nil
// for None) or an error, raised in the sandbox with the error's text as
// its message:
//
//   - an error that is or wraps a *message.RaisedException raises the
//     exception's type (and data), the exception's "Type: msg" in the
//     error's text read as msg: fmt.Errorf("loading cfg: %w", exc) with
//     exc a ValueError "bad" raises ValueError("loading cfg: bad"). A type
//     the worker does not know raises RuntimeError instead;
//   - a *value.ConversionError (a failed [Call.DecodeArg], say) raises
//     TypeError, as a mismatched argument of a function adapted by
//     reflection does;
//   - an error carrying an errno (an *fs.PathError, say) or matching
//     fs.ErrNotExist, fs.ErrExist or fs.ErrPermission raises the OSError
//     subclass CPython raises for it (FileNotFoundError,
//     IsADirectoryError, PermissionError, ...; OSError for the errnos
//     whose subclass the worker lacks);
//   - context.DeadlineExceeded or os.ErrDeadlineExceeded raises
//     TimeoutError;
//   - any other error raises RuntimeError.
//
// Methods, constructors and Getattr hooks of host classes, Async
// functions and [OSHandler]s (whose other errors raise OSError) follow the
// same rules. An exception's own traceback, if it has one, is not sent:
// the sandbox's traceback is its own frames down to the call (the worker
// keeps no host frames, and would reject the answer over a frame it finds
// invalid). A panic, in the Func or in converting its result, is a
// RuntimeError.
//
// A result with no Python equivalent raises TypeError in the sandbox, and
// one that cannot be sent (over the frame cap, or nested deeper than the
// protocol-2 worker decodes) raises ValueError naming the function; the
// sandbox's code can catch either, and the run goes on. The same holds for
// an exception too large to send, and for a value set with SetValue that
// cannot be sent (ValueError when it is looked up).
//
// ctx is cancelled when the feed ends or is cancelled; a Func must return
// promptly then.
//
// Functions registered with Async run on their own goroutines, concurrently
// with each other, and must be safe for that. One that ends its goroutine
// without returning (runtime.Goexit) raises RuntimeError.
type Func func(ctx context.Context, call *Call) (any, error)

// Call is one call from the sandbox to a host function. Its values live in
// Values, which the Func may read (also from another goroutine) but must
// not modify.
//
// A Call is read-only data; it is safe to read from several goroutines.
type Call struct {
	// Name is the called name.
	Name string
	// CallID is the worker's id of the call.
	CallID uint32
	// Args are the positional arguments, as roots in Values.
	Args []value.NodeID
	// Kwargs are the keyword arguments: (name str node, value node) pairs.
	Kwargs []value.Pair
	// Values holds the arguments.
	Values *value.Graph
	// ObjectID is the receiver of a method call on a host object, or nil.
	ObjectID *value.UUID
	// Eager is set when the sandbox awaits the call at once
	// (`x = await f()`, protocol 4 only). Only an [Async] function's
	// result is then answered as a settled awaitable; any other's is the
	// plain value, which the sandbox cannot await (TypeError), as at the
	// other protocols.
	Eager bool
	// Position is where the call is in the sandbox's source (protocol 5):
	// its filename ("<python-input-N>" or "<string>") and UTF-8 byte
	// range. It is the empty range at offset 0 when the child did not send
	// one (protocols 4 and 2, gomonty's relay over the released worker).
	Position message.SourceRange

	r *runner // the feed's runner, for decoding host objects; nil outside Run
}

// NumArgs returns the number of positional arguments.
func (c *Call) NumArgs() int { return len(c.Args) }

// Arg returns positional argument i as a Value. Like a slice index, it
// panics when i is not below [Call.NumArgs] (a Func should check
// NumArgs, or use [Call.DecodeArg], which returns the TypeError the
// sandbox would raise). The session turns a Func's panic into a
// RuntimeError in the sandbox ("host function f panicked: ..."), so the
// feed goes on, but the sandbox's code can catch that error.
func (c *Call) Arg(i int) Value {
	if i < 0 || i >= len(c.Args) {
		n := len(c.Args)
		panic(fmt.Sprintf("monty session: Call.Arg(%d) of %s(), which was passed %d positional argument%s", i, c.Name, n, plural(n)))
	}
	return Value{Graph: c.Values, Root: c.Args[i]}
}

// DecodeArg converts positional argument i into dst (see value.ToGo). A
// host object of the session (see [Class]) decodes into a destination its
// Go value is assignable to as that Go value itself. Its errors, returned
// by a Func, raise TypeError: a *message.RaisedException when the sandbox
// passed fewer than i+1 positional arguments ("f() takes at least 2
// positional arguments but 1 was given"), a *value.ConversionError when
// the argument does not convert.
func (c *Call) DecodeArg(i int, dst any) error {
	if i < 0 {
		return fmt.Errorf("monty session: %s() has no argument %d", c.Name, i)
	}
	if n := len(c.Args); i >= n {
		return typeError("%s() takes at least %d positional argument%s but %d %s given", c.Name, i+1, plural(i+1), n, wasWere(n))
	}
	return c.decoder().Decode(c.Values, c.Args[i], dst)
}

// decode converts node id into a new value of type t: host objects of the
// session (at any depth) as their Go values, anything else with value.ToGo.
func (c *Call) decode(id value.NodeID, t reflect.Type) (reflect.Value, error) {
	pv := reflect.New(t)
	if err := c.decoder().Decode(c.Values, id, pv.Interface()); err != nil {
		return reflect.Value{}, err
	}
	return pv.Elem(), nil
}

// Kwarg returns the keyword argument name and whether it was given.
func (c *Call) Kwarg(name string) (Value, bool) {
	for _, p := range c.Kwargs {
		if k := c.Values.Node(p.Key); k.Kind == value.KindStr && k.Text() == name {
			return Value{Graph: c.Values, Root: p.Value}, true
		}
	}
	return Value{}, false
}

// KwargNames returns the keyword argument names, in call order.
func (c *Call) KwargNames() []string {
	out := make([]string, 0, len(c.Kwargs))
	for _, p := range c.Kwargs {
		out = append(out, c.Values.Node(p.Key).Text())
	}
	return out
}

// FuncOption configures a registered function.
//
// It is a plain function value, safe to share. A nil FuncOption is ignored.
type FuncOption func(*hostFunc)

// Async registers the function as asynchronous: a call is answered with an
// external future at once and the function runs in its own goroutine, so
// `await asyncio.gather(f(1), f(2))` runs the calls concurrently. A call
// that the sandbox awaits at once (protocol 4's eager await) still runs
// inline. Without Async, a call runs before the sandbox continues, and
// awaiting its result is a TypeError.
func Async() FuncOption { return func(h *hostFunc) { h.async = true } }

// Params names a function's parameters, one name per parameter that takes
// an argument (after an optional context; a final variadic parameter has
// none), so that the sandbox may pass them by keyword, as Python code
// often does: Register("fetch", fetch, Params("item", "qty")) accepts
// fetch("apple", qty=2). Without Params, arguments are positional only.
// For a [Func], which reads Call.Kwargs itself, the names only appear in
// [Registry.Stubs].
func Params(names ...string) FuncOption {
	names = slices.Clone(names)
	return func(h *hostFunc) { h.params = names }
}

// Doc documents a function: its docstring in [Registry.Stubs], where a
// model reading the stubs finds what the function is for. It is also sent
// with the function value the sandbox gets (the released worker keeps it
// to itself: a host function has no __doc__ there). Text that is not
// UTF-8 is repaired with U+FFFD: the protocol carries only UTF-8.
func Doc(text string) FuncOption {
	text = strings.ToValidUTF8(text, "\uFFFD")
	return func(h *hostFunc) { h.doc = &text }
}

type hostFunc struct {
	doc    *string // Doc, or nil
	name   string
	fn     Func
	async  bool
	params []string   // Params, or nil
	sig    *signature // the adapted Go function; nil for a Func
}

// Registry holds the host functions, values and classes a sandbox can
// reach by name. A Registry is safe for concurrent use; registering while
// a feed runs affects later lookups. The zero Registry is empty and ready
// to use, as is the one [NewRegistry] returns; a nil *Registry is an
// empty one that cannot be added to (WithFunctions(nil), Stubs).
type Registry struct {
	mu      sync.RWMutex
	funcs   map[string]*hostFunc
	values  map[string]any
	classes map[string]*Class
	types   map[reflect.Type]*Class // by Go type (the element type T)
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	r := &Registry{}
	r.init()
	return r
}

// init makes the maps of a zero Registry; r.mu must be held (or r not yet
// shared).
func (r *Registry) init() {
	if r.funcs == nil {
		r.funcs, r.values = map[string]*hostFunc{}, map[string]any{}
		r.classes, r.types = map[string]*Class{}, map[reflect.Type]*Class{}
	}
}

var (
	ctxType   = reflect.TypeFor[context.Context]()
	errorType = reflect.TypeFor[error]()
	callType  = reflect.TypeFor[*Call]()
)

// Register makes fn callable from the sandbox as name. fn is a [Func] (or
// a func with Func's signature), or any other Go function, adapted by
// reflection: an optional leading context.Context, then one parameter per
// positional argument (a final variadic parameter takes the rest), each
// converted with value.ToGo; and results (), (T), (error) or (T, error),
// with T converted by value.FromGo. Arguments are positional unless
// [Params] names the parameters. An argument that does not convert, a
// wrong argument count or an unexpected keyword argument raises TypeError
// in the sandbox. [Registry.Stubs] declares the function for the type
// checker. A host object the session sent (see [Class]) arrives as
// its own Go value in a parameter that value is assignable to (*T, an
// interface) and as a copy in a T parameter; a class instance the session
// did not send is refused for a parameter of a host class's type.
//
// A function that no call could ever succeed with is refused: one with a
// parameter no sandbox value converts into (a channel, a func, a complex
// number, unsafe.Pointer, big.Float, big.Rat or time.Location, unless
// its pointer has an UnmarshalText or UnmarshalJSON to decode through; a
// pointer to one takes None and a slice or map of them an empty one, so
// those are accepted, as is a final variadic parameter, which may take no
// arguments), or a result no Go value of its type converts out of. These
// are types [Registry.Stubs] annotates as typing.Never; a class
// registered for such a type (RegisterClass, before Register) makes it
// one that converts.
//
// A name the sandbox resolves itself (a builtin such as len, print or
// ValueError) is refused: the worker asks the host only for names it
// cannot resolve, so a host function by that name would never be called.
// It replaces any value or class registered as name.
//
// Names are taken as the sandbox reads them: NFKC-normalized, as CPython
// normalizes every identifier (PEP 3131), so a function registered as ｆ
// (full-width) is the sandbox's f, and so are the names of [Params], of
// SetValue, RegisterClass and a Policy's Methods. Register and
// RegisterClass check that form by the rule of an [Input]'s name: it must
// be an identifier that is not a hard keyword (x² is accepted as x2, ｉｆ
// refused as the keyword if), where a character Go's Unicode tables do not
// have yet is left to the worker; [Registry.Stubs] leaves such a name out.
// The names of Params, Methods and class attributes must be identifiers
// by Go's tables both as written and once normalized.
func (r *Registry) Register(name string, fn any, opts ...FuncOption) error {
	name, err := globalName(name)
	if err != nil {
		return err
	}
	h := &hostFunc{name: name}
	for _, o := range opts {
		if o != nil {
			o(h)
		}
	}
	if h.params != nil {
		if h.params, err = paramNames(name, h.params); err != nil {
			return err
		}
	}
	if h.fn, h.sig, err = adapt(name, fn, h.params); err != nil {
		return err
	}
	r.mu.Lock()
	if h.sig != nil {
		if err := r.unconvertible(h.sig); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	r.init()
	r.funcs[name] = h
	delete(r.values, name)
	delete(r.classes, name)
	r.mu.Unlock()
	return nil
}

// MustRegister is Register that panics on error; it returns r for
// chaining.
func (r *Registry) MustRegister(name string, fn any, opts ...FuncOption) *Registry {
	if err := r.Register(name, fn, opts...); err != nil {
		panic(err)
	}
	return r
}

// SetValue makes the global name resolve to v (any value value.FromGo
// accepts, or a Value) when the sandbox reads it without defining it.
// The worker binds the value for the rest of the session. A name the
// sandbox resolves itself (a builtin, see Register) is never read from
// the host; to give the sandbox a global by such a name, pass it as an
// [Input] of the run, which shadows the builtin.
//
// A Go value of a class registered with RegisterClass (a *T or a T), or
// one wrapped with [Object], is sent as a host object (see [Class]).
// It replaces any function or class registered as name.
func (r *Registry) SetValue(name string, v any) {
	name = nfkc(name)
	r.mu.Lock()
	r.init()
	r.values[name] = v
	delete(r.funcs, name)
	delete(r.classes, name)
	r.mu.Unlock()
}

// RegisterClass makes the global name resolve to the host class c, so
// the sandbox can use it with isinstance() and, when c's policy allows,
// call it to construct instances. It also makes Go values of c's type
// convert to instances of c wherever this registry's functions, methods
// and values return them (at the top level or in eager attributes;
// elsewhere wrap them with [Object]). A later registration for the same
// Go type takes over that conversion. It replaces any function or value
// registered as name. Like Register, it refuses a class with a method or
// constructor that no call could succeed with (a parameter or result of
// a type that never converts), or with a field (Eager, Lazy, or exposed
// by LazyAll) of a type that converts out to no sandbox value (a
// channel, a func, a complex number, ...; the type [Registry.Stubs]
// annotates as typing.Never), counting c itself as registered.
func (r *Registry) RegisterClass(name string, c *Class) error {
	name, err := globalName(name)
	if err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("monty session: nil class for %q", name)
	}
	r.mu.Lock()
	r.init()
	// Its methods and constructor are judged with c registered, so that
	// they may take and return c's own type.
	prev, had := r.types[c.typ]
	r.types[c.typ] = c
	if err := r.classUnconvertible(c); err != nil {
		if had {
			r.types[c.typ] = prev
		} else {
			delete(r.types, c.typ)
		}
		r.mu.Unlock()
		return err
	}
	r.classes[name] = c
	delete(r.funcs, name)
	delete(r.values, name)
	r.mu.Unlock()
	return nil
}

// classUnconvertible refuses a class with a field (eager, lazy, or one
// LazyAll exposes) of a type that converts out to no sandbox value (its
// stub type is typing.Never, see unconvertible): every instance sent
// with it eager, and every read of it lazy, would fail. Then it is
// unconvertible for the constructor and each method (by name).
func (r *Registry) classUnconvertible(c *Class) error {
	st := stubWriter{r: r}
	for _, f := range c.eager {
		if st.pyType(f.typ) == "Never" {
			return fieldUnconvertible(c, f, "every instance sent would fail")
		}
	}
	for _, name := range sortedKeys(c.fields) {
		if f := c.fields[name]; st.pyType(f.typ) == "Never" {
			return fieldUnconvertible(c, f, "every read of it would fail")
		}
	}
	if c.ctor != nil {
		if err := r.unconvertible(c.ctor); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(c.methods) {
		if err := r.unconvertible(c.methods[name].sig); err != nil {
			return err
		}
	}
	return nil
}

func fieldUnconvertible(c *Class, f field, why string) error {
	return fmt.Errorf("monty session: class %s: field %q is a %v, which converts to no sandbox value, so %s (its stub type is typing.Never); expose a type the conversions accept, leave the field out (a `monty:\"-\"` tag keeps LazyAll off it), or register a host class for %v first", c.name, f.name, f.typ, why, f.typ)
}

// MustRegisterClass is RegisterClass that panics on error; it returns r
// for chaining.
func (r *Registry) MustRegisterClass(name string, c *Class) *Registry {
	if err := r.RegisterClass(name, c); err != nil {
		panic(err)
	}
	return r
}

func (r *Registry) class(name string) *Class {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.classes[name]
}

func (r *Registry) classOf(t reflect.Type) *Class {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.types[t]
}

func (r *Registry) fn(name string) *hostFunc {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.funcs[name]
}

func (r *Registry) value(name string) (any, bool) {
	if r == nil {
		return nil, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.values[name]
	return v, ok
}

// globalName checks a name the sandbox is to look up from the host and
// returns it as the sandbox reads it (see nfkc). The rule is the inputs'
// (pyident.Global): the NFKC form must be an identifier, or one but for
// characters newer than Go's Unicode tables; the written form need not be
// (x² is the sandbox's x2), since the worker asks for the name in NFKC
// form only. TestRealRegisteredNamesAsTheWorkerReadsThem holds it to the
// worker.
func globalName(name string) (string, error) {
	n, ok := pyident.Global(name)
	switch {
	case !ok:
		return "", fmt.Errorf("monty session: %q is not a valid Python identifier", name)
	case sandboxResolves(n):
		return "", fmt.Errorf("monty session: %q is a builtin the sandbox resolves itself; it never asks the host for it, so choose another name", name)
	}
	return n, nil
}

// nfkc returns an identifier as the sandbox reads it: NFKC-normalized, as
// CPython's parser normalizes every identifier (PEP 3131), so that ｆ and
// f are one name (pyident.Bound). The worker asks the host for names,
// keywords and attributes in that form only.
func nfkc(name string) string { return pyident.Bound(name) }

// pyName returns name as the sandbox reads it (see nfkc), and whether it
// is a valid identifier both as written and in that form.
func pyName(name string) (string, bool) {
	n := nfkc(name)
	return n, isIdentifier(name) && isIdentifier(n)
}

// paramNames checks the parameter names of fn's Params and returns them
// as the sandbox passes them (see nfkc).
func paramNames(fn string, names []string) ([]string, error) {
	out := make([]string, len(names))
	for i, n := range names {
		var ok bool
		if out[i], ok = pyName(n); !ok || slices.Contains(out[:i], out[i]) {
			return nil, fmt.Errorf("monty session: %q: bad or repeated parameter name %q", fn, n)
		}
	}
	return out, nil
}

// sandboxBuiltins are the names other than exception types that the
// worker resolves from its own builtins, without a name lookup: what it
// does with each was checked against the released worker
// (TestSandboxResolvesItsBuiltins).
var sandboxBuiltins = map[string]bool{
	"abs": true, "all": true, "any": true, "bin": true, "chr": true, "divmod": true, "enumerate": true,
	"filter": true, "getattr": true, "hasattr": true, "hash": true, "hex": true, "id": true,
	"isinstance": true, "iter": true, "len": true, "map": true, "max": true, "min": true, "next": true,
	"oct": true, "open": true, "ord": true, "pow": true, "print": true, "repr": true, "reversed": true,
	"round": true, "setattr": true, "sorted": true, "sum": true, "zip": true,
	"bool": true, "bytes": true, "dict": true, "float": true, "frozenset": true, "int": true, "list": true,
	"object": true, "property": true, "range": true, "set": true, "slice": true, "str": true,
	"tuple": true, "type": true,
	"Ellipsis": true, "NotImplemented": true, "__name__": true,
	"__debug__": true, "__doc__": true, "__package__": true, "__spec__": true, "__annotations__": true,
}

// sandboxResolves reports whether the worker resolves name itself: one of
// its builtins, or an exception type it knows.
func sandboxResolves(name string) bool {
	return sandboxBuiltins[name] || value.KnownExceptionType(name)
}

// isIdentifier reports whether s is a Python identifier that is not a
// keyword, by the classes of package pyident (letters, letter
// numbers and Other_ID_Start first; marks, digits, connectors and
// Other_ID_Continue after), as Go's Unicode tables have them: a name that
// is not UTF-8, or holds a space or a symbol (price€), could never be
// written in the sandbox, and one that is not UTF-8 would also make
// [Registry.Stubs] unusable as Config.TypeCheckStubs.
func isIdentifier(s string) bool {
	return pyident.Name(s)
}

// adapt turns fn into a Func, returning the signature of a Go function
// adapted by reflection (nil for a Func); names are its parameter names,
// or nil.
func adapt(name string, fn any, names []string) (Func, *signature, error) {
	v := reflect.ValueOf(fn)
	switch {
	case !v.IsValid(), v.Kind() == reflect.Func && v.IsNil():
		return nil, nil, fmt.Errorf("monty session: nil function for %q", name)
	case v.Kind() != reflect.Func:
		return nil, nil, fmt.Errorf("monty session: %q: %T is not a function", name, fn)
	}
	switch f := fn.(type) {
	case Func:
		return f, nil, nil
	case func(context.Context, *Call) (any, error):
		return f, nil, nil
	}
	sig, err := newSignature(name, v.Type(), false, names)
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context, call *Call) (any, error) {
		return sig.call(ctx, v, reflect.Value{}, call)
	}, sig, nil
}

// signature is a Go function adapted by reflection: an optional receiver
// (a method expression's first parameter, supplied by the caller), an
// optional context, one parameter per positional argument (a final
// variadic one takes the rest) and results (), (T), (error) or (T, error).
type signature struct {
	name     string // for messages
	recv     bool
	self     bool // messages count a self no Go parameter takes (a Constructor, as __init__)
	ctx      bool
	params   []reflect.Type
	names    []string     // Python names of the fixed parameters, for keywords; nil: positional only
	out      reflect.Type // the value result's type; nil without one
	fixed    int
	variadic bool
	hasVal   bool
	hasErr   bool
}

func newSignature(name string, t reflect.Type, recv bool, names []string) (*signature, error) {
	s := &signature{name: name, recv: recv, variadic: t.IsVariadic()}
	first := 0
	if recv {
		first = 1
	}
	if t.NumIn() > first && t.In(first) == ctxType {
		s.ctx = true
		first++
	}
	for i := first; i < t.NumIn(); i++ {
		switch t.In(i) {
		case callType:
			// Whatever its place: only a Func gets the Call.
			return nil, fmt.Errorf("monty session: %q: %v takes a *Call, which only a Func (func(context.Context, *Call) (any, error)) may", name, t)
		case ctxType:
			return nil, fmt.Errorf("monty session: %q: parameter %d of %v must come first or not at all", name, i, t)
		}
		s.params = append(s.params, t.In(i))
	}
	switch t.NumOut() {
	case 0:
	case 1:
		if t.Out(0) == errorType {
			s.hasErr = true
		} else {
			s.hasVal, s.out = true, t.Out(0)
		}
	case 2:
		if t.Out(1) != errorType {
			return nil, fmt.Errorf("monty session: %q: second result of %v must be error", name, t)
		}
		s.hasVal, s.hasErr, s.out = true, true, t.Out(0)
	default:
		return nil, fmt.Errorf("monty session: %q: %v has more than two results", name, t)
	}
	s.fixed = len(s.params)
	if s.variadic {
		s.fixed--
	}
	if names != nil {
		if len(names) != s.fixed {
			return nil, fmt.Errorf("monty session: %q: %d parameter names for %d parameters", name, len(names), s.fixed)
		}
		var err error
		if s.names, err = paramNames(name, names); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// call binds the call's arguments to the parameters and calls fn (with
// recv first when the signature has a receiver).
func (s *signature) call(ctx context.Context, fn, recv reflect.Value, call *Call) (any, error) {
	n := len(call.Args)
	if len(call.Kwargs) > 0 && s.names == nil {
		return nil, typeError("%s() got an unexpected keyword argument '%s'",
			s.name, call.Values.Node(call.Kwargs[0].Key).Text())
	}
	// CPython checks the keyword arguments before the positional count
	// (f(1, 2, 3, c=4) of def f(a, b) is an unexpected keyword argument),
	// so with names the count is checked after them, below.
	switch {
	case !s.variadic && s.names == nil && n != s.fixed:
		return nil, s.countError("", n)
	case s.variadic && s.names == nil && n < s.fixed:
		return nil, s.countError("at least ", n)
	}
	var slotBuf [8]value.NodeID
	var givenBuf [8]bool
	slots, given := slotBuf[:0], givenBuf[:0]
	if s.fixed > len(slotBuf) {
		slots, given = make([]value.NodeID, 0, s.fixed), make([]bool, 0, s.fixed)
	}
	slots, given = slots[:s.fixed], given[:s.fixed]
	for i := range min(n, s.fixed) {
		slots[i], given[i] = call.Args[i], true
	}
	for _, kw := range call.Kwargs {
		k := call.Values.Node(kw.Key).Text()
		i := slices.Index(s.names, k)
		switch {
		case i < 0:
			return nil, typeError("%s() got an unexpected keyword argument '%s'", s.name, k)
		case given[i]:
			return nil, typeError("%s() got multiple values for argument '%s'", s.name, k)
		}
		slots[i], given[i] = kw.Value, true
	}
	if !s.variadic && n > s.fixed {
		return nil, s.countError("", n)
	}
	if missing := missingNames(s.names, given); len(missing) > 0 {
		return nil, typeError("%s() missing %d required positional argument%s: %s",
			s.name, len(missing), plural(len(missing)), joinNames(missing))
	}
	size := max(n, s.fixed)
	if s.recv {
		size++
	}
	if s.ctx {
		size++
	}
	in := make([]reflect.Value, 0, size)
	if s.recv {
		in = append(in, recv)
	}
	if s.ctx {
		in = append(in, reflect.ValueOf(ctx))
	}
	for i, id := range slots {
		v, err := call.decode(id, s.params[i])
		if err != nil {
			if i >= n {
				return nil, typeError("%s() argument '%s': %s", s.name, s.names[i], conversionText(err))
			}
			return nil, typeError("%s() argument %d: %s", s.name, i+1, conversionText(err))
		}
		in = append(in, v)
	}
	for i := s.fixed; i < n; i++ {
		v, err := call.decode(call.Args[i], s.params[s.fixed].Elem())
		if err != nil {
			return nil, typeError("%s() argument %d: %s", s.name, i+1, conversionText(err))
		}
		in = append(in, v)
	}
	out := fn.Call(in)
	var res any
	if s.hasVal {
		res = out[0].Interface()
	}
	if s.hasErr {
		if e := out[len(out)-1]; !e.IsNil() {
			return nil, e.Interface().(error)
		}
	}
	return res, nil
}

// countError is the TypeError of a call with n positional arguments that
// the signature does not take. A method counts its receiver, as CPython
// counts self: Widget.grow() takes 3 positional arguments but 4 were given;
// so does a Constructor, as __init__.
func (s *signature) countError(atLeast string, n int) error {
	want := s.fixed
	if s.recv || s.self {
		want, n = want+1, n+1
	}
	return typeError("%s() takes %s%d positional argument%s but %d %s given",
		s.name, atLeast, want, plural(want), n, wasWere(n))
}

// missingNames returns the quoted names of the parameters not given.
func missingNames(names []string, given []bool) []string {
	var m []string
	for i, ok := range given {
		if !ok {
			m = append(m, "'"+names[i]+"'")
		}
	}
	return m
}

// joinNames joins names the way CPython does: 'a', 'a' and 'b',
// 'a', 'b', and 'c'.
func joinNames(m []string) string {
	switch len(m) {
	case 1:
		return m[0]
	case 2:
		return m[0] + " and " + m[1]
	}
	return strings.Join(m[:len(m)-1], ", ") + ", and " + m[len(m)-1]
}

func conversionText(err error) string {
	s := err.Error()
	for _, p := range []string{"value: ", "monty session: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

// ErrNotHandled, returned by an OSHandler, answers the OS call with "not
// handled": the sandbox raises the call's default error (PermissionError
// for filesystem calls).
var ErrNotHandled = errors.New("monty session: OS call not handled")

// OSHandler answers the sandbox's OS calls (filesystem, environment,
// clock). HandleOS returns the complete answer; its CallID is filled in by
// the session. A nil answer with a nil error, or ErrNotHandled, means "not
// handled". Any other error is raised in the sandbox as a [Func]'s error
// is (an exception in its chain with the error's text, an errno or fs
// sentinel as CPython's OSError subclass, a deadline as TimeoutError),
// except that an error with none of these raises OSError rather than
// RuntimeError. The exception of an answer whose result is a ResultError
// is sent as a Func's *message.RaisedException is (no traceback, a type
// the worker does not know as RuntimeError). An answer that cannot be sent (over the frame cap) raises
// ValueError naming the op. If ctx is done when HandleOS returns, the feed
// is aborted instead.
//
// Package mount provides a hardened implementation.
//
// A session calls HandleOS from the goroutine running the feed, one call at a
// time; a handler shared by several sessions must be safe for concurrent use.
type OSHandler interface {
	HandleOS(ctx context.Context, call *message.OsCall) (*message.ResumeCall, error)
}

// OSFunc adapts a function to OSHandler.
//
// It is as safe for concurrent use as the function it wraps.
type OSFunc func(ctx context.Context, call *message.OsCall) (*message.ResumeCall, error)

// HandleOS calls f.
func (f OSFunc) HandleOS(ctx context.Context, call *message.OsCall) (*message.ResumeCall, error) {
	return f(ctx, call)
}
