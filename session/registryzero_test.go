package session

import (
	"context"
	"testing"

	"github.com/gomonty/monty/message"
)

// The zero Registry is ready to use, like one from NewRegistry: before,
// Register, SetValue and RegisterClass on a `var r Registry` panicked
// with "assignment to entry in nil map". A nil *Registry reads as an
// empty one (Stubs panicked on it; lookups already took it).
func TestZeroRegistryIsUsable(t *testing.T) {
	type point struct{ X, Y int }
	fill := func(r *Registry) {
		if err := r.Register("f", func(a int) int { return a }); err != nil {
			t.Fatal(err)
		}
		r.SetValue("limit", 3)
		if err := r.RegisterClass("Point", MustClassOf[point]("Point", Policy{})); err != nil {
			t.Fatal(err)
		}
	}
	var zero Registry
	fill(&zero)
	made := NewRegistry()
	fill(made)
	if got, want := zero.Stubs(), made.Stubs(); got != want || zero.fn("f") == nil || zero.class("Point") == nil {
		t.Errorf("zero Registry's stubs:\n%s\nwant NewRegistry's:\n%s", got, want)
	}
	if v, ok := zero.value("limit"); !ok || v != 3 {
		t.Errorf("limit = %v, %v; want 3", v, ok)
	}
	var none *Registry
	if got, want := none.Stubs(), NewRegistry().Stubs(); got != want {
		t.Errorf("nil Registry's stubs %q, want an empty registry's %q", got, want)
	}
}

// A nil FuncOption or RunOption is ignored (options built conditionally);
// before, Register and Run called it and panicked.
func TestFakeNilOptionsAreIgnored(t *testing.T) {
	r := NewRegistry()
	if err := r.Register("f", func() int { return 1 }, nil, Doc("one"), nil); err != nil {
		t.Fatal(err)
	}
	if h := r.fn("f"); h == nil || h.doc == nil || *h.doc != "one" {
		t.Fatalf("f registered as %+v, want its Doc", h)
	}
	s, _ := startFake(t, Config{}, func(*message.ParentRequest) fakeReply { return reply(completeInt(7)) })
	var none RunOption
	res, err := s.Run(context.Background(), "7", none, WithFunctions(r), nil)
	if err != nil || res.Repr() != "7" {
		t.Fatalf("Run with nil options: %v, %v", res, err)
	}
}
