package session

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// neverChan is a named channel type; neverClassChan one that backs a
// registered host class, whose instances do convert into it.
type (
	neverChan      chan int
	neverClassChan chan int
)

// neverTextFunc and neverJSONChan convert in through their pointers'
// UnmarshalText and UnmarshalJSON, and out not at all.
type (
	neverTextFunc func()
	neverJSONChan chan int
)

func (f *neverTextFunc) UnmarshalText([]byte) error { *f = func() {}; return nil }
func (c *neverJSONChan) UnmarshalJSON([]byte) error { *c = make(neverJSONChan); return nil }

// TestRegisterRefusesUnconvertibleTypes: a function whose parameter no
// sandbox value converts into (a channel, a func, unsafe.Pointer, ...)
// was accepted by Register and failed only when the sandbox called it,
// with a TypeError at every call. Register now refuses it, naming the
// parameter, by the rule the stubs use for typing.Never; the table
// checks that the two agree: a refused type is one the stubs write as
// Never (shown through a variadic parameter, which Register accepts as
// it may take no arguments) and into which ToGo takes none of the
// sandbox's plain values, and an accepted one is never Never in the
// stubs. Results are checked by the same rule: a refused result type is
// one FromGo refuses even as its zero value. One case goes one way only:
// a parameter of a type that decodes through its UnmarshalText or
// UnmarshalJSON takes a str, so Register accepts it, and the stubs
// annotate it as what decodes into it (TestStubsUnmarshalOnlyParams);
// it still does not convert out: as a result it is refused.
func TestRegisterRefusesUnconvertibleTypes(t *testing.T) {
	for _, tc := range []struct {
		typ        reflect.Type
		refuse     bool
		unmarshals bool // accepted as a parameter, not Never there in the stubs, refused as a result
	}{
		{reflect.TypeFor[chan int](), true, false},
		{reflect.TypeFor[<-chan string](), true, false},
		{reflect.TypeFor[neverChan](), true, false},
		{reflect.TypeFor[func()](), true, false},
		{reflect.TypeFor[func(int) error](), true, false},
		{reflect.TypeFor[complex64](), true, false},
		{reflect.TypeFor[complex128](), true, false},
		{reflect.TypeFor[unsafe.Pointer](), true, false},
		{reflect.TypeFor[big.Float](), true, false},
		{reflect.TypeFor[big.Rat](), true, false},
		{reflect.TypeFor[time.Location](), true, false},
		// These take something: None, an empty container, a dict
		// without the field, a registered class's instances.
		{reflect.TypeFor[*chan int](), false, false},
		{reflect.TypeFor[*big.Float](), false, false},
		{reflect.TypeFor[[]chan int](), false, false},
		{reflect.TypeFor[[2]func()](), false, false},
		{reflect.TypeFor[map[string]complex128](), false, false},
		{reflect.TypeFor[map[*int]int](), false, false},
		{reflect.TypeFor[struct{ C chan int }](), false, false},
		{reflect.TypeFor[*time.Location](), false, false},
		{reflect.TypeFor[any](), false, false},
		{reflect.TypeFor[error](), false, false},
		{reflect.TypeFor[int](), false, false},
		{reflect.TypeFor[neverClassChan](), false, false},
		{reflect.TypeFor[*neverClassChan](), false, false},
		{reflect.TypeFor[neverTextFunc](), false, true},
		{reflect.TypeFor[neverJSONChan](), false, true},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			reg := NewRegistry().MustRegisterClass("Chan", MustClassOf[neverClassChan]("Chan", Policy{}))
			fixed := reflect.FuncOf([]reflect.Type{reflect.TypeFor[int](), tc.typ}, nil, false)
			err := reg.Register("f", reflect.MakeFunc(fixed, func([]reflect.Value) []reflect.Value { return nil }).Interface(), Params("n", "thing"))
			if (err != nil) != tc.refuse {
				t.Fatalf("Register(func(int, %v)): %v, want refused %v", tc.typ, err, tc.refuse)
			}
			if err != nil && (!strings.Contains(err.Error(), `parameter "thing"`) || !strings.Contains(err.Error(), tc.typ.String())) {
				t.Errorf("the error does not name the parameter and its type: %v", err)
			}
			// Without names, positions count from 1 after a context.
			withCtx := reflect.FuncOf([]reflect.Type{reflect.TypeFor[context.Context](), tc.typ}, nil, false)
			err = reg.Register("c", reflect.MakeFunc(withCtx, func([]reflect.Value) []reflect.Value { return nil }).Interface())
			if (err != nil) != tc.refuse || err != nil && !strings.Contains(err.Error(), "argument 1 ") {
				t.Errorf("Register(func(context.Context, %v)): %v, want refused %v naming argument 1", tc.typ, err, tc.refuse)
			}
			// A variadic parameter may take no arguments: accepted, and
			// its stub shows what the stubs make of the type.
			variadic := reflect.FuncOf([]reflect.Type{reflect.SliceOf(tc.typ)}, nil, true)
			vreg := NewRegistry().MustRegisterClass("Chan", MustClassOf[neverClassChan]("Chan", Policy{}))
			if err := vreg.Register("v", reflect.MakeFunc(variadic, func([]reflect.Value) []reflect.Value { return nil }).Interface()); err != nil {
				t.Fatalf("Register(func(...%v)): %v", tc.typ, err)
			}
			stubs := vreg.Stubs()
			_, after, ok := strings.Cut(stubs, "def v(*args: ")
			if !ok {
				t.Fatalf("no stub for v in:\n%s", stubs)
			}
			if never := strings.HasPrefix(after, "Never)"); never != tc.refuse {
				t.Errorf("Register refused %v: %v, but the stubs annotate it as %s", tc.typ, tc.refuse, after[:strings.Index(after, ")")])
			}
			if tc.unmarshals {
				var g value.Graph
				root, _ := value.FromGo(&g, "text")
				if err := value.ToGo(&g, root, reflect.New(tc.typ).Interface()); err != nil {
					t.Errorf("a str does not convert into %v: %v", tc.typ, err)
				}
			}
			if tc.refuse {
				// None of the sandbox's plain values converts into it.
				for _, in := range []any{nil, true, 1, 1.5, "s", []byte("b"), []any{}, map[string]any{}} {
					var g value.Graph
					root, err := value.FromGo(&g, in)
					if err != nil {
						t.Fatal(err)
					}
					if err := value.ToGo(&g, root, reflect.New(tc.typ).Interface()); err == nil {
						t.Errorf("%#v converts into %v, which Register refused", in, tc.typ)
					}
				}
			}
			// The result, by the same rule.
			result := reflect.FuncOf(nil, []reflect.Type{tc.typ, reflect.TypeFor[error]()}, false)
			err = reg.Register("r", reflect.MakeFunc(result, func([]reflect.Value) []reflect.Value {
				return []reflect.Value{reflect.Zero(tc.typ), reflect.Zero(reflect.TypeFor[error]())}
			}).Interface())
			refuse := tc.refuse || tc.unmarshals
			if (err != nil) != refuse || err != nil && !strings.Contains(err.Error(), "result") {
				t.Errorf("Register(func() (%v, error)): %v, want refused %v naming the result", tc.typ, err, refuse)
			}
			if refuse {
				var ce *value.ConversionError
				if _, err := value.FromGo(&value.Graph{}, reflect.Zero(tc.typ).Interface()); !errors.As(err, &ce) {
					t.Errorf("FromGo(zero %v): %v, but Register refused it as a result", tc.typ, err)
				}
			}
		})
	}
}

