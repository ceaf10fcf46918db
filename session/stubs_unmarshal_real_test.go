//go:build unix

package session

import (
	"context"
	"testing"
)

// With the stubs of TestStubsUnmarshalOnlyParams, a type-checked session
// accepts calls that pass a str where UnmarshalText decodes it and a
// JSON value where UnmarshalJSON does, and the calls convert. Before, the
// stubs annotated those parameters as typing.Never and the type checker
// refused every call that Register had accepted.
func TestRealStubsUnmarshalOnlyParams(t *testing.T) {
	reg := NewRegistry().
		MustRegister("f", unmarshalOnly, Params("t", "j", "p", "ts", "m")).
		MustRegisterClass("Holder", MustClassOf[unmarshalHolder]("Holder", Policy{
			Methods:     []string{"take(f, c)"},
			Constructor: func(f neverTextFunc) *unmarshalHolder { return &unmarshalHolder{} },
		}))
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	for code, want := range map[string]string{
		"f('x', {'a': [1]}, 'y', ['z'], {'k': 3})": "5",
		// None reaches UnmarshalJSON as null, which neverJSONChan takes.
		"f(t='x', j=None, p=None, ts=[], m={})": "2",
		"Holder('x').take('y', [1, 'two'])":     "True",
	} {
		r, err := s.Run(context.Background(), code, WithFunctions(reg))
		if err != nil {
			t.Errorf("%s: %v", code, err)
			continue
		}
		if got := r.Repr(); got != want {
			t.Errorf("%s = %s, want %s", code, got, want)
		}
	}
}
