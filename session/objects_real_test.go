//go:build unix

package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomonty/monty/internal/testenv"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Host objects against the real worker.

type widget struct {
	Size   int    `monty:"size"`
	Color  string `monty:"color"`
	Count  int    `monty:"count"`
	Token  string `monty:"token"` // exported but not in the policy
	secret string
}

func (w *widget) Grow(n, by int) int { w.Count += n * by; return w.Count }
func (w *widget) Clone() *widget     { c := *w; c.Count = 0; return &c }
func (w *widget) Wipe()              { w.Size, w.secret = 0, "wiped" }
func (w *widget) Fail(ctx context.Context) error {
	return message.NewException("ValueError", "no "+w.Color)
}
func (w *widget) Pair() []any { return []any{Object(widgetClassFor(w), w), w.Size} }

// widgetClassFor is set by the tests that use Pair.
var widgetClassFor func(*widget) *Class

func widgetPolicy() Policy {
	return Policy{
		Eager:      []string{"size"},
		Lazy:       []string{"color", "count"},
		Methods:    []string{"grow(n, by)", "clone", "fail", "pair"},
		ClassAttrs: []value.Attr{{Name: "KIND", Value: "widget"}},
		Dataclass:  true,
		Construct:  true,
		Getattr: func(ctx context.Context, obj any, name string) (any, bool, error) {
			switch {
			case obj == nil && name == "VERSION":
				return 3, true, nil
			case obj != nil && name == "upper_color":
				return strings.ToUpper(obj.(*widget).Color), true, nil
			case name == "forbidden":
				return nil, false, message.NewException("PermissionError", "no")
			}
			return nil, false, nil
		},
	}
}

type realObjects struct {
	s   *Session
	reg *Registry
	cls *Class
	w   *widget
}

func newRealObjects(t *testing.T) *realObjects {
	t.Helper()
	testenv.Worker(t)
	o := &realObjects{reg: NewRegistry(), cls: MustClassOf[widget]("Widget", widgetPolicy()),
		w: &widget{Size: 3, Color: "red", Token: "t0k3n", secret: "s"}}
	o.reg.MustRegisterClass("Widget", o.cls)
	o.reg.SetValue("w", o.w)
	o.s = realSession(t, Config{})
	return o
}

func (o *realObjects) run(t *testing.T, code string) *Result {
	t.Helper()
	return run(t, o.s, code, WithFunctions(o.reg))
}

func (o *realObjects) fail(t *testing.T, code, typ string) *PythonError {
	t.Helper()
	_, err := o.s.Run(context.Background(), code, WithFunctions(o.reg))
	return pyErr(t, err, typ)
}

func reprOf(t *testing.T, r *Result) string { t.Helper(); return r.Repr() }

