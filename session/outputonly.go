package session

import (
	"fmt"

	"github.com/gomonty/monty/internal/safetext"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// The sandbox sends some values that it does not take back: a value with
// no form of its own on the wire arrives as the text of its repr (a
// module, say), and a container that holds itself arrives with a cycle
// placeholder where it recurs (value.Kind.OutputOnly). A host that hands
// one back, a host function returning its argument for instance, would
// have the worker end the whole feed with a RuntimeError the code cannot
// catch. The session looks at the nodes each host answer added before
// sending it, and answers with a TypeError raised where the code called
// or looked the name up, which it may catch; a Feed input or a Resume
// answer holding one is refused with an *InvalidRequestError instead.
// The codecs' own checks let these kinds through: they are valid on the
// wire, and the worker is what refuses them.

// maxOutputOnlyText bounds the repr text an error quotes.
const maxOutputOnlyText = 120

// outputOnlyNode returns the first node of g from id from on whose kind
// the sandbox does not take back. Only the nodes one answer appended are
// looked at: one comparison a node, after the conversion that made them.
func outputOnlyNode(g *value.Graph, from int) (value.NodeID, bool) {
	for i := from; i < len(g.Nodes); i++ {
		if g.Nodes[i].Kind.OutputOnly() {
			return value.NodeID(i), true
		}
	}
	return 0, false
}

// outputOnlyText describes node id of g, found in the value whose root is
// root: "repr of <module 'sys'>" for the root itself, "it holds the repr
// of …" for a node inside it.
func outputOnlyText(g *value.Graph, root, id value.NodeID) string {
	n := g.Node(id)
	text := safetext.Bound(n.Text(), maxOutputOnlyText)
	what := "repr of " + text
	if n.Kind == value.KindCycle {
		what = "cycle placeholder " + text + ", a value that contains itself"
	}
	if id != root {
		if n.Kind == value.KindCycle {
			return "it holds a " + what
		}
		return "it holds the " + what
	}
	if n.Kind == value.KindCycle {
		return "a " + what
	}
	return what
}

// outputOnlyCall returns the TypeError that a call of the host function
// name raises in place of returning the value at root of g, whose nodes
// from from on it added, when one of those is one the sandbox does not
// take back; nil when there is none.
func outputOnlyCall(g *value.Graph, from int, root value.NodeID, name string) *message.RaisedException {
	return outputOnlyResult(g, from, root, name, "()")
}

// outputOnlyResult is outputOnlyCall for a call's result that who+suffix
// returned ("f" "()", "the OS handler for read_text" ""); the two are
// joined only for the error, so that a call costs no allocation.
func outputOnlyResult(g *value.Graph, from int, root value.NodeID, who, suffix string) *message.RaisedException {
	id, ok := outputOnlyNode(g, from)
	if !ok {
		return nil
	}
	return typeError("%s%s returned a value that cannot be sent back into the sandbox (%s)", who, suffix, outputOnlyText(g, root, id))
}

// outputOnlyLookup is outputOnlyCall for the value of the host value (or
// attribute) name that a name lookup asked for.
func outputOnlyLookup(g *value.Graph, from int, root value.NodeID, name string) *message.RaisedException {
	id, ok := outputOnlyNode(g, from)
	if !ok {
		return nil
	}
	return typeError("host value %s cannot be sent back into the sandbox (%s)", name, outputOnlyText(g, root, id))
}

// outputOnlyInput returns the error for a value the caller gives the
// session to send (a Feed input, a Resume answer) that holds a node the
// sandbox does not take back, among those of g from from on; nil when
// none does. It matches *value.InputError.
func outputOnlyInput(g *value.Graph, from int, root value.NodeID) error {
	id, ok := outputOnlyNode(g, from)
	if !ok {
		return nil
	}
	return fmt.Errorf("the value cannot be sent into the sandbox (%s): %w",
		outputOnlyText(g, root, id), &value.InputError{Node: id, Kind: g.Node(id).Kind})
}
