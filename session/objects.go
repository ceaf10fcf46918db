package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/gomonty/monty/internal/unsent"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Host objects: Go values exposed to the sandbox as instances of host
// classes (protocol: ClassInstance and Type nodes of origin HOST, method
// calls as FunctionCall with object_id, lazy attributes as NameLookup with
// object_id).
//
// Identities: a Class gets a uuid4 when it is made; an instance gets one the
// first time a session sends it, and keeps it for that session (the same
// pointer is always the same uuid). Each session keeps its own store of the
// instances it has sent, and only that store answers the worker's object
// ids: an id the session did not hand out (for example one the sandbox
// made for its own classes) is an AttributeError, never a lookup of
// anything else.

// Policy says what of a Go type the sandbox may see and do.
//
// A Policy is plain data; ClassOf copies it.
type Policy struct {
	// Eager lists the attributes sent with every instance, in order:
	// exported struct fields, named as value.StructFields names them
	// (`monty` tag, else `json` tag, else Go name), taken NFKC-normalized
	// as the sandbox reads every attribute name (so are ClassAttrs' names).
	// The sandbox reads them locally, without a round trip, and repr() shows them
	// (Widget(size=3)). They are a snapshot taken when the instance is
	// sent: a method that changes such a field does not change the
	// sandbox's copy, so mutable state belongs in Lazy.
	Eager []string
	// Lazy lists fields read from the Go value each time the sandbox reads
	// them (one round trip per read; the worker does not cache them).
	Lazy []string
	// LazyAll makes every exported field readable lazily.
	LazyAll bool
	// Methods lists the Go methods callable from the sandbox, each as
	// "name", "name(p1, p2)" or "name=GoName(p1, p2)". name is the Python
	// name; the Go method is GoName, else name itself when it is exported,
	// else name in CamelCase (grow: Grow, add_item: AddItem). Listing the
	// parameter names lets the sandbox pass those arguments by keyword. A
	// method is adapted like a function given to Registry.Register
	// (optional leading context, arguments converted with value.ToGo,
	// results with value.FromGo, a Go error raised). Any other method is an
	// AttributeError in the sandbox.
	Methods []string
	// ClassAttrs are class attributes sent with the class (constants).
	ClassAttrs []value.Attr
	// Dataclass marks the class as a dataclass: the sandbox sees
	// dataclass instances (fields(), asdict() and the like work on them).
	// Either way an instance's repr, in the sandbox and from Value.Repr, is
	// Widget(size=3) with the attributes sent with it.
	Dataclass bool
	// Construct lets the sandbox call the class to make an instance. With
	// no Constructor, the Go value starts as the zero T, positional
	// arguments set the Eager fields in order and keyword arguments set any
	// Eager or Lazy field. Without Construct or Constructor, calling the
	// class is a TypeError ("cannot create 'Widget' instances").
	Construct bool
	// Constructor, when set, makes instances (and implies Construct): a Go
	// function adapted like Registry.Register functions, returning a *T
	// or a T, optionally with an error.
	Constructor any
	// ConstructorParams names the Constructor's parameters, so the
	// sandbox can pass them by keyword.
	ConstructorParams []string
	// Getattr, when set, answers reads of attributes the policy does not
	// list: obj is the instance's Go value (a *T), or nil for an attribute
	// of the class itself. found false is an AttributeError; an error is
	// raised at the read (as a [Func]'s error is), past any getattr()
	// default, except one that raises AttributeError: like a Python
	// __getattr__ raising it, it means found false (hasattr is False and
	// getattr's default is returned), and the sandbox's AttributeError
	// has the worker's text, not the error's. It runs on the goroutine of
	// the feed; ctx ends with the feed.
	Getattr func(ctx context.Context, obj any, name string) (v any, found bool, err error)
}

// Class is a Go type exposed to the sandbox as a host class, with the
// Policy it was made with. Make one with [ClassOf]; bind it to a global
// name with [Registry.RegisterClass]; send Go values of it with
// [Registry.SetValue], [WithInputs], as results of host functions and
// methods, or wrapped with [Object].
//
// Instances are held as *T: a T is copied into a new value when it is
// sent. Host objects travel only through [Session.Run] and
// [Session.Continue]; the low-level turn API cannot send them.
//
// A session keeps every Go value it has sent (and so the worker may still
// name) until it is Reset or detached for a pool (the worker forgets its
// objects then), at most Config.MaxHostObjects of them.
//
// A Class is immutable and safe for concurrent use, by several sessions
// at once; the Go values it exposes are not protected by it (methods of
// one session run one at a time, but values shared between sessions must
// be safe for that).
type Class struct {
	name    string
	id      value.UUID
	typ     reflect.Type // T
	p       Policy
	eager   []field
	fields  map[string]field // readable by name: eager and lazy
	methods map[string]*method
	ctor    *signature
	ctorFn  reflect.Value
}

type field struct {
	name  string
	index []int
	typ   reflect.Type
}

type method struct {
	py  string
	fn  reflect.Value // the method expression: receiver first
	sig *signature
}

// ClassOf makes a host class named name for the Go type T (a struct, or
// any named type with methods; ClassOf[*T] is ClassOf[T]). It checks the
// policy against T: every listed field and method must exist and be
// exported.
func ClassOf[T any](name string, p Policy) (*Class, error) {
	return newClass(name, reflect.TypeFor[T](), p)
}