// neverWidget has methods that take or give what no conversion does.
type neverWidget struct{ N int }

func (w *neverWidget) Feed(ch chan int)        {}
func (w *neverWidget) Done() <-chan int        { return nil }
func (w *neverWidget) Grow(n int) *neverWidget { return w }
func (w *neverWidget) Same(o neverWidget) bool { return o.N == w.N }

// TestRegisterClassRefusesUnconvertibleMethods: RegisterClass applies
// Register's rule to the methods and the constructor it exposes, with the
// class itself counted as registered (a method may take and return its
// own class), and a refused class is not registered at all.
func TestRegisterClassRefusesUnconvertibleMethods(t *testing.T) {
	for _, tc := range []struct {
		methods []string
		ctor    any
		want    string // in the error; "" for none
	}{
		{methods: []string{"grow", "same"}},
		{methods: []string{"grow", "feed(ch)"}, want: `"W.feed": parameter "ch" is a chan int`},
		{methods: []string{"done"}, want: `"W.done": the result is a <-chan int`},
		{ctor: func(n int) *neverWidget { return &neverWidget{N: n} }},
		{ctor: func(f func()) *neverWidget { return nil }, want: `"W.__init__": argument 1 is a func()`},
	} {
		reg := NewRegistry()
		c, err := ClassOf[neverWidget]("W", Policy{Methods: tc.methods, Constructor: tc.ctor})
		if err != nil {
			t.Fatal(err)
		}
		err = reg.RegisterClass("W", c)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v %T: %v", tc.methods, tc.ctor, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v %T: %v, want an error with %s", tc.methods, tc.ctor, err, tc.want)
		case tc.want != "" && (reg.class("W") != nil || reg.classOf(reflect.TypeFor[neverWidget]()) != nil):
			t.Errorf("%v %T: refused, but registered", tc.methods, tc.ctor)
		}
	}
}

