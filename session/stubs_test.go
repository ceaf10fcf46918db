package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"math/big"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gomonty/monty/value"
)

type stubWidget struct {
	Size  int    `monty:"size"`
	Label string `monty:"label"`
	Notes string
}

func (w *stubWidget) Grow(by int) int  { w.Size += by; return w.Size }
func (w *stubWidget) Rename(to string) { w.Label = to }

// JobRecord is a record a host function returns: a TypedDict in stubs.
type JobRecord struct {
	Name string     `monty:"name"`
	Tags []string   `monty:"tags,omitempty"`
	Next *JobRecord `monty:"next"`
}

// stubRegistry registers a function of every shape Stubs distinguishes.
func stubRegistry() *Registry {
	cls := MustClassOf[stubWidget]("Widget", Policy{Eager: []string{"size", "label"}, Lazy: []string{"Notes"},
		Methods: []string{"grow(by)", "rename"}, Construct: true})
	reg := NewRegistry().
		MustRegisterClass("Widget", cls).
		MustRegister("fetch_price", func(ctx context.Context, item string, qty int) (float64, error) { return 1.5 * float64(qty), nil }, Params("item", "qty")).
		MustRegister("positional", func(a string, b []int) map[string]float64 { return map[string]float64{a: float64(len(b))} }).
		MustRegister("when", func(t time.Time, d *time.Duration) time.Time { return t }).
		MustRegister("total", func(xs ...float64) float64 {
			s := 0.0
			for _, x := range xs {
				s += x
			}
			return s
		}).
		MustRegister("slow", func(ctx context.Context, n int) (int, error) { return n * 10, nil }, Async(), Params("n")).
		MustRegister("raw", func(ctx context.Context, c *Call) (any, error) { return len(c.Args) + len(c.Kwargs), nil }, Params("first")).
		MustRegister("api", func(req json.RawMessage) (json.RawMessage, error) { return req, nil }).
		MustRegister("jobs", func() []JobRecord { return []JobRecord{{Name: "build", Next: &JobRecord{Name: "test"}}} }).
		MustRegister("make_widget", func() *stubWidget { return &stubWidget{Label: "made"} }).
		MustRegister("log", func(msg string) error { return nil }, Doc("Logs msg.\n\nA \"\"\"quoted\"\"\" word, a \\ backslash, the end: \"")).
		MustRegister("misc", func(u value.UUID, b []byte, m map[int]*string, p value.PathValue, a any) {})
	reg.SetValue("limit", 10)
	reg.SetValue("names", []string{"a", "b"})
	reg.SetValue("w", &stubWidget{Size: 1, Label: "w"})
	reg.SetValue("nothing", nil)
	return reg
}

const wantStubs = `import datetime
import pathlib
from typing import Any, NotRequired, TypedDict

class JobRecord(TypedDict):
    name: str
    tags: NotRequired[list[str]]
    next: JobRecord | None
class Widget:
    size: int
    label: str
    Notes: str
    def __init__(self, size: int = ..., label: str = ..., *, Notes: str = ...) -> None: ...
    def grow(self, by: int) -> int: ...
    def rename(self, arg0: str, /) -> None: ...
def api(arg0: Any, /) -> Any: ...
def fetch_price(item: str, qty: int) -> float: ...
def jobs() -> list[JobRecord]: ...
def log(arg0: str, /) -> None:
    """Logs msg.

    A \"\"\"quoted\"\"\" word, a \\ backslash, the end: \""""
def make_widget() -> Widget | None: ...
def misc(arg0: str, arg1: bytes, arg2: dict[int, str | None], arg3: pathlib.Path, arg4: Any, /) -> None: ...
def positional(arg0: str, arg1: list[int], /) -> dict[str, float]: ...
def raw(first: Any, *args: Any, **kwargs: Any) -> Any: ...
async def slow(n: int) -> int: ...
def total(*args: float) -> float: ...
def when(arg0: datetime.datetime, arg1: datetime.timedelta | None, /) -> datetime.datetime: ...
limit: int
names: list[str]
nothing: None
w: Widget
`

func TestStubs(t *testing.T) {
	if got := stubRegistry().Stubs(); got != wantStubs {
		t.Fatalf("got:\n%s\nwant:\n%s", got, wantStubs)
	}
	if got := NewRegistry().Stubs(); got != "" {
		t.Fatalf("empty registry: %q", got)
	}
}

