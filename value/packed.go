package value

import (
	"reflect"
	"slices"
	"unsafe"
)

// Packed items: FromGo holds a Go integer or float slice or array as one
// list node whose items are int64 or float64 values (Node.Ints,
// Node.Floats), not a node per item, so a million ints cost 8 MB instead
// of 24 MB of nodes and 4 MB of ids. The codecs write such a node's items
// straight from the packed values; every other reader of this package
// works on the unpacked graph.

// Unpacked returns a graph equal to g in which every packed item
// ([Node.Ints], [Node.Floats]) has its own KindInt or KindFloat node,
// placed right before the node that holds it (as a conversion that did not
// pack would have placed it), and the id in that graph of g's node id. When g holds no packed node it
// returns g and id themselves. g is not modified.
func (g *Graph) Unpacked(id NodeID) (*Graph, NodeID) {
	u, ids := g.Unpack()
	if ids != nil && int(id) < len(ids) {
		id = ids[id]
	}
	return u, id
}

// Unpack is [Graph.Unpacked] for any number of ids: it returns the
// unpacked graph and the new id of each node of g (ids[i] for node i), or
// g itself and nil when g holds no packed node.
func (g *Graph) Unpack() (*Graph, []NodeID) {
	if !g.HasPacked() {
		return g, nil
	}
	ids := g.UnpackedIDs()
	out := &Graph{Nodes: make([]Node, 0, int(ids[len(ids)-1])+1)}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Packed() {
			base := NodeID(len(out.Nodes))
			for _, x := range n.Ints() {
				out.Nodes = append(out.Nodes, Int(x))
			}
			for _, x := range n.Floats() {
				out.Nodes = append(out.Nodes, Float(x))
			}
			refs := make([]NodeID, n.n)
			for j := range refs {
				refs[j] = base + NodeID(j)
			}
			out.Nodes = append(out.Nodes, Node{Kind: n.Kind, Num: n.Num}.WithRefs(refs))
			continue
		}
		out.Nodes = append(out.Nodes, n.MapRefs(func(r NodeID) NodeID { return MapID(ids, r) }))
	}
	return out, ids
}

// HasPacked reports whether g holds a node whose items are packed
// ([Node.Ints], [Node.Floats]).
func (g *Graph) HasPacked() bool {
	if !g.packed {
		return false
	}
	for i := range g.Nodes {
		if g.Nodes[i].Packed() {
			return true
		}
	}
	return false
}

// UnpackedIDs returns the id each node of g has in the graph
// [Graph.Unpack] makes (ids[i] for node i), or nil when g holds no packed
// node. It does not build that graph: a codec writes the unpacked form
// straight from g with it.
func (g *Graph) UnpackedIDs() []NodeID {
	if !g.HasPacked() {
		return nil
	}
	ids := make([]NodeID, len(g.Nodes))
	var off NodeID
	for i := range g.Nodes {
		if g.Nodes[i].Packed() {
			off += g.Nodes[i].n
		}
		ids[i] = NodeID(i) + off
	}
	return ids
}

// MapID returns ids[id], or id itself when it is out of the map's range
// (for the checks to report).
func MapID(ids []NodeID, id NodeID) NodeID {
	if int(id) < len(ids) {
		return ids[id]
	}
	return id
}

// MapRefs returns n with every id it refers to (items, dict entries,
// class attributes, an instance's class) mapped through m. What it
// changes is copied: n's own payload is never modified.
func (n Node) MapRefs(m func(NodeID) NodeID) Node {
	if old := n.Refs(); len(old) > 0 {
		refs := make([]NodeID, len(old))
		for i, r := range old {
			refs[i] = m(r)
		}
		n.SetRefs(refs)
	}
	switch x := n.Ext().(type) {
	case *Type:
		c := *x
		c.Attrs = mapPairs(x.Attrs, m)
		n.SetExt(&c)
	case *ClassInstance:
		c := *x
		c.Class = m(x.Class)
		c.Attrs = mapPairs(x.Attrs, m)
		n.SetExt(&c)
	}
	return n
}

