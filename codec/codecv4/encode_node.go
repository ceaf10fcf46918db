package codecv4

import (
	"math"
	"math/big"
	"slices"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/value"
)

// The encoder makes two passes: the first computes the size of every
// message (caching the payload size of each arena node), the second writes
// into a buffer grown once to the exact size. Fields go out in ascending
// field-number order, with implicit-presence zeros left out and oneof arms
// always written, which is the byte form upstream's peers produce.

// encoder caches the node sizes of the message's arena between the passes.
type encoder struct {
	inner    *[]uint32 // payload size of each arena node with a message arm
	arenaLen int
	sized    bool
}

var innerPool = sync.Pool{New: func() any { return new([]uint32) }}

func (e *encoder) release() {
	if e.inner != nil {
		innerPool.Put(e.inner)
		e.inner = nil
	}
}

// Sizes of fields with small field numbers (1..15, one-byte keys).

func sizeVarint(v uint64) int { return protowire.SizeVarint(v) }

func szTag(num protowire.Number) int { return protowire.SizeTag(num) }

// szU is the size of an implicit-presence varint field (absent at 0).
func szU(num protowire.Number, v uint64) int {
	if v == 0 {
		return 0
	}
	return szTag(num) + sizeVarint(v)
}

// szI32 is szU for an int32 field (negative values take ten bytes).
func szI32(num protowire.Number, v int32) int { return szU(num, uint64(int64(v))) }

// szS is the size of an implicit-presence string or bytes field.
func szS(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return szTag(num) + protowire.SizeBytes(n)
}

// szM is the size of a field that is always written (a message, a oneof
// arm, an optional or a repeated element) with an n-byte payload.
func szM(num protowire.Number, n int) int { return szTag(num) + protowire.SizeBytes(n) }

func szBool(num protowire.Number, v bool) int {
	if !v {
		return 0
	}
	return szTag(num) + 1
}

func szOptS(num protowire.Number, p *string) int {
	if p == nil {
		return 0
	}
	return szM(num, len(*p))
}

func szOptU(num protowire.Number, p *uint64) int {
	if p == nil {
		return 0
	}
	return szTag(num) + sizeVarint(*p)
}

func szOptI32(num protowire.Number, p *int32) int {
	if p == nil {
		return 0
	}
	return szTag(num) + sizeVarint(uint64(int64(*p)))
}

func szOptU32(num protowire.Number, p *uint32) int {
	if p == nil {
		return 0
	}
	return szTag(num) + sizeVarint(uint64(*p))
}

// Writers matching the sizes above.

func apTag(b []byte, num protowire.Number, wt protowire.Type) []byte {
	return protowire.AppendVarint(b, protowire.EncodeTag(num, wt))
}

func apU(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	return protowire.AppendVarint(apTag(b, num, protowire.VarintType), v)
}

func apUA(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(apTag(b, num, protowire.VarintType), v)
}

func apI32(b []byte, num protowire.Number, v int32) []byte { return apU(b, num, uint64(int64(v))) }

func apS(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return apSA(b, num, s)
}

func apSA(b []byte, num protowire.Number, s string) []byte {
	b = apTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(s)))
	return append(b, s...)
}

func apBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	return apBytesA(b, num, v)
}

func apBytesA(b []byte, num protowire.Number, v []byte) []byte {
	b = apTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(v)))
	return append(b, v...)
}

// apM writes the key and length of a message field with an n-byte payload.
func apM(b []byte, num protowire.Number, n int) []byte {
	b = apTag(b, num, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(n))
}

func apBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	return append(apTag(b, num, protowire.VarintType), 1)
}

func apOptS(b []byte, num protowire.Number, p *string) []byte {
	if p == nil {
		return b
	}
	return apSA(b, num, *p)
}

func apOptU(b []byte, num protowire.Number, p *uint64) []byte {
	if p == nil {
		return b
	}
	return apUA(b, num, *p)
}

func apOptI32(b []byte, num protowire.Number, p *int32) []byte {
	if p == nil {
		return b
	}
	return apUA(b, num, uint64(int64(*p)))
}