// MustClassOf is ClassOf that panics on error.
func MustClassOf[T any](name string, p Policy) *Class {
	c, err := ClassOf[T](name, p)
	if err != nil {
		panic(err)
	}
	return c
}

func newClass(name string, t reflect.Type, p Policy) (*Class, error) {
	if !isIdentifier(name) {
		return nil, fmt.Errorf("monty session: class name %q is not a valid Python identifier", name)
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return nil, fmt.Errorf("monty session: class %s: %v cannot back a host class", name, t)
	}
	p.Eager = append([]string(nil), p.Eager...)
	p.Lazy = append([]string(nil), p.Lazy...)
	p.Methods = append([]string(nil), p.Methods...)
	p.ClassAttrs = append([]value.Attr(nil), p.ClassAttrs...)
	p.ConstructorParams = append([]string(nil), p.ConstructorParams...)
	c := &Class{name: name, id: value.NewUUID(), typ: t, p: p, fields: map[string]field{},
		methods: map[string]*method{}}
	all := structFields(t)
	// Attribute names as the sandbox reads them (see nfkc).
	attr := func(f field) field { f.name = nfkc(f.name); return f }
	for _, n := range p.Eager {
		f, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("monty session: class %s: %v has no exported field %q", name, t, n)
		}
		f = attr(f)
		if _, dup := c.fields[f.name]; dup {
			return nil, fmt.Errorf("monty session: class %s: field %q listed twice", name, n)
		}
		c.eager = append(c.eager, f)
		c.fields[f.name] = f
	}
	for _, n := range p.Lazy {
		f, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("monty session: class %s: %v has no exported field %q", name, t, n)
		}
		f = attr(f)
		c.fields[f.name] = f
	}
	if p.LazyAll {
		for _, f := range all {
			f = attr(f)
			c.fields[f.name] = f
		}
	}
	pt := reflect.PointerTo(t)
	for _, spec := range p.Methods {
		m, err := parseMethod(name, pt, spec)
		if err != nil {
			return nil, err
		}
		if _, dup := c.methods[m.py]; dup {
			return nil, fmt.Errorf("monty session: class %s: method %q listed twice", name, m.py)
		}
		if _, clash := c.fields[m.py]; clash {
			return nil, fmt.Errorf("monty session: class %s: %q is both a field and a method", name, m.py)
		}
		c.methods[m.py] = m
	}
	for i, a := range c.p.ClassAttrs {
		n, ok := pyName(a.Name)
		if !ok {
			return nil, fmt.Errorf("monty session: class %s: class attribute %q is not a valid identifier", name, a.Name)
		}
		c.p.ClassAttrs[i].Name = n
	}
	if p.Constructor != nil {
		fn := reflect.ValueOf(p.Constructor)
		if fn.Kind() != reflect.Func {
			return nil, fmt.Errorf("monty session: class %s: constructor %T is not a function", name, p.Constructor)
		}
		if fn.IsNil() {
			return nil, fmt.Errorf("monty session: class %s: nil constructor function", name)
		}
		var names []string
		if len(p.ConstructorParams) > 0 {
			names = p.ConstructorParams
		}
		sig, err := newSignature(name, fn.Type(), false, names)
		if err != nil {
			return nil, err
		}
		if out := fn.Type(); !sig.hasVal || (out.Out(0) != t && out.Out(0) != pt) {
			return nil, fmt.Errorf("monty session: class %s: constructor %v must return %v or %v", name, out, pt, t)
		}
		// Its TypeErrors are those of the class's __init__, as CPython
		// words them (counting self), like the field-by-field ones.
		sig.name, sig.self = name+".__init__", true
		c.ctor, c.ctorFn = sig, fn
	} else if len(p.ConstructorParams) > 0 {
		return nil, fmt.Errorf("monty session: class %s: ConstructorParams without a Constructor", name)
	}
	return c, nil
}

// Name returns the class's Python name.
func (c *Class) Name() string { return c.name }

// ID returns the class's uuid, the identity the worker knows it by.
func (c *Class) ID() value.UUID { return c.id }

// GoType returns the Go type T whose values are the class's instances
// (held as *T).
func (c *Class) GoType() reflect.Type { return c.typ }

// AppendGraph makes a *Class a value FromGo accepts inside Session.Run: it
// appends the class's Type node (with its class attributes). Outside a
// Run there is no session to route calls to it, and it is an error.
func (c *Class) AppendGraph(*value.Graph) (value.NodeID, error) { return 0, errUnbound }

// Object wraps v, a *T or T of class c's Go type, as a value FromGo
// accepts inside Session.Run: it becomes an instance of c, also when it
// is nested in other values (lists, maps, struct fields), where a plain
// *T would become a dict. A v of another type (or a nil pointer) fails the
// conversion.
func Object(c *Class, v any) value.GraphAppender { return &hostObject{c: c, v: v} }

type hostObject struct {
	c *Class
	v any
}

// AppendGraph fails: a Run's conversion hook encodes host objects before
// this method is consulted; outside a Run there is no session to hold them.
func (o *hostObject) AppendGraph(*value.Graph) (value.NodeID, error) { return 0, errUnbound }

var errUnbound = errors.New("host classes and objects can only be sent by Session.Run or Session.Continue")