func TestParamsChecked(t *testing.T) {
	f := func(a, b int) int { return a + b }
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"a"}, "1 parameter names for 2 parameters"},
		{[]string{"a", "a"}, `repeated parameter name "a"`},
		{[]string{"a", "class"}, `bad or repeated parameter name "class"`},
		{[]string{"a", "b c"}, `bad or repeated parameter name "b c"`},
	} {
		if err := NewRegistry().Register("f", f, Params(c.names...)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Params%q: %v", c.names, err)
		}
	}
	raw := func(ctx context.Context, c *Call) (any, error) { return nil, nil }
	if err := NewRegistry().Register("f", raw, Params("x", "x")); err == nil {
		t.Error("a Func's repeated names were accepted")
	}
}

// TestRegisterRefusesNilFunctions: a nil function of any type is refused
// when registered, not found out as a RuntimeError ("host function f
// panicked: ... nil pointer dereference") at each call from the sandbox.
func TestRegisterRefusesNilFunctions(t *testing.T) {
	for _, fn := range []any{
		nil,
		Func(nil),
		(func(context.Context, *Call) (any, error))(nil),
		(func(int) int)(nil),
	} {
		if err := NewRegistry().Register("f", fn); err == nil || !strings.Contains(err.Error(), "nil function") {
			t.Errorf("Register(%T nil): %v", fn, err)
		}
	}
	type thing struct{ N int }
	_, err := ClassOf[thing]("Thing", Policy{Constructor: (func(n int) *thing)(nil)})
	if err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("nil Constructor: %v", err)
	}
}

// TestIdentifiersFollowPython: names are checked as Python checks
// identifiers (the answers are CPython 3.11's str.isidentifier), so a
// name that is not UTF-8 is refused rather than sent to the worker, where
// the stubs holding it failed every type-checked session's Configure.
func TestIdentifiersFollowPython(t *testing.T) {
	for name, want := range map[string]bool{
		"π": true, "ñame": true, "x·y": true, "変数": true, "x１": true, "_": true, "a\u0301": true,
		// Unicode 15.1 made the zero width joiner continue a name; the
		// worker's parser and its type checker read a\u200db as one.
		"ⅷ": true, "℘x": true, "fetch_2": true, "a\u200db": true,
		"bad\xff": false, "\xff": false, "price€": false, "a\u00a0b": false, "a\u3000b": false,
		"１x": false, "2x": false, "a-b": false, "a😀": false, "class": false, "": false,
	} {
		if got := isIdentifier(name); got != want {
			t.Errorf("isIdentifier(%q) = %v, want %v", name, got, want)
		}
	}
	if err := NewRegistry().Register("price\xff", func() int { return 1 }); err == nil {
		t.Error("a name that is not UTF-8 was registered")
	}
}