func apOptU32(b []byte, num protowire.Number, p *uint32) []byte {
	if p == nil {
		return b
	}
	return apUA(b, num, uint64(*p))
}

// ---- ids and pairs ----

func packedLen(ids []uint32) int {
	n := 0
	for _, id := range ids {
		switch {
		case id < 1<<7:
			n++
		case id < 1<<14:
			n += 2
		case id < 1<<21:
			n += 3
		case id < 1<<28:
			n += 4
		default:
			n += 5
		}
	}
	return n
}

// szIDs is the size of a packed id field (absent when empty).
func szIDs(num protowire.Number, ids []uint32) int {
	if len(ids) == 0 {
		return 0
	}
	return szM(num, packedLen(ids))
}

func apIDs(b []byte, num protowire.Number, ids []uint32) []byte {
	if len(ids) == 0 {
		return b
	}
	b = apM(b, num, packedLen(ids))
	for _, id := range ids {
		if id < 0x80 {
			b = append(b, byte(id))
		} else {
			b = protowire.AppendVarint(b, uint64(id))
		}
	}
	return b
}

func pairLen(k, v uint32) int { return szU(1, uint64(k)) + szU(2, uint64(v)) }

func apPair(b []byte, k, v uint32) []byte {
	b = append(b, 0x0a)
	b = protowire.AppendVarint(b, uint64(pairLen(k, v)))
	b = apU(b, 1, uint64(k))
	return apU(b, 2, uint64(v))
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

// uuidFieldLen is the size of a Uuid message field holding 16 bytes.
const uuidFieldLen = 1 + 1 + 18

func apUUID(b []byte, num protowire.Number, u *value.UUID) []byte {
	b = apM(b, num, 18)
	b = append(b, 0x0a, 0x10)
	return append(b, u[:]...)
}

// ---- arena ----

// arenaSize returns the payload size of g's Arena message, computing (and
// caching) each node's size on the first call.
func (e *encoder) arenaSize(g *value.Graph) int {
	if e.sized {
		return e.arenaLen
	}
	e.sized = true
	n := len(g.Nodes)
	total := 0
	if n > 0 {
		total = 1 + sizeVarint(uint64(n))
	}
	e.inner = innerPool.Get().(*[]uint32)
	inner := *e.inner
	if cap(inner) < n {
		inner = make([]uint32, n)
	}
	inner = inner[:n]
	*e.inner = inner
	for i := range g.Nodes {
		c, in := nodeSize(&g.Nodes[i])
		if in > math.MaxUint32 || c > math.MaxInt32 {
			// Far above any frame cap; the caller's size check fails.
			c = math.MaxInt32
		}
		inner[i] = uint32(in)
		total += 1 + sizeVarint(uint64(c)) + c
	}
	e.arenaLen = total
	return total
}

// szArena is the size of an Arena field: absent when the graph is empty.
func (e *encoder) szArena(num protowire.Number, g *value.Graph) int {
	if len(g.Nodes) == 0 {
		return 0
	}
	return szM(num, e.arenaSize(g))
}

func (e *encoder) apArena(b []byte, num protowire.Number, g *value.Graph) []byte {
	if len(g.Nodes) == 0 {
		return b
	}
	b = apM(b, num, e.arenaSize(g))
	return e.apArenaBody(b, g)
}

// apArenaBody writes the payload of a non-empty Arena message.
func (e *encoder) apArenaBody(b []byte, g *value.Graph) []byte {
	b = append(b, 0x08)
	b = protowire.AppendVarint(b, uint64(len(g.Nodes)))
	inner := *e.inner
	for i := range g.Nodes {
		b = appendNode(b, &g.Nodes[i], int(inner[i]))
	}
	return b
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
		return 1 + sizeVarint(protowire.EncodeZigZag(int64(n.Num))), 0
	case value.KindFloat:
		return 9, 0
	case value.KindStr, value.KindBuiltinFunction, value.KindPath, value.KindRepr, value.KindCycle:
		return szM(k, len(n.Text())), 0
	case value.KindBytes:
		return szM(k, len(n.Bytes())), 0
	}
	inner = payloadSize(n)
	return szM(k, inner), inner
}