// pointer returns v as a *T: a *T as is, a T copied into a new one.
func (c *Class) pointer(v reflect.Value) (reflect.Value, error) {
	switch {
	case v.IsValid() && v.Type() == reflect.PointerTo(c.typ) && !v.IsNil():
		return v, nil
	case v.IsValid() && v.Type() == c.typ:
		p := reflect.New(c.typ)
		p.Elem().Set(v)
		return p, nil
	}
	return reflect.Value{}, fmt.Errorf("monty session: class %s holds *%v values, not %v", c.name, c.typ, typeName(v))
}

func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return "a nil " + v.Type().String()
	}
	return v.Type().String()
}

// structFields maps the Python names of T's fields to them, exactly as
// value.FromGo names and picks them (value.StructFields is the one
// resolver of both).
func structFields(t reflect.Type) map[string]field {
	out := map[string]field{}
	for _, f := range value.StructFields(t) {
		out[f.Name] = field{name: f.Name, index: f.Index, typ: f.Type}
	}
	return out
}

func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// read returns the field of the instance p (a *T), or an invalid Value when
// a nil embedded pointer hides it.
func (f field) read(p reflect.Value) reflect.Value {
	v, err := p.Elem().FieldByIndexErr(f.index)
	if err != nil {
		return reflect.Value{}
	}
	return v
}

// parseMethod parses "name", "name(p1, p2)" or "name=GoName(p1, p2)" and
// finds the Go method on pt.
func parseMethod(class string, pt reflect.Type, spec string) (*method, error) {
	head, params, hasParams := strings.Cut(spec, "(")
	var names []string
	if hasParams {
		inner, ok := strings.CutSuffix(strings.TrimSpace(params), ")")
		if !ok {
			return nil, fmt.Errorf("monty session: class %s: bad method spec %q", class, spec)
		}
		names = []string{}
		if inner = strings.TrimSpace(inner); inner != "" {
			for _, n := range strings.Split(inner, ",") {
				names = append(names, strings.TrimSpace(n))
			}
		}
	}
	py, goName, explicit := strings.Cut(strings.TrimSpace(head), "=")
	py, goName = strings.TrimSpace(py), strings.TrimSpace(goName)
	sandboxName, ok := pyName(py)
	if !ok {
		return nil, fmt.Errorf("monty session: class %s: method name %q is not a valid identifier", class, py)
	}
	if !explicit {
		goName = goMethodName(py)
	}
	py = sandboxName // as the sandbox names it
	m, ok := pt.MethodByName(goName)
	if !ok {
		return nil, fmt.Errorf("monty session: class %s: %v has no exported method %s (for %q)", class, pt, goName, py)
	}
	sig, err := newSignature(class+"."+py, m.Type, true, names)
	if err != nil {
		return nil, err
	}
	return &method{py: py, fn: m.Func, sig: sig}, nil
}

