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

// A result with array keys converts as the stubs say (dict[tuple[int,
// ...], bool]): before, the stubs promised it but the conversion refused
// the map ("unsupported map key type [2]int"), so the call raised.
func TestStubsArrayMapKeyResult(t *testing.T) {
	reg := NewRegistry().MustRegister("pairs", func() map[[2]int]bool { return map[[2]int]bool{{1, 2}: true, {3, 4}: false} })
	if st := reg.Stubs(); !strings.Contains(st, "def pairs() -> dict[tuple[int, ...], bool]: ...") {
		t.Fatalf("stubs:\n%s", st)
	}
	s := realSession(t, Config{TypeCheck: true, TypeCheckStubs: reg.Stubs()})
	r, err := s.Run(context.Background(), "p = pairs()\n[p[(1, 2)], p[(3, 4)], sorted(p)]", WithFunctions(reg))
	if err != nil {
		t.Fatal(err)
	}
	if r.Repr() != "[True, False, [(1, 2), (3, 4)]]" {
		t.Fatalf("got %s", r.Repr())
	}
}
