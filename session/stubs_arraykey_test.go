//go:build unix

package session

import (
	"context"
	"strings"
	"testing"
)

// A Go array map key arrives from the sandbox as a tuple (the one hashable
// sequence): the stubs say tuple, so the type checker accepts the call
// that runs. Before, they said list ("dict[list[int], bool]", a type no
// Python dict can have), and the type checker refused the working call.
func TestStubsArrayMapKeyIsTuple(t *testing.T) {
	reg := NewRegistry().MustRegister("count", func(m map[[2]int]bool) int { return len(m) })
	if st := reg.Stubs(); !strings.Contains(st, "dict[tuple[int, ...], bool]") {
		t.Fatalf("stubs:\n%s\nwant the key as tuple[int, ...]", st)
	}
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	r, err := s.Run(context.Background(), "count({(1, 2): True, (3, 4): False})", WithFunctions(reg))
	if err != nil {
		t.Fatal(err)
	}
	if r.Repr() != "2" {
		t.Fatalf("got %s, want 2", r.Repr())
	}
}

// Nested arrays are tuples of tuples; array values (not keys) stay lists,
// as they convert.
func TestStubsNestedArrayKey(t *testing.T) {
	reg := NewRegistry().MustRegister("f", func(m map[[2][2]int][2]int) {})
	if st := reg.Stubs(); !strings.Contains(st, "dict[tuple[tuple[int, ...], ...], list[int]]") {
		t.Fatalf("stubs:\n%s", st)
	}
}