// goMethodName maps a Python method name to the Go one: an exported name
// as is, snake_case to CamelCase otherwise.
func goMethodName(py string) string {
	if r, _ := utf8.DecodeRuneInString(py); unicode.IsUpper(r) {
		return py
	}
	var b strings.Builder
	for part := range strings.SplitSeq(py, "_") {
		r, n := utf8.DecodeRuneInString(part)
		if n == 0 {
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(part[n:])
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// The per-session store

// objectStore holds the host objects one session has sent, by uuid. It
// lives on the Session (its zero value is empty and ready) and is safe for
// concurrent use (async host functions convert their results on their own
// goroutines). The worker forgets its objects when its session is reset, so
// Reset and Detach empty the store, releasing the Go values.
type objectStore struct {
	mu      sync.Mutex
	objs    map[value.UUID]*hostInstance
	ids     map[identity]value.UUID
	classes map[value.UUID]*Class
	types   map[reflect.Type]*Class
	bound   map[string]boundMethod // function name of a bound method → target
	tokens  map[boundMethod]string
	// held counts the ids given to objects of answers not yet sent or
	// refused (heldObjects): they count against the cap. epoch is
	// bumped by release, so that a held set from before it is dropped.
	held  int
	epoch uint64
}

// heldObjects are the host objects one answer (a call's result, a looked-up
// value, a Feed's inputs) gave new ids to while it was converted. They
// enter the store only when the answer is known to go to the worker
// (commit): an answer refused instead (a value the sandbox does not take
// back, a conversion error) registers nothing, and its objects' ids are
// forgotten (drop). Until then the ids count against the session's cap.
type heldObjects struct {
	st    *objectStore
	epoch uint64
	ids   map[identity]value.UUID
	insts map[value.UUID]*hostInstance
}

// commit registers the held objects; the set is empty afterwards.
func (h *heldObjects) commit() {
	if h == nil || len(h.ids) == 0 {
		return
	}
	st := h.st
	st.mu.Lock()
	if h.epoch == st.epoch {
		st.held -= len(h.ids)
		st.initLocked()
		for k, id := range h.ids {
			st.objs[id] = h.insts[id]
			if _, ok := st.ids[k]; !ok {
				// A concurrent answer may have given the same object
				// another id, committed first: the object keeps that
				// one for later answers, and both ids stand for it.
				st.ids[k] = id
			}
		}
	}
	st.mu.Unlock()
	h.ids, h.insts = nil, nil
}

// drop forgets the held objects; the set is empty afterwards.
func (h *heldObjects) drop() {
	if h == nil || len(h.ids) == 0 {
		return
	}
	st := h.st
	st.mu.Lock()
	if h.epoch == st.epoch {
		st.held -= len(h.ids)
	}
	st.mu.Unlock()
	h.ids, h.insts = nil, nil
}

type hostInstance struct {
	c *Class
	v reflect.Value // *T
}

type identity struct {
	ptr uintptr
	c   *Class
}

type boundMethod struct {
	id value.UUID
	m  string
}

// DefaultMaxHostObjects is the number of host objects a session keeps
// alive at once when Config.MaxHostObjects is 0.
const DefaultMaxHostObjects = 100_000

// HostObjectLimitError reports a host object that would exceed the
// session's cap on live host objects (Config.MaxHostObjects). The store
// empties when the session is Reset or goes back to a pool.
//
// It is not modified after it is returned; it is safe to read concurrently.
type HostObjectLimitError struct {
	// Limit is the cap in force.
	Limit int
}

func (e *HostObjectLimitError) Error() string {
	return fmt.Sprintf("monty session: more than %d live host objects (Config.MaxHostObjects); Reset releases them", e.Limit)
}

func (st *objectStore) initLocked() {
	if st.objs == nil {
		st.objs, st.ids = map[value.UUID]*hostInstance{}, map[identity]value.UUID{}
		st.classes, st.types = map[value.UUID]*Class{}, map[reflect.Type]*Class{}
		st.bound, st.tokens = map[string]boundMethod{}, map[boundMethod]string{}
	}
}

// release forgets every instance and class, so the Go values can be
// collected.
func (st *objectStore) release() {
	st.mu.Lock()
	st.objs, st.ids, st.classes, st.types, st.bound, st.tokens = nil, nil, nil, nil, nil, nil
	st.held = 0
	st.epoch++
	st.mu.Unlock()
}

// register returns the uuid of the instance p of c, giving it one the first
// time; a new instance past max live ones (0: DefaultMaxHostObjects),
// those held by answers not yet sent included, is a *HostObjectLimitError.
// With held not nil a new instance is held there (see heldObjects) rather
// than registered.
func (st *objectStore) register(c *Class, p reflect.Value, max int, held *heldObjects) (value.UUID, error) {
	if max <= 0 {
		max = DefaultMaxHostObjects
	}
	k := identity{p.Pointer(), c}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.addClassLocked(c)
	if id, ok := st.ids[k]; ok {
		return id, nil
	}
	if held != nil && held.epoch == st.epoch {
		if id, ok := held.ids[k]; ok {
			return id, nil
		}
	}
	if len(st.objs)+st.held >= max {
		return value.UUID{}, &HostObjectLimitError{Limit: max}
	}
	id := value.NewUUID()
	inst := &hostInstance{c: c, v: p}
	if held == nil {
		st.ids[k] = id
		st.objs[id] = inst
		return id, nil
	}
	if held.ids == nil || held.epoch != st.epoch {
		held.st, held.epoch = st, st.epoch
		held.ids, held.insts = map[identity]value.UUID{}, map[value.UUID]*hostInstance{}
	}
	held.ids[k], held.insts[id] = id, inst
	st.held++
	return id, nil
}
func (st *objectStore) addClass(c *Class) {
	st.mu.Lock()
	st.addClassLocked(c)
	st.mu.Unlock()
}

func (st *objectStore) addClassLocked(c *Class) {
	st.initLocked()
	if _, ok := st.classes[c.id]; !ok {
		st.classes[c.id] = c
		if _, ok := st.types[c.typ]; !ok {
			st.types[c.typ] = c
		}
	}
}

func (st *objectStore) instance(id value.UUID) *hostInstance {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.objs[id]
}

func (st *objectStore) class(id value.UUID) *Class {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.classes[id]
}

func (st *objectStore) classOf(t reflect.Type) *Class {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.types[t]
}

// token returns the function name standing for method m bound to the
// instance id: "Widget.grow@<random>". It is no identifier, so sandbox
// code cannot name it; only the Function value answered for `w.grow`
// calls it.
func (st *objectStore) token(c *Class, id value.UUID, m string) string {
	k := boundMethod{id, m}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.initLocked()
	if t, ok := st.tokens[k]; ok {
		return t
	}
	for {
		r := value.NewUUID()
		t := fmt.Sprintf("%s.%s@%x", c.name, m, r[:6])
		if _, taken := st.bound[t]; !taken {
			st.bound[t], st.tokens[k] = k, t
			return t
		}
	}
}

func (st *objectStore) boundTarget(name string) (boundMethod, bool) {
	if st == nil {
		return boundMethod{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	b, ok := st.bound[name]
	return b, ok
}

func (st *objectStore) len() int {
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.objs)
}

// objects returns the session's host-object store.
func (s *Session) objects() *objectStore { return &s.hostObjs }

// HostObject returns the Go value behind v when v is a host object this
// session sent: the *T of an instance, or the *Class of a class. It is how
// a caller gets at an instance the sandbox constructed or returned.
func (s *Session) HostObject(v Value) (any, bool) {
	n := v.Node()
	if n == nil {
		return nil, false
	}
	st := s.objects()
	switch n.Kind {
	case value.KindClassInstance:
		if inst := st.lookupNode(v.Graph, n); inst != nil {
			return inst.v.Interface(), true
		}
	case value.KindType:
		if t, _ := n.Ext().(*value.Type); t != nil && t.Origin == value.OriginHost {
			if c := st.class(t.ID); c != nil {
				return c, true
			}
		}
	}
	return nil, false
}

// lookupNode returns the instance a ClassInstance node stands for, when it
// is one of ours: a host class, and an instance uuid this store handed out
// for that same class.
func (st *objectStore) lookupNode(g *value.Graph, n *value.Node) *hostInstance {
	ci, _ := n.Ext().(*value.ClassInstance)
	if st == nil || ci == nil || int(ci.Class) >= g.Len() {
		return nil
	}
	t, _ := g.Node(ci.Class).Ext().(*value.Type)
	if t == nil || t.Origin != value.OriginHost {
		return nil
	}
	inst := st.instance(ci.InstanceID)
	if inst == nil || inst.c.id != t.ID {
		return nil
	}
	return inst
}

// decoder returns the value.Decoder of the call's arguments: with a
// runner, its hook turns host instances of the session into their Go
// values wherever they are nested (see hostArg).
func (c *Call) decoder() *value.Decoder {
	if c.r == nil {
		return &value.Decoder{}
	}
	r := c.r
	r.decOnce.Do(func() { r.dec = value.Decoder{Hook: r.hostArg, HookTypes: r.hostDestination} })
	return &r.dec
}

// hostDestination reports whether a value of type t may receive a host
// object: an interface, or a host class's Go type (T or *T).
func (r *runner) hostDestination(t reflect.Type) bool {
	if t.Kind() == reflect.Interface {
		return true
	}
	it := indirect(t)
	return r.o.funcs.classOf(it) != nil || r.store().classOf(it) != nil
}

// hostArg is the decode hook of a call's arguments: it converts node id
// for a destination of type t when it is a host instance the session knows
// and whose Go value fits t (the *T itself, or a copy of the T), at any
// depth, so []*T receives the session's own *T values. A class instance
// that is not one of the session's (a sandbox instance, or an unknown
// uuid) is refused for a destination of a host class's Go type, rather
// than decoded into a new Go value from its attributes.
func (r *runner) hostArg(s *value.DecodeState, id value.NodeID, t reflect.Type) (v reflect.Value, ok bool, err error) {
	g := s.Graph()
	if int(id) >= g.Len() {
		return reflect.Value{}, false, nil
	}
	n := g.Node(id)
	if n.Kind != value.KindClassInstance {
		return reflect.Value{}, false, nil
	}
	st := r.store()
	if inst := st.lookupNode(g, n); inst != nil {
		switch {
		case inst.v.Type().AssignableTo(t):
			v := reflect.New(t).Elem()
			v.Set(inst.v)
			return v, true, nil
		case inst.v.Type().Elem() == t:
			v := reflect.New(t).Elem()
			v.Set(inst.v.Elem())
			return v, true, nil
		}
		return reflect.Value{}, false, nil
	}
	if t.Kind() == reflect.Interface {
		return reflect.Value{}, false, nil
	}
	cls := st.classOf(indirect(t))
	if cls == nil {
		cls = r.o.funcs.classOf(indirect(t))
	}
	if cls != nil {
		return reflect.Value{}, false, fmt.Errorf("the argument is not a %s object of this session", cls.name)
	}
	return reflect.Value{}, false, nil
}

// ---------------------------------------------------------------------------
// Encoding: Go values to host-object nodes

// A binding is the state of one conversion of a Go value by a runner: the
// nodes of the host classes and instances already appended, and the
// instances being appended (to refuse one that reaches itself through its
// eager attributes). It lives for one value.Encoder.Encode call, whose hook
// it is.
type binding struct {
	r     *runner
	hold  bool         // new instances wait for their answer in held (see encode)
	held  *heldObjects // made by the first one
	cls   map[*Class]value.NodeID
	inst  map[value.UUID]value.NodeID
	busy  map[value.UUID]bool
	depth int
	root  int // the depth of the current root: the converted value or an eager attribute
}

var (
	classPtrType  = reflect.TypeFor[*Class]()
	hostObjectPtr = reflect.TypeFor[*hostObject]()
)

// encode appends v to g like value.FromGo, with host objects: a Go value
// of a class known to the session or its registry becomes an instance, at
// any depth, as do *Class and Object values. On error g is left as it was.
// With hold set, the instances it gives new ids to are returned held,
// added to held when it is not nil (an earlier value of the same answer:
// an object in both is one instance), else in a new set (nil when there
// are none), for the caller to commit once its answer is sure to be sent,
// or to drop (see heldObjects); on error, or a panic in the caller's code
// the conversion runs, the whole set is dropped here. Without hold they
// are registered at once.
func (r *runner) encode(g *value.Graph, v any, hold bool, held *heldObjects) (value.NodeID, *heldObjects, error) {
	if v == nil {
		root, err := value.FromGo(g, nil)
		return root, held, err
	}
	if t := reflect.TypeOf(v); scalarKind(t.Kind()) && !r.hostSource(t) {
		root, err := value.FromGo(g, v) // the common result: nothing to hook
		return root, held, err
	}
	b := &binding{r: r, hold: hold, held: held}
	done := false
	defer func() {
		if !done {
			b.held.drop()
		}
	}()
	enc := value.Encoder{Hook: b.hook, HookTypes: r.hostSource}
	root, err := enc.Encode(g, v)
	if err != nil {
		return root, nil, err
	}
	done = true
	return root, b.held, nil
}

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// hostSource reports whether Go values of type t may be host objects.
func (r *runner) hostSource(t reflect.Type) bool {
	if t == classPtrType || t == hostObjectPtr {
		return true
	}
	return r.o.funcs.classOf(indirect(t)) != nil || r.store().classOf(indirect(t)) != nil
}

// hook is the encode hook of a runner's conversions.
func (b *binding) hook(s *value.EncodeState, v reflect.Value) (value.NodeID, bool, error) {
	switch x := v.Interface().(type) {
	case *Class:
		id, err := b.appendClass(s, x)
		return id, true, err
	case *hostObject:
		p, err := x.c.pointer(reflect.ValueOf(x.v))
		if err != nil {
			return 0, true, err
		}
		id, err := b.appendInstance(s, x.c, p)
		return id, true, err
	}
	// A plain *T (or T) of a class is recognised by its type only as the
	// converted value itself or an eager attribute; nested in other values
	// it converts as FromGo converts it (wrap it with Object to send it as
	// an instance there).
	if s.Depth() != b.root {
		return 0, false, nil
	}
	if c, p := b.r.hostValue(v); c != nil {
		id, err := b.appendInstance(s, c, p)
		return id, true, err
	}
	return 0, false, nil
}

// maxHostNesting bounds host objects nested in eager attributes of host
// objects.
const maxHostNesting = 100

// hostValue reports whether v is a *T or T of a class known to the
// runner's registry or session, returning the class and v as a *T.
func (r *runner) hostValue(rv reflect.Value) (*Class, reflect.Value) {
	if !rv.IsValid() {
		return nil, reflect.Value{}
	}
	t := rv.Type()
	if t.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, reflect.Value{}
		}
		t = t.Elem()
	}
	c := r.o.funcs.classOf(t)
	if c == nil {
		c = r.store().classOf(t)
	}
	if c == nil {
		return nil, reflect.Value{}
	}
	p, err := c.pointer(rv)
	if err != nil {
		return nil, reflect.Value{}
	}
	return c, p
}

func (b *binding) appendClass(s *value.EncodeState, c *Class) (value.NodeID, error) {
	b.r.store().addClass(c)
	if id, ok := b.cls[c]; ok {
		return id, nil
	}
	g := s.Graph()
	var attrs []value.Pair
	for _, a := range c.p.ClassAttrs {
		k := g.Add(value.Str(a.Name))
		v, err := b.nested(s, a.Value)
		if err != nil {
			return 0, fmt.Errorf("class %s attribute %s: %w", c.name, a.Name, err)
		}
		attrs = append(attrs, value.Pair{Key: k, Value: v})
	}
	id := g.Add(value.TypeNode(value.Type{Name: c.name, ID: c.id, Origin: value.OriginHost,
		IsDataclass: c.p.Dataclass, Attrs: attrs}))
	if b.cls == nil {
		b.cls = map[*Class]value.NodeID{}
	}
	b.cls[c] = id
	return id, nil
}

func (b *binding) appendInstance(s *value.EncodeState, c *Class, p reflect.Value) (value.NodeID, error) {
	if b.hold && b.held == nil {
		b.held = &heldObjects{}
	}
	uuid, err := b.r.store().register(c, p, b.r.s.cfg.MaxHostObjects, b.held)
	if err != nil {
		return 0, err
	}
	if id, ok := b.inst[uuid]; ok {
		return id, nil
	}
	if b.busy[uuid] {
		return 0, fmt.Errorf("the %s object reaches itself through its eager attributes", c.name)
	}
	if b.busy == nil {
		b.busy, b.inst = map[value.UUID]bool{}, map[value.UUID]value.NodeID{}
	}
	b.busy[uuid] = true
	defer delete(b.busy, uuid)
	cls, err := b.appendClass(s, c)
	if err != nil {
		return 0, err
	}
	g := s.Graph()
	attrs := make([]value.Pair, 0, len(c.eager))
	for _, f := range c.eager {
		k := g.Add(value.Str(f.name))
		var fv any
		if v := f.read(p); v.IsValid() {
			fv = v.Interface()
		}
		v, err := b.nested(s, fv)
		if err != nil {
			return 0, fmt.Errorf("%s.%s: %w", c.name, f.name, err)
		}
		attrs = append(attrs, value.Pair{Key: k, Value: v})
	}
	id := g.Add(value.ClassInstanceNode(value.ClassInstance{Class: cls, InstanceID: uuid, Attrs: attrs}))
	b.inst[uuid] = id
	return id, nil
}

// nested encodes an attribute value, bounding host objects inside host
// objects.
func (b *binding) nested(s *value.EncodeState, v any) (value.NodeID, error) {
	if b.depth >= maxHostNesting {
		return 0, fmt.Errorf("host objects nest deeper than %d levels", maxHostNesting)
	}
	b.depth++
	root := b.root
	b.root = s.Depth() + 1
	defer func() { b.depth--; b.root = root }()
	return s.Encode(v)
}

// ---------------------------------------------------------------------------
// Routing

// store returns the session's object store.
func (r *runner) store() *objectStore { return r.s.objects() }

func callError(id uint32, exc *message.RaisedException) message.Request {
	return &message.ResumeCall{CallID: id, Result: &message.ExtResult{Kind: message.ResultError, Error: exc}}
}

func attributeError(format string, args ...any) *message.RaisedException {
	return message.NewException("AttributeError", fmt.Sprintf(format, args...))
}

// callObject answers a FunctionCall with an object_id: a method of a host
// instance, or a call of a host class (__call__) or of one of its
// attributes.
func (r *runner) callObject(fc *message.FunctionCall) message.Request {
	st := r.store()
	if inst := st.instance(*fc.ObjectID); inst != nil {
		return r.callMethod(fc, inst, fc.FunctionName)
	}
	if c := st.class(*fc.ObjectID); c != nil {
		if fc.FunctionName == "__call__" {
			return r.construct(fc, c)
		}
		return callError(fc.CallID, attributeError("type object '%s' has no attribute '%s'", c.name, fc.FunctionName))
	}
	return callError(fc.CallID, attributeError(unknownObject, fc.FunctionName))
}

// unknownObject answers a call on an object id the store does not hold: a
// forged one, or an object of another session's (restored from a dump) or
// released by Reset.
const unknownObject = "host object has no method '%s' (the object is not live in this session: released by Reset, or restored from a dump)"

// callBound answers the call of a bound method value (see token).
func (r *runner) callBound(fc *message.FunctionCall) (message.Request, bool) {
	if !strings.Contains(fc.FunctionName, "@") {
		return nil, false
	}
	bm, ok := r.store().boundTarget(fc.FunctionName)
	var inst *hostInstance
	if ok {
		inst = r.store().instance(bm.id)
	}
	if inst == nil {
		// A token this store does not hold (any more): the bound method
		// of an object released by Reset and restored from a dump. It
		// fails as a call of the method on the object itself does, not
		// as a NameError naming the token.
		head, _, _ := strings.Cut(fc.FunctionName, "@")
		m := head[strings.LastIndexByte(head, '.')+1:]
		return callError(fc.CallID, attributeError(unknownObject, m)), true
	}
	return r.callMethod(fc, inst, bm.m), true
}

func (r *runner) callMethod(fc *message.FunctionCall, inst *hostInstance, name string) message.Request {
	m := inst.c.methods[name]
	if m == nil {
		return callError(fc.CallID, attributeError("'%s' object has no attribute '%s'", inst.c.name, name))
	}
	recv := inst.v
	h := &hostFunc{name: m.sig.name, fn: func(ctx context.Context, c *Call) (any, error) {
		return m.sig.call(ctx, m.fn, recv, c)
	}}
	return r.answer(fc, h)
}

// construct answers a call of the host class c.
func (r *runner) construct(fc *message.FunctionCall, c *Class) message.Request {
	if !c.p.Construct && c.ctor == nil {
		return callError(fc.CallID, typeError("cannot create '%s' instances", c.name))
	}
	return r.answer(fc, &hostFunc{name: c.name, fn: c.construct})
}

// construct makes a new instance from the call's arguments.
func (c *Class) construct(ctx context.Context, call *Call) (any, error) {
	if c.ctor != nil {
		v, err := c.ctor.call(ctx, c.ctorFn, reflect.Value{}, call)
		if err != nil {
			return nil, err
		}
		p, perr := c.pointer(reflect.ValueOf(v))
		if perr != nil {
			return nil, fmt.Errorf("%s() constructor returned %s", c.name, typeName(reflect.ValueOf(v)))
		}
		return &hostObject{c: c, v: p.Interface()}, nil
	}
	// Field by field, the constructor is a dataclass's generated
	// __init__, every field defaulting to its zero value, and its
	// TypeErrors say so as CPython's do: W.__init__() counts self.
	init := c.name + ".__init__"
	p := reflect.New(c.typ)
	set := map[string]bool{}
	assign := func(f field, id value.NodeID, what string) error {
		dst, err := p.Elem().FieldByIndexErr(f.index)
		if err != nil || !dst.CanSet() {
			return typeError("%s() cannot set attribute '%s'", init, f.name)
		}
		v, err := call.decode(id, f.typ)
		if err != nil {
			return typeError("%s() argument %s: %s", init, what, conversionText(err))
		}
		dst.Set(v)
		set[f.name] = true
		return nil
	}
	for i, id := range call.Args[:min(len(call.Args), len(c.eager))] {
		if err := assign(c.eager[i], id, fmt.Sprint(i+1)); err != nil {
			return nil, err
		}
	}
	// As CPython does, the keyword arguments are checked before the
	// positional count: W(1, 2, x=1) is an unexpected keyword argument.
	for _, kw := range call.Kwargs {
		k := call.Values.Node(kw.Key).Text()
		f, ok := c.fields[k]
		switch {
		case !ok:
			return nil, typeError("%s() got an unexpected keyword argument '%s'", init, k)
		case set[k]:
			return nil, typeError("%s() got multiple values for argument '%s'", init, k)
		}
		if err := assign(f, kw.Value, "'"+k+"'"); err != nil {
			return nil, err
		}
	}
	if len(call.Args) > len(c.eager) {
		takes := "1 positional argument"
		if len(c.eager) > 0 {
			takes = fmt.Sprintf("from 1 to %d positional arguments", len(c.eager)+1)
		}
		n := len(call.Args) + 1
		return nil, typeError("%s() takes %s but %d %s given", init, takes, n, wasWere(n))
	}
	return &hostObject{c: c, v: p.Interface()}, nil
}

// answer runs a host function inline for fc and builds the reply.
func (r *runner) answer(fc *message.FunctionCall, h *hostFunc) message.Request {
	c := &Call{Name: fc.FunctionName, CallID: fc.CallID, Args: fc.Args, Kwargs: fc.Kwargs, Position: message.PositionOrZero(fc.Position),
		Values: &fc.Values, ObjectID: fc.ObjectID, Eager: fc.AllowEagerAwait, r: r}
	r.what = unsent.Function(h.name)
	v, err := r.invoke(h, c)
	res, held := r.ext(&r.g, h.name, v, err)
	r.res = res
	r.hold(held)
	if fc.AllowEagerAwait && h.async {
		// Only an Async function's result is awaitable: a synchronous
		// one's is the plain value, which the sandbox cannot await
		// (TypeError), as at protocols 2 and 5, which offer no eager
		// await.
		return &message.ResumeFutures{Results: []message.FutureResult{{CallID: fc.CallID, Result: &r.res}}, Values: r.g}
	}
	// The request is encoded before the next turn, so one struct serves
	// every synchronous call of the feed.
	r.rc = message.ResumeCall{CallID: fc.CallID, Result: &r.res, Values: r.g}
	return &r.rc
}

// lookupObject answers a NameLookup with an object_id: a lazy attribute of
// a host instance or class.
func (r *runner) lookupObject(nl *message.NameLookup) message.Request {
	st := r.store()
	if inst := st.instance(*nl.ObjectID); inst != nil {
		c := inst.c
		if f, ok := c.fields[nl.Name]; ok {
			var v any
			if fv := f.read(inst.v); fv.IsValid() {
				v = fv.Interface()
			}
			return r.lookupValue(c.name+"."+nl.Name, v)
		}
		if _, ok := c.methods[nl.Name]; ok {
			req := &message.ResumeNameLookup{Kind: message.LookupValue}
			req.Value = req.Values.Add(value.FunctionNode(value.Function{Name: st.token(c, *nl.ObjectID, nl.Name)}))
			return req
		}
		// The worker does not look class attributes up on an instance's
		// class: it asks for them on the instance.
		if a, ok := c.classAttr(nl.Name); ok {
			return r.lookupValue(c.name+"."+nl.Name, a)
		}
		return r.getattr(c, inst.v.Interface(), nl.Name)
	}
	if c := st.class(*nl.ObjectID); c != nil {
		if a, ok := c.classAttr(nl.Name); ok {
			return r.lookupValue(c.name+"."+nl.Name, a)
		}
		return r.getattr(c, nil, nl.Name)
	}
	return &message.ResumeNameLookup{Kind: message.LookupUndefined}
}

func (c *Class) classAttr(name string) (any, bool) {
	for _, a := range c.p.ClassAttrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return nil, false
}

// getattr asks the policy's Getattr hook, if any.
func (r *runner) getattr(c *Class, obj any, name string) (req message.Request) {
	if c.p.Getattr == nil || strings.HasPrefix(name, "__") {
		return &message.ResumeNameLookup{Kind: message.LookupUndefined}
	}
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("monty host Getattr panicked", slog.String("class", c.name), slog.Any("panic", p))
			req = &message.ResumeNameLookup{Kind: message.LookupError,
				Error: message.NewException("RuntimeError", fmt.Sprintf("%s Getattr panicked: %v", c.name, p))}
		}
	}()
	v, found, err := c.p.Getattr(r.fctx, obj, name)
	if err != nil {
		exc := r.raise(err, "RuntimeError")
		if exc.Type != "AttributeError" {
			return &message.ResumeNameLookup{Kind: message.LookupError, Error: exc}
		}
		// The worker raises a lookup's error past hasattr and getattr's
		// default; an AttributeError from __getattr__ means there is no
		// such attribute, so it is answered as one that is not found.
		found = false
	}
	switch {
	case !found:
		return &message.ResumeNameLookup{Kind: message.LookupUndefined}
	}
	return r.lookupValue(c.name+"."+name, v)
}

