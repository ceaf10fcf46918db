// Package value holds gomonty's domain model of sandbox values: the Go
// counterpart of Monty's value types, independent of any wire encoding.
//
// A value travels as a [Graph]: a flat list of [Node]s in post-order, where a
// container names its children by [NodeID] and every child id is strictly
// lower than the id of the node holding it. A message that carries values
// names its roots by id into the graph. Sub-objects referenced twice are one
// node whose id appears twice; a reference back to an enclosing container is
// a [KindCycle] leaf whose text is the placeholder repr shows ("[...]",
// "(...)", "{...}" or "...").
//
// The protocol-4 codec decodes straight into these types and the protocol-2
// codec turns its recursive trees into the same graph, so nothing above the
// codec depends on the protocol version.
//
// Go values convert to graphs with [FromGo] and back with [ToGo] and [ToAny],
// in the spirit of encoding/json; an [Encoder] or [Decoder] does the same
// with a hook consulted at every node (the session uses them for host
// objects). Conversion plans are cached per Go type, and slices and maps of
// scalars convert without a reflection call per element. FromGo holds a Go
// integer or float slice as one list node with packed int64 or float64
// items ([Node.Ints], [Node.Floats]) and no node per item; the codecs
// write such a list as if each item had its node, and [Graph.Unpacked]
// gives each its node for code that walks a graph by [Node.Refs].
//
// [Graph.Repr] renders any node the way CPython's repr() renders the equivalent
// Python value.
//
// Graphs are plain data: a Graph is not safe for concurrent mutation, but
// any number of goroutines may read one that nobody is changing.
package value