func TestRealHostMethodCallMutatesGoState(t *testing.T) {
	o := newRealObjects(t)
	if got := reprOf(t, o.run(t, "w.grow(2, by=3)")); got != "6" {
		t.Fatalf("w.grow(2, by=3) = %s", got)
	}
	if o.w.Count != 6 {
		t.Fatalf("Go state: Count = %d", o.w.Count)
	}
	// The new state is visible through a lazy attribute, in a later feed.
	if got := reprOf(t, o.run(t, "(w.grow(1, 1), w.count)")); got != "(7, 7)" {
		t.Fatalf("got %s", got)
	}
	pe := o.fail(t, "w.grow(1)", "TypeError")
	if !strings.Contains(pe.Exception.Msg(), "Widget.grow() missing 1 required positional argument: 'by'") {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
	o.fail(t, "w.grow(1, by=2, n=3)", "TypeError")
	// A Go error raises; a *message.RaisedException keeps its type.
	if pe := o.fail(t, "w.fail()", "ValueError"); pe.Exception.Msg() != "no red" {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
	// A bound method is a value that can be called later.
	if got := reprOf(t, o.run(t, "m = w.grow\n(m(1, by=1), hasattr(w, 'grow'))")); got != "(8, True)" {
		t.Fatalf("bound method: %s", got)
	}
	if got := reprOf(t, o.run(t, "m(1, by=2)")); got != "10" || o.w.Count != 10 {
		t.Fatalf("bound method in a later feed: %s, Count %d", got, o.w.Count)
	}
}

func TestRealHostEagerAttributeIsLocal(t *testing.T) {
	o := newRealObjects(t)
	o.run(t, "w") // binds the global (one NameLookup)
	r := o.run(t, "w.size * 10")
	if r.Repr() != "30" {
		t.Fatalf("w.size * 10 = %s", r.Repr())
	}
	if n := o.s.SuspensionCount(); n != 0 {
		t.Fatalf("reading an eager attribute suspended %d times", n)
	}
	// An eager attribute is a snapshot: Go changes do not reach the
	// sandbox's copy, and sandbox assignments stay in the sandbox.
	o.w.Size = 99
	if got := reprOf(t, o.run(t, "w.size")); got != "3" {
		t.Fatalf("w.size after a Go change = %s", got)
	}
	o.run(t, "w.size = 10")
	if o.w.Size != 99 {
		t.Fatalf("a sandbox assignment reached Go: %d", o.w.Size)
	}
}

func TestRealHostLazyAttributes(t *testing.T) {
	o := newRealObjects(t)
	o.run(t, "w")
	if got := reprOf(t, o.run(t, "w.color")); got != "'red'" {
		t.Fatalf("w.color = %s", got)
	}
	if n := o.s.SuspensionCount(); n != 1 {
		t.Fatalf("a lazy read made %d suspensions, want 1", n)
	}
	o.w.Color = "blue" // not cached by the worker: the next read sees it
	if got := reprOf(t, o.run(t, "(w.color, w.upper_color)")); got != "('blue', 'BLUE')" {
		t.Fatalf("got %s", got)
	}
	if got := reprOf(t, o.run(t, "(getattr(w, 'missing', 7), hasattr(w, 'missing'), hasattr(w, 'color'))")); got != "(7, False, True)" {
		t.Fatalf("getattr/hasattr: %s", got)
	}
	pe := o.fail(t, "w.missing", "AttributeError")
	if pe.Exception.Msg() != "'Widget' object has no attribute 'missing'" {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
	// Exported fields outside the policy stay hidden.
	o.fail(t, "w.token", "AttributeError")
	o.fail(t, "w.secret", "AttributeError")
	// An error answer raises past getattr's default.
	o.fail(t, "getattr(w, 'forbidden', 1)", "PermissionError")
	// Class attributes: eager (KIND) and lazy (VERSION, through Getattr).
	if got := reprOf(t, o.run(t, "(Widget.KIND, Widget.VERSION, w.KIND)")); got != "('widget', 3, 'widget')" {
		t.Fatalf("class attributes: %s", got)
	}
	o.fail(t, "Widget.nope", "AttributeError")
}

func TestRealHostMethodNotAllowed(t *testing.T) {
	o := newRealObjects(t)
	pe := o.fail(t, "w.wipe()", "AttributeError")
	if pe.Exception.Msg() != "'Widget' object has no attribute 'wipe'" {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
	o.fail(t, "w.Wipe()", "AttributeError")
	if o.w.Size != 3 || o.w.secret != "s" {
		t.Fatalf("a refused method ran: %+v", o.w)
	}
	if got := reprOf(t, o.run(t, "hasattr(w, 'wipe')")); got != "False" {
		t.Fatalf("hasattr(w, 'wipe') = %s", got)
	}
}

func TestRealHostConstruction(t *testing.T) {
	o := newRealObjects(t)
	// Widget is not bound yet: the call arrives as a plain FunctionCall.
	r := o.run(t, "x = Widget(5, color='green')\n(x.grow(1, by=2), x.color)\n")
	if r.Repr() != "(2, 'green')" {
		t.Fatalf("got %s", r.Repr())
	}
	r = o.run(t, "x")
	got, ok := o.s.HostObject(r.Value)
	x, _ := got.(*widget)
	if !ok || x == nil || x == o.w || x.Size != 5 || x.Color != "green" || x.Count != 2 {
		t.Fatalf("HostObject = %#v, %v", got, ok)
	}
	if r.Repr() != "Widget(size=5)" {
		t.Fatalf("Go-side repr %q", r.Repr())
	}
	// Once bound (isinstance reads the name), calling it is __call__ on
	// the class uuid.
	if got := reprOf(t, o.run(t, "isinstance(w, Widget)")); got != "True" {
		t.Fatalf("isinstance = %s", got)
	}
	if got := reprOf(t, o.run(t, "y = Widget(size=8)\n(y.size, type(y) is Widget, isinstance(y, Widget), repr(y))")); got != "(8, True, True, 'Widget(size=8)')" {
		t.Fatalf("got %s", got)
	}
	o.fail(t, "Widget(1, 2)", "TypeError")
	o.fail(t, "Widget(nope=1)", "TypeError")
	o.fail(t, "Widget('big')", "TypeError")
	// Keyword arguments are checked before the positional count, as
	// CPython checks them, and the texts are those of a dataclass whose
	// fields all have defaults (CPython 3.11): __init__ counts self.
	for code, want := range map[string]string{
		"Widget(1, 2, nope=1)": "Widget.__init__() got an unexpected keyword argument 'nope'",
		"Widget(1, 2, size=1)": "Widget.__init__() got multiple values for argument 'size'",
		"Widget(1, 2)":         "Widget.__init__() takes from 1 to 2 positional arguments but 3 were given",
		"Widget(1, 2, 3)":      "Widget.__init__() takes from 1 to 2 positional arguments but 4 were given",
	} {
		if pe := o.fail(t, code, "TypeError"); pe.Exception.Msg() != want {
			t.Errorf("%s: %q, want %q", code, pe.Exception.Msg(), want)
		}
	}

	// With no positional fields, __init__ takes self alone.
	o.reg.MustRegisterClass("Blank", MustClassOf[widget]("Blank", Policy{Construct: true}))
	if pe := o.fail(t, "Blank(1)", "TypeError"); pe.Exception.Msg() != "Blank.__init__() takes 1 positional argument but 2 were given" {
		t.Errorf("Blank(1): %q", pe.Exception.Msg())
	}

	// A class that does not allow construction.
	gadget := MustClassOf[widget]("Gadget", Policy{Eager: []string{"size"}})
	o.reg.MustRegisterClass("Gadget", gadget)
	pe := o.fail(t, "Gadget(1)", "TypeError")
	if pe.Exception.Msg() != "cannot create 'Gadget' instances" {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
	pe = o.fail(t, "G = Gadget\nG()", "TypeError")
	if pe.Exception.Msg() != "cannot create 'Gadget' instances" {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
}

type account struct {
	Owner   string `monty:"owner"`
	Balance int    `monty:"balance"`
}

func (a *account) Deposit(n int) int { a.Balance += n; return a.Balance }

func TestRealHostConstructorFunction(t *testing.T) {
	testenv.Worker(t)
	cls := MustClassOf[account]("Account", Policy{
		Eager:   []string{"owner"},
		Lazy:    []string{"balance"},
		Methods: []string{"deposit"},
		Constructor: func(ctx context.Context, owner string, opening int) (*account, error) {
			if opening < 0 {
				return nil, message.NewException("ValueError", "negative opening balance")
			}
			return &account{Owner: owner, Balance: opening}, nil
		},
		ConstructorParams: []string{"owner", "opening"},
	})
	reg := NewRegistry().MustRegisterClass("Account", cls)
	var opened []*account
	reg.MustRegister("keep", func(a *account) { opened = append(opened, a) })
	s := realSession(t, Config{})
	r := run(t, s, "a = Account('ann', opening=10)\nkeep(a)\n(a.deposit(5), a.balance, a.owner, repr(a))", WithFunctions(reg))
	if r.Repr() != `(15, 15, 'ann', "Account(owner='ann')")` {
		t.Fatalf("got %s", r.Repr())
	}
	if len(opened) != 1 || opened[0].Balance != 15 || opened[0].Owner != "ann" {
		t.Fatalf("Go value %+v", opened)
	}
	_, err := s.Run(context.Background(), "Account('bob', -1)", WithFunctions(reg))
	pyErr(t, err, "ValueError")
	_, err = s.Run(context.Background(), "Account('bob')", WithFunctions(reg))
	if pe := pyErr(t, err, "TypeError"); !strings.Contains(pe.Exception.Msg(), "missing 1 required positional argument: 'opening'") {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
}

func TestRealHostInstancePassedBack(t *testing.T) {
	o := newRealObjects(t)
	var got []*widget
	var anyArg any
	o.reg.MustRegister("take", func(a *widget, b any) bool {
		got, anyArg = append(got, a), b
		return a == o.w
	})
	o.reg.MustRegister("byvalue", func(w widget) int { return w.Size })
	if r := o.run(t, "take(w, w)"); r.Repr() != "True" || len(got) != 1 || got[0] != o.w || anyArg != any(o.w) {
		t.Fatalf("take(w, w) = %s, got %v %v", r.Repr(), got, anyArg)
	}
	// A clone (another host object, made by a method) is its own Go value.
	if r := o.run(t, "c = w.clone()\n(take(c, 1), c is w, c.size)"); r.Repr() != "(False, False, 3)" {
		t.Fatalf("got %s", r.Repr())
	}
	if got[1] == o.w || got[1].Size != 3 {
		t.Fatalf("clone %p %+v", got[1], got[1])
	}
	// The clone's methods act on the clone.
	o.run(t, "c.grow(2, by=2)")
	if got[1].Count != 4 || o.w.Count != 0 {
		t.Fatalf("clone.Count %d, w.Count %d", got[1].Count, o.w.Count)
	}
	// Non-pointer parameters get a copy of the Go value.
	if r := o.run(t, "byvalue(w)"); r.Repr() != "3" {
		t.Fatalf("byvalue(w) = %s", r.Repr())
	}
	// Sandbox-made look-alikes are not host objects, also in a session
	// that has sent none yet.
	for _, s := range []*Session{o.s, realSession(t, Config{})} {
		for _, code := range []string{
			"class Widget:\n    size = 1\ntake(Widget(), 0)",
			"from dataclasses import dataclass\n@dataclass\nclass W:\n    size: int\ntake(W(3), 0)",
		} {
			_, err := s.Run(context.Background(), code, WithFunctions(o.reg))
			if pe := pyErr(t, err, "TypeError"); !strings.Contains(pe.Exception.Msg(), "not a Widget object of this session") {
				t.Fatalf("message %q", pe.Exception.Msg())
			}
		}
	}
	if len(got) != 2 {
		t.Fatalf("take ran with a sandbox instance: %v", got)
	}
	// A dict still decodes into a new Go value, as for any struct.
	if r := o.run(t, "take({'size': 1}, 0)"); r.Repr() != "False" || got[2].Size != 1 {
		t.Fatalf("take(dict) = %s, %+v", r.Repr(), got[2])
	}
}

func TestRealHostMethodReturnsHostObjects(t *testing.T) {
	o := newRealObjects(t)
	widgetClassFor = func(*widget) *Class { return o.cls }
	t.Cleanup(func() { widgetClassFor = nil })
	r := o.run(t, "c = w.clone()\n(type(c) is type(w), c.size, c.count)")
	if r.Repr() != "(True, 3, 0)" {
		t.Fatalf("got %s", r.Repr())
	}
	// Object wraps host objects nested in other values.
	r = o.run(t, "p = w.pair()\n(p[0].grow(1, by=1), p[1], p[0].size)")
	if r.Repr() != "(1, 3, 3)" || o.w.Count != 1 {
		t.Fatalf("got %s, Count %d", r.Repr(), o.w.Count)
	}
	// A result that holds the instance comes back as the same Go value.
	r = o.run(t, "[w, c]")
	list := r.Node()
	if list.Kind != value.KindList || len(list.Refs()) != 2 {
		t.Fatalf("result %s", r.Repr())
	}
	first, ok := o.s.HostObject(Value{Graph: r.Graph, Root: list.Refs()[0]})
	if !ok || first != any(o.w) {
		t.Fatalf("HostObject(w) = %v, %v", first, ok)
	}
	second, ok := o.s.HostObject(Value{Graph: r.Graph, Root: list.Refs()[1]})
	if !ok || second == any(o.w) {
		t.Fatalf("HostObject(c) = %v, %v", second, ok)
	}
	if c, ok := o.s.HostObject(run(t, o.s, "Widget", WithFunctions(o.reg)).Value); !ok || c != any(o.cls) {
		t.Fatalf("HostObject(Widget) = %v, %v", c, ok)
	}
}

func TestRealHostObjectsAsInputsAndIdentity(t *testing.T) {
	o := newRealObjects(t)
	other := &widget{Size: 1}
	r := o.run(t, "w")
	r2 := run(t, o.s, "(v.size, v is w, u.size, u is v)", WithFunctions(o.reg),
		WithInputs(Input{"v", o.w}, Input{"u", Object(o.cls, other)}))
	// The same Go pointer keeps its uuid; the worker still makes a new
	// Python object for each input.
	if r2.Repr() != "(3, False, 1, False)" {
		t.Fatalf("got %s", r2.Repr())
	}
	ci := r.Node().Ext().(*value.ClassInstance)
	rv := run(t, o.s, "v", WithFunctions(o.reg))
	if rv.Node().Ext().(*value.ClassInstance).InstanceID != ci.InstanceID {
		t.Fatal("one Go pointer got two uuids in one session")
	}
	// A second session on the same registry has its own uuids.
	s2 := realSession(t, Config{})
	r3 := run(t, s2, "w.grow(1, by=1)\nw", WithFunctions(o.reg))
	if r3.Node().Ext().(*value.ClassInstance).InstanceID == ci.InstanceID {
		t.Fatal("two sessions share an instance uuid")
	}
	if o.w.Count != 1 {
		t.Fatalf("Count %d", o.w.Count)
	}
	// The first session's uuid means nothing to the second.
	if _, ok := s2.HostObject(r.Value); ok {
		t.Fatal("a session resolved another session's object")
	}
}

func TestRealHostObjectErrorsKeepSession(t *testing.T) {
	o := newRealObjects(t)
	// A value that cannot be converted, returned by a method.
	o.reg.SetValue("bad", Object(o.cls, "not a widget"))
	_, err := o.s.Run(context.Background(), "bad", WithFunctions(o.reg))
	pyErr(t, err, "TypeError")
	// Outside Run, host objects cannot be sent.
	_, err = o.s.Feed(context.Background(), "v", Input{"v", o.w})
	if err != nil { // a plain *widget is a dict there
		t.Fatal(err)
	}
	_, err = o.s.Feed(context.Background(), "v", Input{"v", Object(o.cls, o.w)})
	var ire *InvalidRequestError
	if !errors.As(err, &ire) || !strings.Contains(err.Error(), "Session.Run") {
		t.Fatalf("Feed with an Object: %v", err)
	}
	if got := reprOf(t, o.run(t, "w.grow(1, by=1)")); got != "1" {
		t.Fatalf("session unusable: %s", got)
	}
}

// TestRealHostObjectNestedKeepsIdentity is the regression test of a host
// object nested in a container: a Go function taking []*widget (or a map
// of them, or []any) called with [w] receives the session's own *widget,
// so its mutations are kept, as a func(*widget) parameter always did.
func TestRealHostObjectNestedKeepsIdentity(t *testing.T) {
	o := newRealObjects(t)
	o.w.Count = 11
	var seen []*widget
	o.reg.MustRegister("bump_all", func(ws []*widget) int {
		seen = ws
		for _, w := range ws {
			w.Count++
		}
		return len(ws)
	})
	o.reg.MustRegister("bump_map", func(m map[string]*widget) int { m["a"].Count += 10; return m["a"].Count })
	o.reg.MustRegister("same_any", func(xs []any) bool { return len(xs) == 1 && xs[0] == any(o.w) })
	if got := reprOf(t, o.run(t, "bump_all([w, w])")); got != "2" {
		t.Fatalf("bump_all = %s", got)
	}
	if len(seen) != 2 || seen[0] != o.w || seen[1] != o.w || o.w.Count != 13 {
		t.Fatalf("the function saw %v (real %p), Count %d, want the real object twice and 13", seen, o.w, o.w.Count)
	}
	if got := reprOf(t, o.run(t, "(bump_map({'a': w}), w.count)")); got != "(23, 23)" {
		t.Fatalf("bump_map = %s", got)
	}
	if got := reprOf(t, o.run(t, "same_any([w])")); got != "True" {
		t.Fatalf("same_any = %s", got)
	}
	// A sandbox-made instance of another class is still refused for a
	// parameter of the host class's Go type, also nested.
	pe := o.fail(t, "class W:\n    size = 1\nbump_all([W()])", "TypeError")
	if !strings.Contains(pe.Exception.Msg(), "not a Widget object of this session") {
		t.Fatalf("message %q", pe.Exception.Msg())
	}
}

// A bound method kept in a global (m = w.grow) outlives its object's
// entry in the store when the session is dumped and the dump loaded after
// a Reset: calling it raises the AttributeError a method call on the
// object raises (as Load's doc says), not a NameError naming the method's
// internal token.
func TestRealBoundMethodOfAReleasedObjectIsAnAttributeError(t *testing.T) {
	o := newRealObjects(t)
	o.run(t, "m = w.grow\nm(1, by=1)")
	ctx := context.Background()
	d, err := o.s.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := o.s.Load(ctx, d); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(unknownObject, "grow")
	for _, code := range []string{"w.grow(1, by=1)", "m(1, by=1)"} {
		if pe := o.fail(t, code, "AttributeError"); pe.Exception.Msg() != want {
			t.Fatalf("%s: %q", code, pe.Exception.Msg())
		}
	}
}

// A Constructor's argument errors read as CPython words those of a class
// whose __init__ takes the Constructor's parameters: named
// Account.__init__() and counting self, as the field-by-field
// constructor's already do; they said Account() and left self out.
func TestRealHostConstructorFunctionErrorsAreInits(t *testing.T) {
	testenv.Worker(t)
	cls := MustClassOf[account]("Account", Policy{
		Eager:             []string{"owner"},
		Constructor:       func(owner string, opening int) *account { return &account{Owner: owner, Balance: opening} },
		ConstructorParams: []string{"owner", "opening"},
	})
	reg := NewRegistry().MustRegisterClass("Account", cls)
	s := realSession(t, Config{})
	for code, want := range map[string]string{
		"Account('a', 1, 2)":                 "Account.__init__() takes 3 positional arguments but 4 were given",
		"Account()":                          "Account.__init__() missing 2 required positional arguments: 'owner' and 'opening'",
		"Account('a', x=1)":                  "Account.__init__() got an unexpected keyword argument 'x'",
		"Account('a', owner='b', opening=1)": "Account.__init__() got multiple values for argument 'owner'",
	} {
		_, err := s.Run(context.Background(), code, WithFunctions(reg))
		if pe := pyErr(t, err, "TypeError"); pe.Exception.Msg() != want {
			t.Errorf("%s: %q, want %q", code, pe.Exception.Msg(), want)
		}
	}
}
