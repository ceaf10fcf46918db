package codecv4

import (
	"math"
	"math/big"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/value"
)

// The encoder makes two passes: the first computes the size of every
// message (caching the payload size of each arena node), the second writes
// into a buffer grown once to the exact size. Fields go out in ascending
// field-number order, with implicit-presence zeros left out and oneof arms
// always written, which is the byte form upstream's peers produce.

// encoder caches the node sizes of the message's arena between the passes.
type encoder struct {
	inner    []uint32 // payload size of each arena node with a message arm
	arenaLen int
	sized    bool
	// ids, when the message's graph holds packed items, maps each node to
	// its id in the unpacked arena (see unpack.go); nil otherwise. view
	// then holds, from the size pass for the write pass, each node with
	// its references so mapped (packed nodes are written from the graph).
	ids  []value.NodeID
	view []value.Node
	// ck is the message's check pass, here so that it does not escape
	// to the heap on its own as a core.Checker.
	ck checker
}

// encoders pools the encoders, with their size tables: an encoder is the
// message layer's core.Values, so it lives on the heap.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

func newEncoder() *encoder { return encoders.Get().(*encoder) }

// release returns e to the pool, keeping its size table's room.
func (e *encoder) release() {
	*e = encoder{inner: e.inner[:0]}
	encoders.Put(e)
}

// ---- ids and pairs ----

func pairLen(k, v uint32) int { return leaf.SizeU(1, uint64(k)) + leaf.SizeU(2, uint64(v)) }

func apPair(b []byte, k, v uint32) []byte {
	b = append(b, 0x0a)
	b = protowire.AppendVarint(b, uint64(pairLen(k, v)))
	b = leaf.AppendU(b, 1, uint64(k))
	return leaf.AppendU(b, 2, uint64(v))
}

// pairsLen is the payload size of a NodePairs message.
func pairsLen(ps []value.Pair) int {
	n := 0
	for _, p := range ps {
		n += 1 + protowire.SizeBytes(pairLen(p.Key, p.Value))
	}
	return n
}

func apPairs(b []byte, ps []value.Pair) []byte {
	for _, p := range ps {
		b = apPair(b, p.Key, p.Value)
	}
	return b
}

// dictLen is pairsLen for a dict's interleaved refs.
func dictLen(refs []uint32) int {
	n := 0
	for i := 0; i+1 < len(refs); i += 2 {
		n += 1 + protowire.SizeBytes(pairLen(refs[i], refs[i+1]))
	}
	return n
}

// ---- arena ----

// arenaSize returns the payload size of g's Arena message, computing (and
// caching) each node's size on the first call.
func (e *encoder) arenaSize(g *value.Graph) int {
	if e.sized {
		return e.arenaLen
	}
	e.sized = true
	n := e.arenaNodes(g)
	total := 0
	if n > 0 {
		total = 1 + protowire.SizeVarint(uint64(n))
	}
	inner := e.inner
	if cap(inner) < n {
		inner = make([]uint32, n)
	}
	inner = inner[:len(g.Nodes)]
	e.inner = inner
	if e.ids != nil {
		e.view = make([]value.Node, len(g.Nodes))
	}
	for i := range g.Nodes {
		nd := &g.Nodes[i]
		if e.ids != nil {
			if nd.Packed() {
				// The items' int or float nodes, then the list over them.
				for _, x := range nd.Ints() {
					c := 1 + protowire.SizeVarint(protowire.EncodeZigZag(x))
					total += 2 + c // c < 128
				}
				total += 11 * len(nd.Floats())
				k := packedLen(nd)
				in := idRangeSize(e.ids[i]-uint32(k), k)
				c := leaf.SizeM(protowire.Number(nd.Kind), in)
				inner[i] = uint32(in)
				total += 1 + protowire.SizeVarint(uint64(c)) + c
				continue
			}
			e.view[i] = *nd
			if len(nd.Refs()) > 0 || nd.Kind == value.KindType || nd.Kind == value.KindClassInstance {
				e.view[i] = nd.MapRefs(func(r value.NodeID) value.NodeID { return value.MapID(e.ids, r) })
			}
			nd = &e.view[i]
		}
		c, in := nodeSize(nd)
		if in > math.MaxUint32 || c > math.MaxInt32 {
			// Far above any frame cap; the caller's size check fails.
			c = math.MaxInt32
		}
		inner[i] = uint32(in)
		total += 1 + protowire.SizeVarint(uint64(c)) + c
	}
	e.arenaLen = total
	return total
}