// neverFields has fields of every sort the field check tells apart.
type neverFields struct {
	N       int
	Ch      chan int
	Fn      func()
	Cx      complex128
	PtrCh   *chan int
	ChList  []chan int
	Text    neverTextFunc
	Skipped chan int `monty:"-"`
	Next    *neverFields
	Same    neverClassChan
	_       chan int
}

// TestRegisterClassRefusesUnconvertibleFields: a host class whose field
// converts out to no sandbox value (a channel, a func, a complex number,
// a type that only decodes through UnmarshalText) was registered, and
// then every instance sent with that field eager failed, as did every
// read of it lazy. RegisterClass now refuses the class, naming the
// field, by the rule of results (the stubs' typing.Never); a field that
// converts (a pointer to one: None; a slice of them: an empty one; the
// class's own type; a registered class) is accepted, and so is LazyAll
// over a struct whose unconvertible fields are unexported (or blank) or
// tagged `monty:"-"`.
func TestRegisterClassRefusesUnconvertibleFields(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string // in the error; "" for none
	}{
		{p: Policy{Eager: []string{"N", "PtrCh", "ChList", "Next"}, Lazy: []string{"Same"}}},
		{p: Policy{Eager: []string{"N", "Ch"}}, want: `field "Ch" is a chan int`},
		{p: Policy{Lazy: []string{"Fn"}}, want: `field "Fn" is a func()`},
		{p: Policy{Lazy: []string{"Cx"}}, want: `field "Cx" is a complex128`},
		{p: Policy{Eager: []string{"Text"}}, want: `field "Text" is a session.neverTextFunc`},
		{p: Policy{LazyAll: true}, want: `field "Ch" is a chan int`},
	} {
		reg := NewRegistry().MustRegisterClass("Chan", MustClassOf[neverClassChan]("Chan", Policy{}))
		c, err := ClassOf[neverFields]("F", tc.p)
		if err != nil {
			t.Fatal(err)
		}
		err = reg.RegisterClass("F", c)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.p, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "class F: "+tc.want)):
			t.Errorf("%+v: %v, want an error with %s", tc.p, err, tc.want)
		case tc.want != "" && (reg.class("F") != nil || reg.classOf(reflect.TypeFor[neverFields]()) != nil):
			t.Errorf("%+v: refused, but registered", tc.p)
		}
		// An accepted class's instances convert; a refused one's, with
		// the field eager, do not.
		s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(0)) })
		r := s.newRunner(bg, []RunOption{WithFunctions(reg)})
		eager := append(append([]string(nil), tc.p.Eager...), tc.p.Lazy...)
		if tc.p.LazyAll {
			eager = []string{"N", "Ch"}
		}
		var g value.Graph
		_, _, err = r.encode(&g, Object(MustClassOf[neverFields]("F", Policy{Eager: eager}), &neverFields{}), false, nil)
		if (err != nil) != (tc.want != "") {
			t.Errorf("%+v: sending an instance with %v eager: %v", tc.p, eager, err)
		}
		r.finish()
	}
	// A refused field's zero value converts to nothing.
	for _, v := range []any{chan int(nil), func() {}, complex128(0), neverTextFunc(nil)} {
		if _, err := value.FromGo(&value.Graph{}, v); err == nil {
			t.Errorf("FromGo(%T) converts, but its field was refused", v)
		}
	}
	// Without the unconvertible exported fields, LazyAll is accepted.
	type clean struct {
		N  int
		Ch chan int `monty:"-"`
		_  func()
	}
	if err := NewRegistry().RegisterClass("C", MustClassOf[clean]("C", Policy{LazyAll: true})); err != nil {
		t.Errorf("LazyAll without unconvertible fields: %v", err)
	}
}