func mapPairs(ps []Pair, m func(NodeID) NodeID) []Pair {
	if ps == nil {
		return nil
	}
	out := make([]Pair, len(ps))
	for i, p := range ps {
		out[i] = Pair{m(p.Key), m(p.Value)}
	}
	return out
}

// packedRoot decodes the packed list n straight into v when v is a slice
// of a plain integer type and every item is an int that fits it, or a
// []float64 (of any named float64 type) and the items are floats: the
// round trip of a Go slice through FromGo and ToGo. It reports false,
// having stored nothing, otherwise; the caller then decodes the unpacked
// graph, so results and errors are the general path's.
func (d *decoder) packedRoot(n *Node, v reflect.Value) bool {
	t := v.Type()
	if ti := d.info(t); t.Kind() != reflect.Slice || ti.decoder || ti.special != notSpecial || !d.fastItems(t.Elem(), 0) {
		// A slice type that decodes itself, or one with its own meaning
		// (json.RawMessage is the list's JSON text, not its items as
		// bytes): the general path.
		return false
	}
	op := d.info(t.Elem()).op
	if fs := n.Floats(); fs != nil {
		if op != opF64 {
			return false // float32 and integers: the general path's rules
		}
		s := reflect.MakeSlice(t, len(fs), len(fs))
		copy(unsafe.Slice((*float64)(s.UnsafePointer()), len(fs)), fs)
		v.Set(s)
		return true
	}
	xs := n.Ints()
	if xs == nil {
		return false
	}
	s := reflect.MakeSlice(t, len(xs), len(xs))
	p := s.UnsafePointer()
	var ok bool
	switch op {
	case opI64:
		copy(unsafe.Slice((*int64)(p), len(xs)), xs)
		ok = true
	case opI32:
		ok = narrowSigned(unsafe.Slice((*int32)(p), len(xs)), xs)
	case opI16:
		ok = narrowSigned(unsafe.Slice((*int16)(p), len(xs)), xs)
	case opI8:
		ok = narrowSigned(unsafe.Slice((*int8)(p), len(xs)), xs)
	case opU64:
		ok = narrowUnsigned(unsafe.Slice((*uint64)(p), len(xs)), xs)
	case opU32:
		ok = narrowUnsigned(unsafe.Slice((*uint32)(p), len(xs)), xs)
	case opU16:
		ok = narrowUnsigned(unsafe.Slice((*uint16)(p), len(xs)), xs)
	case opU8:
		ok = narrowUnsigned(unsafe.Slice((*uint8)(p), len(xs)), xs)
	}
	if ok {
		v.Set(s)
	}
	return ok
}

// narrowSigned stores xs into dst, reporting false at the first item out
// of T's range.
func narrowSigned[T int8 | int16 | int32](dst []T, xs []int64) bool {
	for i, x := range xs {
		if int64(T(x)) != x {
			return false
		}
		dst[i] = T(x)
	}
	return true
}

// narrowUnsigned is narrowSigned for unsigned types.
func narrowUnsigned[T uint8 | uint16 | uint32 | uint64](dst []T, xs []int64) bool {
	for i, x := range xs {
		if x < 0 || uint64(T(x)) != uint64(x) {
			return false
		}
		dst[i] = T(x)
	}
	return true
}

// packedEqual reports whether n and o hold the same packed items, or
// neither holds any (floats compared by their bits, so a NaN equals
// itself, as Equal compares float nodes).
func (n *Node) packedEqual(o *Node) bool {
	if !n.Packed() && !o.Packed() {
		return true
	}
	if n.pk != o.pk {
		return false
	}
	switch n.pk {
	case pkInts:
		return slices.Equal(n.Ints(), o.Ints())
	case pkFloats:
		a, b := n.Floats(), o.Floats()
		return len(a) == len(b) && slices.Equal(unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(a))), len(a)),
			unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)))
	}
	return true
}