func payloadSize(n *value.Node) int {
	switch n.Kind {
	case value.KindBigInt:
		return bigLen(n.BigInt())
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		return szIDs(1, n.Refs())
	case value.KindNamedTuple:
		t := n.Ext().(*value.NamedTuple)
		s := szS(1, len(t.TypeName))
		for _, f := range t.FieldNames {
			s += szM(2, len(f))
		}
		return s + szIDs(3, n.Refs())
	case value.KindDict:
		return dictLen(n.Refs())
	case value.KindDate:
		x := n.Ext().(*value.Date)
		return szI32(1, x.Year) + szU(2, uint64(x.Month)) + szU(3, uint64(x.Day))
	case value.KindTime:
		x := n.Ext().(*value.Time)
		return szU(1, uint64(x.Hour)) + szU(2, uint64(x.Minute)) + szU(3, uint64(x.Second)) +
			szU(4, uint64(x.Microsecond)) + szOptI32(5, x.Offset) + szOptS(6, x.TZName) + szU(7, uint64(x.Fold))
	case value.KindDateTime:
		x := n.Ext().(*value.DateTime)
		return szI32(1, x.Year) + szU(2, uint64(x.Month)) + szU(3, uint64(x.Day)) +
			szU(4, uint64(x.Hour)) + szU(5, uint64(x.Minute)) + szU(6, uint64(x.Second)) +
			szU(7, uint64(x.Microsecond)) + szOptI32(8, x.Offset) + szOptS(9, x.TZName)
	case value.KindTimeDelta:
		x := n.Ext().(*value.TimeDelta)
		return szI32(1, x.Days) + szI32(2, x.Seconds) + szI32(3, x.Microseconds)
	case value.KindTimeZone:
		return tzLen(n.Ext().(*value.TimeZone))
	case value.KindException:
		x := n.Ext().(*value.Exception)
		return szS(1, len(x.Type)) + szOptS(2, x.Arg)
	case value.KindType:
		x := n.Ext().(*value.Type)
		s := szS(1, len(x.Name)) + 2
		if x.Origin == value.OriginBuiltin {
			return s
		}
		s += uuidFieldLen + szBool(4, x.IsDataclass)
		if len(x.Attrs) > 0 {
			s += szM(5, pairsLen(x.Attrs))
		}
		return s
	case value.KindClassInstance:
		x := n.Ext().(*value.ClassInstance)
		return szU(1, uint64(x.Class)) + uuidFieldLen + szM(3, pairsLen(x.Attrs))
	case value.KindFunction:
		x := n.Ext().(*value.Function)
		return szS(1, len(x.Name)) + szOptS(2, x.Docstring)
	case value.KindFileHandle:
		x := n.Ext().(*value.FileHandle)
		return szS(1, len(x.Path)) + szS(2, len(fileMode(x.Mode))) + szU(3, x.Position)
	}
	return 0
}

// fileMode is the canonical spelling of a (checked) mode.
func fileMode(m string) string {
	if c, err := value.NormalizeFileMode(m); err == nil {
		return c
	}
	return m
}

func tzLen(x *value.TimeZone) int { return szI32(1, x.Offset) + szOptS(2, x.Name) }

