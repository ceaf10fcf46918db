package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomonty/monty/value"
)

// Call.Arg panics for an index outside the positional arguments, as a
// slice index does, and the panic names the function, the index and how
// many arguments were passed; DecodeArg returns an error instead. Before,
// the panic was the bare "index out of range [1] with length 1".
func TestCallArgOutOfRangePanicsClearly(t *testing.T) {
	var g value.Graph
	one := g.Add(value.Int(7))
	c := &Call{Name: "f", Args: []value.NodeID{one}, Values: &g}
	if v := c.Arg(0); v.Repr() != "7" {
		t.Fatalf("Arg(0) = %s, want 7", v.Repr())
	}
	for _, c := range []struct {
		c    *Call
		i    int
		want string
	}{
		{c, 1, "monty session: Call.Arg(1) of f(), which was passed 1 positional argument"},
		{c, -1, "monty session: Call.Arg(-1) of f(), which was passed 1 positional argument"},
		{&Call{Name: "g"}, 0, "monty session: Call.Arg(0) of g(), which was passed 0 positional arguments"},
	} {
		got := func() (p any) {
			defer func() { p = recover() }()
			c.c.Arg(c.i)
			return nil
		}()
		if got == nil {
			t.Errorf("Arg(%d) of %d arguments did not panic", c.i, c.c.NumArgs())
			continue
		}
		if s := fmt.Sprint(got); s != c.want {
			t.Errorf("Arg(%d) panicked with %q, want %q", c.i, s, c.want)
		}
		if err := c.c.DecodeArg(c.i, new(int)); err == nil || !strings.Contains(err.Error(), c.c.Name+"()") {
			t.Errorf("DecodeArg(%d) = %v, want an error naming %s()", c.i, err, c.c.Name)
		}
	}
}
