package session

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Func is a host function callable from the sandbox. It returns the call's
// result as a Go value (anything value.FromGo accepts, a [Value], or nil
// for None) or an error: a *message.RaisedException is raised as that
// exception, any other error as RuntimeError with the error's text.
//
// ctx is cancelled when the feed ends or is cancelled; a Func must return
// promptly then.
//
// Functions registered with Async run on their own goroutines, concurrently
// with each other, and must be safe for that.
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
	// (`x = await f()`, protocol 4 only).
	Eager bool
}

// NumArgs returns the number of positional arguments.
func (c *Call) NumArgs() int { return len(c.Args) }

// Arg returns positional argument i as a Value.
func (c *Call) Arg(i int) Value { return Value{Graph: c.Values, Root: c.Args[i]} }

// DecodeArg converts positional argument i into dst (see value.ToGo).
func (c *Call) DecodeArg(i int, dst any) error {
	if i < 0 || i >= len(c.Args) {
		return fmt.Errorf("session: %s() has no argument %d", c.Name, i)
	}
	return toGo(c.Values, c.Args[i], dst)
}

// Kwarg returns the keyword argument name and whether it was given.
func (c *Call) Kwarg(name string) (Value, bool) {
	for _, p := range c.Kwargs {
		if k := c.Values.Node(p.Key); k.Kind == value.KindStr && k.Text == name {
			return Value{Graph: c.Values, Root: p.Value}, true
		}
	}
	return Value{}, false
}

// KwargNames returns the keyword argument names, in call order.
func (c *Call) KwargNames() []string {
	out := make([]string, 0, len(c.Kwargs))
	for _, p := range c.Kwargs {
		out = append(out, c.Values.Node(p.Key).Text)
	}
	return out
}

// FuncOption configures a registered function.
//
// It is a plain function value, safe to share.
type FuncOption func(*hostFunc)

// Async registers the function as asynchronous: a call is answered with an
// external future at once and the function runs in its own goroutine, so
// `await asyncio.gather(f(1), f(2))` runs the calls concurrently. A call
// that the sandbox awaits at once (protocol 4's eager await) still runs
// inline. Without Async, a call runs before the sandbox continues, and
// awaiting its result is a TypeError.
func Async() FuncOption { return func(h *hostFunc) { h.async = true } }

type hostFunc struct {
	name  string
	fn    Func
	async bool
}

// Registry holds the host functions and values a sandbox can reach by
// name. A Registry is safe for concurrent use; registering while a feed
// runs affects later lookups.
type Registry struct {
	mu     sync.RWMutex
	funcs  map[string]*hostFunc
	values map[string]any
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{funcs: map[string]*hostFunc{}, values: map[string]any{}}
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
// with T converted by value.FromGo. An argument that does not convert, a
// wrong argument count or an unexpected keyword argument raises TypeError
// in the sandbox.
func (r *Registry) Register(name string, fn any, opts ...FuncOption) error {
	if !isIdentifier(name) {
		return fmt.Errorf("session: %q is not a valid Python identifier", name)
	}
	f, err := adapt(name, fn)
	if err != nil {
		return err
	}
	h := &hostFunc{name: name, fn: f}
	for _, o := range opts {
		o(h)
	}
	r.mu.Lock()
	r.funcs[name] = h
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
// The worker binds the value for the rest of the session.
func (r *Registry) SetValue(name string, v any) {
	r.mu.Lock()
	r.values[name] = v
	r.mu.Unlock()
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

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c > 127:
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// adapt turns fn into a Func.
func adapt(name string, fn any) (Func, error) {
	switch f := fn.(type) {
	case nil:
		return nil, fmt.Errorf("session: nil function for %q", name)
	case Func:
		return f, nil
	case func(context.Context, *Call) (any, error):
		return f, nil
	}
	v := reflect.ValueOf(fn)
	t := v.Type()
	if t.Kind() != reflect.Func {
		return nil, fmt.Errorf("session: %q: %T is not a function", name, fn)
	}
	first := 0
	if t.NumIn() > 0 && t.In(0) == ctxType {
		first = 1
	}
	params := make([]reflect.Type, 0, t.NumIn()-first)
	for i := first; i < t.NumIn(); i++ {
		if t.In(i) == ctxType || t.In(i) == callType {
			return nil, fmt.Errorf("session: %q: parameter %d of %v must come first or not at all", name, i, t)
		}
		params = append(params, t.In(i))
	}
	variadic := t.IsVariadic()
	var hasVal, hasErr bool
	switch t.NumOut() {
	case 0:
	case 1:
		if t.Out(0) == errorType {
			hasErr = true
		} else {
			hasVal = true
		}
	case 2:
		if t.Out(1) != errorType {
			return nil, fmt.Errorf("session: %q: second result of %v must be error", name, t)
		}
		hasVal, hasErr = true, true
	default:
		return nil, fmt.Errorf("session: %q: %v has more than two results", name, t)
	}
	fixed := len(params)
	if variadic {
		fixed--
	}
	return func(ctx context.Context, call *Call) (any, error) {
		if len(call.Kwargs) > 0 {
			return nil, typeError("%s() got an unexpected keyword argument '%s'",
				name, call.Values.Node(call.Kwargs[0].Key).Text)
		}
		n := len(call.Args)
		switch {
		case !variadic && n != fixed:
			return nil, typeError("%s() takes %d positional argument%s but %d %s given",
				name, fixed, plural(fixed), n, wasWere(n))
		case variadic && n < fixed:
			return nil, typeError("%s() takes at least %d positional argument%s but %d %s given",
				name, fixed, plural(fixed), n, wasWere(n))
		}
		in := make([]reflect.Value, 0, first+n)
		if first == 1 {
			in = append(in, reflect.ValueOf(ctx))
		}
		for i, id := range call.Args {
			pt := params[min(i, len(params)-1)]
			if variadic && i >= fixed {
				pt = params[fixed].Elem()
			}
			pv := reflect.New(pt)
			if err := toGo(call.Values, id, pv.Interface()); err != nil {
				return nil, typeError("%s() argument %d: %s", name, i+1, conversionText(err))
			}
			in = append(in, pv.Elem())
		}
		out := v.Call(in)
		var res any
		if hasVal {
			res = out[0].Interface()
		}
		if hasErr {
			if e := out[len(out)-1]; !e.IsNil() {
				return nil, e.Interface().(error)
			}
		}
		return res, nil
	}, nil
}

func conversionText(err error) string {
	s := err.Error()
	for _, p := range []string{"value: ", "session: "} {
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
var ErrNotHandled = errors.New("session: OS call not handled")

// OSHandler answers the sandbox's OS calls (filesystem, environment,
// clock). HandleOS returns the complete answer; its CallID is filled in by
// the session. A nil answer with a nil error, or ErrNotHandled, means "not
// handled". Any other error is raised in the sandbox: a
// *message.RaisedException as is, fs.ErrNotExist as FileNotFoundError,
// fs.ErrPermission as PermissionError, fs.ErrExist as FileExistsError, and
// anything else as OSError. If ctx is done when HandleOS returns, the feed
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