// lookupValue answers a NameLookup with v. Converting v may run the
// caller's code (a value.GraphAppender): a panic there is a RuntimeError.
func (r *runner) lookupValue(name string, v any) (out message.Request) {
	defer func() {
		if p := recover(); p != nil {
			r.s.log.Error("monty host value panicked", slog.String("name", name), slog.Any("panic", p))
			out = &message.ResumeNameLookup{Kind: message.LookupError,
				Error: message.NewException("RuntimeError", fmt.Sprintf("converting host value %s panicked: %v", name, p))}
		}
	}()
	r.what = unsent.Value(name)
	req := &message.ResumeNameLookup{Kind: message.LookupValue}
	// A value the sandbox is not sent (refused here, or by the encoder
	// later) registers none of its host objects (see heldObjects).
	root, held, err := r.encode(&req.Values, v, true, nil)
	if err != nil {
		return &message.ResumeNameLookup{Kind: message.LookupError,
			Error: typeError("host value %s has no Python equivalent: %s", name, conversionText(err))}
	}
	if exc := outputOnlyLookup(&req.Values, 0, root, name); exc != nil {
		held.drop()
		return &message.ResumeNameLookup{Kind: message.LookupError, Error: exc}
	}
	r.hold(held) // registered once the answer is sent (see settleHeld)
	req.Value = root
	return req
}