func apTZ(b []byte, x *value.TimeZone) []byte {
	b = apI32(b, 1, x.Offset)
	return apOptS(b, 2, x.Name)
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
		z := protowire.EncodeZigZag(int64(n.Num))
		if z < 0x80 {
			return append(b, 0x12, 0x02, 0x28, byte(z))
		}
		b = append(b, 0x12, byte(1+sizeVarint(z)), 0x28)
		return protowire.AppendVarint(b, z)
	case value.KindFloat:
		b = append(b, 0x12, 0x09, 0x39)
		return protowire.AppendFixed64(b, n.Num)
	case value.KindStr, value.KindBuiltinFunction, value.KindPath, value.KindRepr, value.KindCycle:
		b = apM(b, 2, szM(k, len(n.Text())))
		return apSA(b, k, n.Text())
	case value.KindBytes:
		v := n.Bytes()
		b = apM(b, 2, szM(k, len(v)))
		return apBytesA(b, k, v)
	}
	b = apM(b, 2, szM(k, inner))
	b = apM(b, k, inner)
	switch n.Kind {
	case value.KindBigInt:
		x := n.BigInt()
		if x.Sign() < 0 {
			b = append(b, 0x08, 0x01)
		}
		ml := bigMagLen(x)
		b = apM(b, 2, ml)
		b = slices.Grow(b, ml)
		off := len(b)
		b = b[:off+ml]
		x.FillBytes(b[off:])
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		b = apIDs(b, 1, n.Refs())
	case value.KindNamedTuple:
		t := n.Ext().(*value.NamedTuple)
		b = apS(b, 1, t.TypeName)
		for _, f := range t.FieldNames {
			b = apSA(b, 2, f)
		}
		b = apIDs(b, 3, n.Refs())
	case value.KindDict:
		for i := 0; i+1 < len(n.Refs()); i += 2 {
			b = apPair(b, n.Refs()[i], n.Refs()[i+1])
		}
	case value.KindDate:
		x := n.Ext().(*value.Date)
		b = apI32(b, 1, x.Year)
		b = apU(b, 2, uint64(x.Month))
		b = apU(b, 3, uint64(x.Day))
	case value.KindTime:
		x := n.Ext().(*value.Time)
		b = apU(b, 1, uint64(x.Hour))
		b = apU(b, 2, uint64(x.Minute))
		b = apU(b, 3, uint64(x.Second))
		b = apU(b, 4, uint64(x.Microsecond))
		b = apOptI32(b, 5, x.Offset)
		b = apOptS(b, 6, x.TZName)
		b = apU(b, 7, uint64(x.Fold))
	case value.KindDateTime:
		x := n.Ext().(*value.DateTime)
		b = apI32(b, 1, x.Year)
		b = apU(b, 2, uint64(x.Month))
		b = apU(b, 3, uint64(x.Day))
		b = apU(b, 4, uint64(x.Hour))
		b = apU(b, 5, uint64(x.Minute))
		b = apU(b, 6, uint64(x.Second))
		b = apU(b, 7, uint64(x.Microsecond))
		b = apOptI32(b, 8, x.Offset)
		b = apOptS(b, 9, x.TZName)
	case value.KindTimeDelta:
		x := n.Ext().(*value.TimeDelta)
		b = apI32(b, 1, x.Days)
		b = apI32(b, 2, x.Seconds)
		b = apI32(b, 3, x.Microseconds)
	case value.KindTimeZone:
		b = apTZ(b, n.Ext().(*value.TimeZone))
	case value.KindException:
		x := n.Ext().(*value.Exception)
		b = apS(b, 1, x.Type)
		b = apOptS(b, 2, x.Arg)
	case value.KindType:
		x := n.Ext().(*value.Type)
		b = apS(b, 1, x.Name)
		if x.Origin == value.OriginBuiltin {
			return append(b, 0x18, 0x01)
		}
		b = apUUID(b, 2, &x.ID)
		b = append(b, 0x18, byte(x.Origin))
		b = apBool(b, 4, x.IsDataclass)
		if len(x.Attrs) > 0 {
			b = apM(b, 5, pairsLen(x.Attrs))
			b = apPairs(b, x.Attrs)
		}
	case value.KindClassInstance:
		x := n.Ext().(*value.ClassInstance)
		b = apU(b, 1, uint64(x.Class))
		b = apUUID(b, 2, &x.InstanceID)
		b = apM(b, 3, pairsLen(x.Attrs))
		b = apPairs(b, x.Attrs)
	case value.KindFunction:
		x := n.Ext().(*value.Function)
		b = apS(b, 1, x.Name)
		b = apOptS(b, 2, x.Docstring)
	case value.KindFileHandle:
		x := n.Ext().(*value.FileHandle)
		b = apS(b, 1, x.Path)
		b = apS(b, 2, fileMode(x.Mode))
		b = apU(b, 3, x.Position)
	}
	return b
}
