package value

import (
	"errors"
	"testing"
)

// CheckInput looks at every node of the graph, as its doc says, not only
// at those its roots reach: a repr node that no root reaches is still
// found, and a graph without one passes.
func TestCheckInputScansEveryNode(t *testing.T) {
	var g Graph
	root := g.Add(Int(1))
	if err := g.CheckInput(root); err != nil {
		t.Fatalf("a graph with no output-only node: %v", err)
	}
	stray := g.Add(Repr("<module 'sys'>"))
	err := g.CheckInput(root)
	var ie *InputError
	if !errors.As(err, &ie) || ie.Node != stray || ie.Kind != KindRepr {
		t.Fatalf("a repr node no root reaches: got %v, want an *InputError for node %d", err, stray)
	}
}
