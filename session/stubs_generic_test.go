package session

import (
	"strings"
	"testing"
)

// Pair is a generic record a host function returns.
type Pair[K comparable, V any] struct {
	Key   K `monty:"key"`
	Value V `monty:"value"`
}

// A generic struct converts field by field as any struct does, but the
// stubs said dict[str, Any] for it (its Go name, Pair[int,string], is no
// Python identifier). It is now a TypedDict named after the type and its
// arguments.
func TestStubsGenericStructIsTypedDict(t *testing.T) {
	reg := NewRegistry().
		MustRegister("pair", func() Pair[int, string] { return Pair[int, string]{1, "a"} }).
		MustRegister("pairs", func(p []Pair[string, JobRecord]) *Pair[int, []float64] { return nil })
	st := reg.Stubs()
	for _, want := range []string{
		"class Pair_int_string(TypedDict):\n    key: int\n    value: str\n",
		"class Pair_string_JobRecord(TypedDict):\n    key: str\n    value: JobRecord\n",
		"class Pair_int_float64(TypedDict):\n    key: int\n    value: list[float]\n",
		"def pair() -> Pair_int_string: ...",
		"def pairs(arg0: list[Pair_string_JobRecord], /) -> Pair_int_float64 | None: ...",
	} {
		if !strings.Contains(st, want) {
			t.Errorf("stubs lack %q:\n%s", want, st)
		}
	}
}
