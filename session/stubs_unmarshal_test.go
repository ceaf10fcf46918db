package session

import "testing"

// unmarshalOnly has parameters of types that decode only through their
// pointers' UnmarshalText (neverTextFunc) or UnmarshalJSON
// (neverJSONChan), bare and nested.
func unmarshalOnly(t neverTextFunc, j neverJSONChan, p *neverTextFunc, ts []neverTextFunc, m map[string]neverJSONChan) int {
	n := 0
	for _, set := range []bool{t != nil, j != nil, p != nil && *p != nil, len(ts) == 1 && ts[0] != nil, m["k"] != nil} {
		if set {
			n++
		}
	}
	return n
}

type unmarshalHolder struct{ N int }

func (h *unmarshalHolder) Take(f neverTextFunc, c neverJSONChan) bool { return f != nil && c != nil }

// A parameter of a func or chan type that ToGo decodes through
// UnmarshalText takes a str, one that decodes through UnmarshalJSON any
// value with a JSON form (Any); Register accepts both, but the stubs
// wrote typing.Never for them, so a type-checked session refused every
// call (TestRealStubsUnmarshalOnlyParams). The results, which convert
// out to nothing, stay Never.
func TestStubsUnmarshalOnlyParams(t *testing.T) {
	reg := NewRegistry().
		MustRegister("f", unmarshalOnly, Params("t", "j", "p", "ts", "m")).
		MustRegister("g", func() []neverTextFunc { return nil }).
		MustRegisterClass("Holder", MustClassOf[unmarshalHolder]("Holder", Policy{
			Methods:     []string{"take(f, c)"},
			Constructor: func(f neverTextFunc) *unmarshalHolder { return &unmarshalHolder{} },
		}))
	want := `from typing import Any, Never

class Holder:
    def __init__(self, arg0: str, /) -> None: ...
    def take(self, f: str, c: Any) -> bool: ...
def f(t: str, j: Any, p: str | None, ts: list[str], m: dict[str, Any]) -> int: ...
def g() -> list[Never]: ...
`
	if got := reg.Stubs(); got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
