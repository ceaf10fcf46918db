package codecv2

import (
	"strings"
	"testing"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// A value node's string that is not UTF-8 is refused naming the node, its
// kind and the field, whichever field of the node holds it.
func TestEncodeRefusesBadUTF8InNodes(t *testing.T) {
	bad := "\xff"
	for _, c := range []struct {
		n    value.Node
		want string
	}{
		{value.Str(bad), "(str): text"},
		{value.Cycle(bad), "placeholder"},
		{value.Node{Kind: value.KindException}.WithExt(&value.Exception{Type: "ValueError", Arg: &bad}), "arg"},
		{value.Node{Kind: value.KindFunction}.WithExt(&value.Function{Name: "f", Docstring: &bad}), "docstring"},
		{value.Node{Kind: value.KindFileHandle}.WithExt(&value.FileHandle{Path: bad, Mode: "r"}), "path"},
		{value.Node{Kind: value.KindTimeZone}.WithExt(&value.TimeZone{Name: &bad}), "name"},
	} {
		var g value.Graph
		id := g.Add(c.n)
		_, err := AppendEvent(nil, &message.ChildEvent{Body: &message.Complete{Value: id, Values: g}})
		if err == nil || !strings.Contains(err.Error(), "value node 0 ") || !strings.Contains(err.Error(), c.want+" is not valid UTF-8") {
			t.Errorf("%v: %v, want a refusal naming %q", c.n.Kind, err, c.want)
		}
	}
}