// TestStubsNeverRepeatAParameter: a parameter named like one the stubs
// add (args, kwargs, self) leaves the added one another name; a def that
// repeats a name is a SyntaxError in Python ("duplicate argument 'args'
// in function definition").
func TestStubsNeverRepeatAParameter(t *testing.T) {
	type thing struct {
		Self int `monty:"self"`
	}
	reg := NewRegistry().
		MustRegister("f", func(a int, rest ...int) int { return a }, Params("args")).
		MustRegister("g", func(ctx context.Context, c *Call) (any, error) { return nil, nil }, Params("args", "kwargs", "kwargs_")).
		MustRegisterClass("Thing", MustClassOf[thing]("Thing", Policy{Eager: []string{"self"}, Construct: true}))
	want := `from typing import Any

class Thing:
    self: int
    def __init__(self_, self: int = ...) -> None: ...
def f(args: int, *args_: int) -> int: ...
def g(args: Any, kwargs: Any, kwargs_: Any, *args_: Any, **kwargs__: Any) -> Any: ...
`
	if got := reg.Stubs(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestRegisterCallParameterNeedsFunc: a *Call parameter outside a Func's
// signature is refused with a message that says so; before, func(*Call)
// (any, error) was told its first parameter "must come first or not at
// all".
func TestRegisterCallParameterNeedsFunc(t *testing.T) {
	for _, fn := range []any{
		func(c *Call) (any, error) { return nil, nil },
		func(ctx context.Context, c *Call) any { return nil },
		func(n int, c *Call) {},
	} {
		err := NewRegistry().Register("f", fn)
		if err == nil || !strings.Contains(err.Error(), "only a Func") {
			t.Errorf("Register(%T): %v", fn, err)
		}
	}
	err := NewRegistry().Register("f", func(n int, ctx context.Context) {})
	if err == nil || !strings.Contains(err.Error(), "must come first") {
		t.Errorf("a late context: %v", err)
	}
}

// TestStubsNoPythonCounterpart: a big.Float, a big.Rat or a time.Location
// (not a pointer to one, which takes a timezone) converts to nothing in
// Python, the conversions refusing it as they refuse a channel; the stubs
// annotated it as a dict, which the conversions never accept or give,
// then as Any, which told the type checker any value would do. It is
// Never, and a pointer to it None, the one value that converts.
func TestStubsNoPythonCounterpart(t *testing.T) {
	// (Register refuses a parameter of such a type itself, which no
	// argument converts into: a list or dict of them takes an empty one.)
	reg := NewRegistry().MustRegister("f", func(x *big.Float, r []big.Rat, l map[string]time.Location) *big.Rat { return nil })
	want := `from typing import Never

def f(arg0: None, arg1: list[Never], arg2: dict[str, Never], /) -> None: ...
`
	if got := reg.Stubs(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// addrKeyed is a named int whose text form is what converts: value.FromGo
// turns a type with no conversion of its own that implements
// encoding.TextMarshaler (or whose pointer does) into a str of its text.
type addrKeyed int

func (a *addrKeyed) MarshalText() ([]byte, error) { return []byte("k"), nil }

func TestStubsTextMarshalerIsStr(t *testing.T) {
	reg := NewRegistry().MustRegister("f", func(a netip.Addr, p *netip.Prefix, m map[netip.Addr]addrKeyed, l slog.Level, tm time.Time) []netip.Addr {
		return nil
	})
	want := `import datetime

def f(arg0: str, arg1: str | None, arg2: dict[str, str], arg3: str, arg4: datetime.datetime, /) -> list[str]: ...
`
	if got := reg.Stubs(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// jsonMoney converts through its JSON alone: value.FromGo turns a type
// with no conversion of its own and no MarshalText that implements
// json.Marshaler (or whose pointer does) into the value of its JSON.
type jsonMoney struct{ _ int64 }

func (m jsonMoney) MarshalJSON() ([]byte, error) { return []byte(`{"cents": 1}`), nil }

// jsonCode is a named int with a JSON form through its pointer.
type jsonCode int

func (c *jsonCode) MarshalJSON() ([]byte, error) { return []byte(`"c"`), nil }

// A type whose JSON is what converts is Any in the stubs (its JSON may be
// any value), not the dict of its fields or its kind's type; a
// MarshalText, which comes first, still makes it a str.
func TestStubsJSONMarshalerIsAny(t *testing.T) {
	reg := NewRegistry().MustRegister("f", func(m jsonMoney, p *jsonMoney, c jsonCode, ms []jsonMoney, a netip.Addr) jsonMoney {
		return jsonMoney{}
	})
	want := `from typing import Any

def f(arg0: Any, arg1: Any | None, arg2: Any, arg3: list[Any], arg4: str, /) -> Any: ...
`
	if got := reg.Stubs(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

// A value set under a name the worker's parser might refuse (not an
// identifier by Go's tables: 1x, or a character they do not have yet) is
// left out of the stubs, as such a function is: the worker's type checker
// ignores every declaration of stubs it cannot parse
// (TestRealStubsOfNFKCNames). Before, SetValue's name was written as given.
func TestStubsLeaveOutValuesThatAreNoName(t *testing.T) {
	reg := NewRegistry()
	reg.SetValue("1x", 1)
	reg.SetValue("a b", 1)
	reg.SetValue("\U000105c0", 1)
	reg.SetValue("ok", 1)
	reg.SetValue("x²", 1)
	got := reg.Stubs()
	if want := "ok: int\nx2: int\n"; got != want {
		t.Errorf("stubs %q, want %q", got, want)
	}
}