// szArena is the size of an Arena field: absent when the graph is empty.
func (e *encoder) szArena(num protowire.Number, g *value.Graph) int {
	if len(g.Nodes) == 0 {
		return 0
	}
	return leaf.SizeM(num, e.arenaSize(g))
}

func (e *encoder) apArena(b []byte, num protowire.Number, g *value.Graph) []byte {
	if len(g.Nodes) == 0 {
		return b
	}
	b = leaf.AppendM(b, num, e.arenaSize(g))
	return e.apArenaBody(b, g)
}

// apArenaBody writes the payload of a non-empty Arena message.
func (e *encoder) apArenaBody(b []byte, g *value.Graph) []byte {
	b = append(b, 0x08)
	b = protowire.AppendVarint(b, uint64(e.arenaNodes(g)))
	inner := e.inner
	for i := range g.Nodes {
		nd := &g.Nodes[i]
		if e.ids != nil {
			if nd.Packed() {
				for _, x := range nd.Ints() {
					b = appendIntNode(b, x)
				}
				for _, x := range nd.Floats() {
					b = appendFloatNode(b, math.Float64bits(x))
				}
				k := packedLen(nd)
				in := int(inner[i])
				b = leaf.AppendM(b, 2, leaf.SizeM(protowire.Number(nd.Kind), in))
				b = leaf.AppendM(b, protowire.Number(nd.Kind), in)
				b = appendIDRange(b, e.ids[i]-uint32(k), k)
				continue
			}
			nd = &e.view[i]
		}
		b = appendNode(b, nd, int(inner[i]))
	}
	return b
}

// arenaNodes is the node count of g's arena: with packed items, that of
// the unpacked graph.
func (e *encoder) arenaNodes(g *value.Graph) int {
	if len(e.ids) > 0 {
		return int(e.ids[len(e.ids)-1]) + 1
	}
	return len(g.Nodes)
}

// packedLen is the number of packed items of n.
func packedLen(n *value.Node) int { return len(n.Ints()) + len(n.Floats()) }

// idRangeLen is the size of the n consecutive ids from base as packed
// varints.
func idRangeLen(base uint32, n int) int {
	p := 0
	for i := range n {
		p += protowire.SizeVarint(uint64(base) + uint64(i))
	}
	return p
}

// idRangeSize is the payload size of an Indexes message listing the n
// consecutive ids from base: its packed items field.
func idRangeSize(base uint32, n int) int { return leaf.SizeM(1, idRangeLen(base, n)) }

// appendIDRange writes the Indexes payload idRangeSize measures.
func appendIDRange(b []byte, base uint32, n int) []byte {
	b = leaf.AppendM(b, 1, idRangeLen(base, n))
	for i := range n {
		b = protowire.AppendVarint(b, uint64(base)+uint64(i))
	}
	return b
}

// appendFloatNode writes an Arena.nodes field holding the float of the
// given bits.
func appendFloatNode(b []byte, bits uint64) []byte {
	b = append(b, 0x12, 0x09, 0x39)
	return protowire.AppendFixed64(b, bits)
}

// appendIntNode writes an Arena.nodes field holding the int x.
func appendIntNode(b []byte, x int64) []byte {
	z := protowire.EncodeZigZag(x)
	if z < 0x80 {
		return append(b, 0x12, 0x02, 0x28, byte(z))
	}
	b = append(b, 0x12, byte(1+protowire.SizeVarint(z)), 0x28)
	return protowire.AppendVarint(b, z)
}

func bigMagLen(x *big.Int) int {
	if n := (x.BitLen() + 7) / 8; n > 0 {
		return n
	}
	return 1 // zero is sent as one 00 byte
}

func bigLen(x *big.Int) int {
	n := 1 + protowire.SizeBytes(bigMagLen(x))
	if x.Sign() < 0 {
		n += 2
	}
	return n
}

// nodeSize returns the size of a MontyNode message's payload and, for
// message arms, the size of the arm's own payload.
func nodeSize(n *value.Node) (content, inner int) {
	k := protowire.Number(n.Kind)
	switch n.Kind {
	case value.KindEllipsis, value.KindNone, value.KindNotImplemented, value.KindBool:
		return 2, 0
	case value.KindInt:
		return 1 + protowire.SizeVarint(protowire.EncodeZigZag(int64(n.Num))), 0
	case value.KindFloat:
		return 9, 0
	case value.KindStr, value.KindBuiltinFunction, value.KindPath, value.KindRepr, value.KindCycle:
		return leaf.SizeM(k, len(n.Text())), 0
	case value.KindBytes:
		return leaf.SizeM(k, len(n.Bytes())), 0
	}
	inner = payloadSize(n)
	return leaf.SizeM(k, inner), inner
}

func payloadSize(n *value.Node) int {
	switch n.Kind {
	case value.KindBigInt:
		return bigLen(n.BigInt())
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		return leaf.SizePacked(1, n.Refs())
	case value.KindNamedTuple:
		t := n.Ext().(*value.NamedTuple)
		s := leaf.SizeS(1, len(t.TypeName))
		for _, f := range t.FieldNames {
			s += leaf.SizeM(2, len(f))
		}
		return s + leaf.SizePacked(3, n.Refs())
	case value.KindDict:
		return dictLen(n.Refs())
	case value.KindDate:
		return leaf.DateSize(n.Ext().(*value.Date))
	case value.KindTime:
		return leaf.TimeSize(n.Ext().(*value.Time))
	case value.KindDateTime:
		return leaf.DateTimeSize(n.Ext().(*value.DateTime))
	case value.KindTimeDelta:
		return leaf.TimeDeltaSize(n.Ext().(*value.TimeDelta))
	case value.KindTimeZone:
		return leaf.TimeZoneSize(n.Ext().(*value.TimeZone))
	case value.KindException:
		return leaf.ExceptionSize(n.Ext().(*value.Exception))
	case value.KindType:
		x := n.Ext().(*value.Type)
		s := leaf.SizeS(1, len(x.Name)) + 2
		if x.Origin == value.OriginBuiltin {
			return s
		}
		s += leaf.UUIDFieldSize + leaf.SizeBool(4, x.IsDataclass)
		if len(x.Attrs) > 0 {
			s += leaf.SizeM(5, pairsLen(x.Attrs))
		}
		return s
	case value.KindClassInstance:
		x := n.Ext().(*value.ClassInstance)
		return leaf.SizeU(1, uint64(x.Class)) + leaf.UUIDFieldSize + leaf.SizeM(3, pairsLen(x.Attrs))
	case value.KindFunction:
		return leaf.FunctionSize(n.Ext().(*value.Function))
	case value.KindFileHandle:
		return leaf.FileHandleSize(n.Ext().(*value.FileHandle))
	}
	return 0
}

// appendNode writes one Arena.nodes field; inner is the node's cached arm
// payload size.
func appendNode(b []byte, n *value.Node, inner int) []byte {
	k := protowire.Number(n.Kind)
	switch n.Kind {
	case value.KindEllipsis, value.KindNone, value.KindNotImplemented:
		return append(b, 0x12, 0x02, byte(k<<3|2), 0)
	case value.KindBool:
		return append(b, 0x12, 0x02, 0x20, byte(n.Num))
	case value.KindInt:
		// appendIntNode, by hand: it is too large to inline.
		z := protowire.EncodeZigZag(int64(n.Num))
		if z < 0x80 {
			return append(b, 0x12, 0x02, 0x28, byte(z))
		}
		b = append(b, 0x12, byte(1+protowire.SizeVarint(z)), 0x28)
		return protowire.AppendVarint(b, z)
	case value.KindFloat:
		return appendFloatNode(b, n.Num)
	case value.KindStr, value.KindBuiltinFunction, value.KindPath, value.KindRepr, value.KindCycle:
		b = leaf.AppendM(b, 2, leaf.SizeM(k, len(n.Text())))
		return leaf.AppendSA(b, k, n.Text())
	case value.KindBytes:
		v := n.Bytes()
		b = leaf.AppendM(b, 2, leaf.SizeM(k, len(v)))
		return leaf.AppendBytesA(b, k, v)
	}
	b = leaf.AppendM(b, 2, leaf.SizeM(k, inner))
	b = leaf.AppendM(b, k, inner)
	switch n.Kind {
	case value.KindBigInt:
		x := n.BigInt()
		if x.Sign() < 0 {
			b = append(b, 0x08, 0x01)
		}
		ml := bigMagLen(x)
		b = leaf.AppendM(b, 2, ml)
		b = slices.Grow(b, ml)
		off := len(b)
		b = b[:off+ml]
		x.FillBytes(b[off:])
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		b = leaf.AppendPacked(b, 1, n.Refs())
	case value.KindNamedTuple:
		t := n.Ext().(*value.NamedTuple)
		b = leaf.AppendS(b, 1, t.TypeName)
		for _, f := range t.FieldNames {
			b = leaf.AppendSA(b, 2, f)
		}
		b = leaf.AppendPacked(b, 3, n.Refs())
	case value.KindDict:
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			b = apPair(b, n.Refs()[i], n.Refs()[i+1])
		}
	case value.KindDate:
		b = leaf.AppendDate(b, n.Ext().(*value.Date))
	case value.KindTime:
		b = leaf.AppendTime(b, n.Ext().(*value.Time))
	case value.KindDateTime:
		b = leaf.AppendDateTime(b, n.Ext().(*value.DateTime))
	case value.KindTimeDelta:
		b = leaf.AppendTimeDelta(b, n.Ext().(*value.TimeDelta))
	case value.KindTimeZone:
		b = leaf.AppendTimeZone(b, n.Ext().(*value.TimeZone))
	case value.KindException:
		b = leaf.AppendException(b, n.Ext().(*value.Exception))
	case value.KindType:
		x := n.Ext().(*value.Type)
		b = leaf.AppendS(b, 1, x.Name)
		if x.Origin == value.OriginBuiltin {
			return append(b, 0x18, 0x01)
		}
		b = leaf.AppendUUID(b, 2, &x.ID)
		b = append(b, 0x18, byte(x.Origin))
		b = leaf.AppendBool(b, 4, x.IsDataclass)
		if len(x.Attrs) > 0 {
			b = leaf.AppendM(b, 5, pairsLen(x.Attrs))
			b = apPairs(b, x.Attrs)
		}
	case value.KindClassInstance:
		x := n.Ext().(*value.ClassInstance)
		b = leaf.AppendU(b, 1, uint64(x.Class))
		b = leaf.AppendUUID(b, 2, &x.InstanceID)
		b = leaf.AppendM(b, 3, pairsLen(x.Attrs))
		b = apPairs(b, x.Attrs)
	case value.KindFunction:
		b = leaf.AppendFunction(b, n.Ext().(*value.Function))
	case value.KindFileHandle:
		b = leaf.AppendFileHandle(b, n.Ext().(*value.FileHandle))
	}
	return b
}
