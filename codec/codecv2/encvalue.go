package codecv2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// venc encodes the nodes of one value graph as MontyObject trees.
//
// Protocol 2 has no sharing: a node referenced twice is written out twice.
// Before anything is written, one pass over the graph (children come before
// parents, so a single forward pass suffices) validates every node and
// records, per node, the length of its MontyObject body and how many
// protobuf message levels it spans. Lengths saturate just above the frame
// cap, so a graph whose expansion would be astronomically large (a ladder
// of doubling lists) is refused in linear time instead of being expanded.
type venc struct {
	g   *value.Graph
	pl  []int64 // arm payload length (see body)
	dep []uint8 // message levels of the node's MontyObject, itself included
	max int64   // saturation point: one more than the frame cap

	// Room for the tables of a small graph (a call's arguments, a
	// returned value), which then cost no allocation of their own.
	smallPL  [4]int64
	smallDep [4]uint8
}

func sizeVarint(v uint64) int64 { return int64(protowire.SizeVarint(v)) }

// sizeLD is the size of a length-delimited field with a payload of n bytes
// and a one-byte key (every field number used here is below 16).
func sizeLD(n int64) int64 { return 1 + sizeVarint(uint64(n)) + n }

func sizeStr(s string) int64 {
	if s == "" {
		return 0
	}
	return sizeLD(int64(len(s)))
}

// isLD reports whether a MontyObject arm is length-delimited.
func isLD(k value.Kind) bool {
	switch k {
	case value.KindBool, value.KindInt, value.KindFloat:
		return false
	}
	return true
}

// body returns the length of node i's MontyObject body: the arm's key,
// the length prefix of a length-delimited arm, and the payload.
func (e *venc) body(i value.NodeID) int64 {
	n := e.pl[i]
	k := e.g.Nodes[i].Kind
	if k == value.KindBigInt && e.smallBig(i) {
		k = value.KindInt
	}
	key := int64(protowire.SizeTag(protowire.Number(k)))
	if !isLD(k) {
		return key + n
	}
	return key + sizeVarint(uint64(n)) + n
}

func (e *venc) sat(n int64) int64 {
	if n > e.max {
		return e.max
	}
	return n
}

func encErr(format string, args ...any) *codec.EncodeError {
	return &codec.EncodeError{Msg: "codecv2: " + fmt.Sprintf(format, args...)}
}

// capErr reports an encoding over the frame cap; it wraps
// frame.ErrTooLarge (the exact length is not known: sizing stops counting
// just past the cap).
func capErr(format string, max int) *codec.EncodeError {
	return &codec.EncodeError{Msg: "codecv2: " + fmt.Sprintf(format, max), Err: frame.ErrTooLarge}
}

func nodeErr(i value.NodeID, k value.Kind, err error) *codec.EncodeError {
	return &codec.EncodeError{Msg: fmt.Sprintf("codecv2: value node %d (%s)", i, k), Err: err}
}

// nodeText fails on a string of node i that is not UTF-8 (every decoder
// refuses one).
func nodeText(i value.NodeID, n *value.Node) error {
	if field, bad := leaf.NodeBadText(n); bad {
		return nodeErr(i, n.Kind, fmt.Errorf("%s is not valid UTF-8", field))
	}
	return nil
}

// smallBig reports whether a KindBigInt node fits in an int64; it is then
// written as a plain int, as the worker writes one.
func (e *venc) smallBig(i value.NodeID) bool {
	b := e.g.Nodes[i].BigInt()
	return b != nil && b.IsInt64()
}

func bigPayload(b *big.Int) int64 {
	n := int64((b.BitLen() + 7) / 8)
	var s int64
	if b.Sign() < 0 {
		s = 2
	}
	if n > 0 {
		s += sizeLD(n)
	}
	return s
}

// levels returns the message levels below a Dict of pairs: the Dict
// itself, plus a Pair and its deeper side when there are entries.
func (e *venc) pairLevels(ps []value.Pair, refs []value.NodeID) int {
	m := 0
	for _, p := range ps {
		m = max(m, int(e.dep[p.Key]), int(e.dep[p.Value]))
	}
	for _, r := range refs {
		m = max(m, int(e.dep[r]))
	}
	if len(ps) == 0 && len(refs) == 0 {
		return 1
	}
	return 2 + m
}

func (e *venc) pairsLen(ps []value.Pair) int64 {
	var n int64
	for _, p := range ps {
		n += sizeLD(e.sat(sizeLD(e.body(p.Key)) + sizeLD(e.body(p.Value))))
	}
	return n
}

// typeLen returns the length of a Type message and its message levels.
func (e *venc) typeLen(t *value.Type) (int64, int) {
	n := sizeStr(t.Name)
	lv := 0
	if t.Origin != value.OriginBuiltin {
		n += sizeLD(sizeLD(16))
		lv = 1
	}
	if t.Origin != 0 {
		n += 1 + sizeVarint(uint64(t.Origin))
	}
	if t.IsDataclass {
		n += 2
	}
	if t.Attrs != nil {
		n += sizeLD(e.sat(e.pairsLen(t.Attrs)))
		lv = max(lv, e.pairLevels(t.Attrs, nil))
	}
	return e.sat(n), 1 + lv
}

func (e *venc) checkRef(i, r value.NodeID) error {
	if r >= i {
		return nodeErr(i, e.g.Nodes[i].Kind, fmt.Errorf("references node %d, which is not below it", r))
	}
	return nil
}

func (e *venc) checkPairs(i value.NodeID, ps []value.Pair) error {
	for _, p := range ps {
		if err := e.checkRef(i, p.Key); err != nil {
			return err
		}
		if err := e.checkRef(i, p.Value); err != nil {
			return err
		}
	}
	return nil
}

// prepare validates every node of g and fills the size and depth tables.
func (e *venc) prepare(g *value.Graph, frameCap int) error {
	e.g = g
	e.max = int64(frameCap) + 1
	if n := len(g.Nodes); n <= len(e.smallPL) {
		e.pl, e.dep = e.smallPL[:n], e.smallDep[:n]
	} else {
		e.pl = make([]int64, n)
		e.dep = make([]uint8, n)
	}
	for idx := range g.Nodes {
		i := value.NodeID(idx)
		n := &g.Nodes[idx]
		if n.Kind == value.KindInt {
			// The commonest node: nothing to check, a varint to measure.
			e.pl[i] = sizeVarint(protowire.EncodeZigZag(n.Int()))
			e.dep[i] = 1
			continue
		}
		if n.Kind == 10 {
			return nodeErr(i, n.Kind, fmt.Errorf("protocol 2 has no uuid arm (MontyObject.kind 10)"))
		}
		if err := checkNode(n); err != nil {
			return nodeErr(i, n.Kind, err)
		}
		pl, dep, err := e.measure(i, n)
		if err != nil {
			return err
		}
		e.pl[i] = e.sat(pl)
		e.dep[i] = uint8(min(dep, 255))
	}
	return nil
}

// checkNode validates one node's payload. A Type is checked with the
// presence this encoder gives it on the wire: a class type always carries
// its id (an all-zero uuid is a valid id, which valuecheck.CheckLeaf would take
// for a missing one), and attrs are written whenever Attrs is non-nil.
func checkNode(n *value.Node) error {
	if n.Kind == value.KindType {
		if t, ok := n.Ext().(*value.Type); ok {
			return valuecheck.CheckType(t, t.Origin != value.OriginBuiltin || !t.ID.IsZero(), t.Attrs != nil)
		}
	}
	return valuecheck.CheckLeaf(*n)
}

func (e *venc) measure(i value.NodeID, n *value.Node) (int64, int, error) {
	var pl int64
	switch n.Kind {
	case value.KindEllipsis, value.KindNone, value.KindNotImplemented:
		return 0, 2, nil
	case value.KindBool:
		return 1, 1, nil
	case value.KindInt:
		return sizeVarint(protowire.EncodeZigZag(n.Int())), 1, nil
	case value.KindBigInt:
		b := n.BigInt()
		if b.IsInt64() {
			return sizeVarint(protowire.EncodeZigZag(b.Int64())), 1, nil
		}
		return bigPayload(b), 2, nil
	case value.KindFloat:
		return 8, 1, nil
	case value.KindStr, value.KindPath, value.KindBuiltinFunction, value.KindRepr:
		// Checked here rather than through nodeText: the hot case,
		// one call fewer (NodeBadText does not inline).
		if !utf8.ValidString(n.Text()) {
			return 0, 0, nodeErr(i, n.Kind, errors.New("text is not valid UTF-8"))
		}
		return int64(len(n.Text())), 1, nil
	case value.KindBytes:
		return int64(len(n.Bytes())), 1, nil
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet, value.KindNamedTuple:
		m := 0
		if xs := n.Ints(); len(xs) > 0 {
			// Packed int items: each is written as an int item is.
			for _, x := range xs {
				pl += 3 + sizeVarint(protowire.EncodeZigZag(x))
			}
			return e.sat(pl), 3, nil
		}
		if xs := n.Floats(); len(xs) > 0 {
			// Packed float items: 11 bytes each, as a float item.
			return e.sat(11 * int64(len(xs))), 3, nil
		}
		for _, r := range n.Refs() {
			if r < i && e.g.Nodes[r].Kind == value.KindInt {
				pl += 3 + e.pl[r] // sizeLD(e.body(r)) of an int; its depth is 1
				m = max(m, 1)
				continue
			}
			if err := e.checkRef(i, r); err != nil {
				return 0, 0, err
			}
			pl += sizeLD(e.body(r))
			m = max(m, int(e.dep[r]))
		}
		if nt, ok := n.Ext().(*value.NamedTuple); ok && n.Kind == value.KindNamedTuple {
			if err := nodeText(i, n); err != nil {
				return 0, 0, err
			}
			pl += sizeStr(nt.TypeName)
			for _, f := range nt.FieldNames {
				pl += sizeLD(int64(len(f)))
			}
		}
		return pl, 2 + m, nil
	case value.KindDict:
		m := 0
		for j := 0; j+1 < len(n.Refs()); j += 2 {
			k, v := n.Refs()[j], n.Refs()[j+1]
			if err := e.checkRef(i, k); err != nil {
				return 0, 0, err
			}
			if err := e.checkRef(i, v); err != nil {
				return 0, 0, err
			}
			pl += sizeLD(e.sat(sizeLD(e.body(k)) + sizeLD(e.body(v))))
			m = max(m, int(e.dep[k]), int(e.dep[v]))
		}
		if len(n.Refs()) == 0 {
			return 0, 2, nil
		}
		return pl, 3 + m, nil
	case value.KindDate:
		return int64(leaf.DateSize(n.Ext().(*value.Date))), 2, nil
	case value.KindTime:
		x := n.Ext().(*value.Time)
		return int64(leaf.TimeSize(x)), 2, nodeText(i, n)
	case value.KindDateTime:
		x := n.Ext().(*value.DateTime)
		return int64(leaf.DateTimeSize(x)), 2, nodeText(i, n)
	case value.KindTimeDelta:
		return int64(leaf.TimeDeltaSize(n.Ext().(*value.TimeDelta))), 2, nil
	case value.KindTimeZone:
		x := n.Ext().(*value.TimeZone)
		return int64(leaf.TimeZoneSize(x)), 2, nodeText(i, n)
	case value.KindException:
		x := n.Ext().(*value.Exception)
		return int64(leaf.ExceptionSize(x)), 2, nodeText(i, n)
	case value.KindFunction:
		x := n.Ext().(*value.Function)
		return int64(leaf.FunctionSize(x)), 2, nodeText(i, n)
	case value.KindFileHandle:
		x := n.Ext().(*value.FileHandle) // CheckLeaf accepted its mode
		if err := nodeText(i, n); err != nil {
			return 0, 0, err
		}
		return int64(leaf.FileHandleSize(x)), 2, nil
	case value.KindCycle:
		return int64(leaf.SizeU(1, n.Num)) + sizeStr(n.Text()), 2, nodeText(i, n)
	case value.KindType:
		t := n.Ext().(*value.Type)
		if err := nodeText(i, n); err != nil {
			return 0, 0, err
		}
		if err := e.checkPairs(i, t.Attrs); err != nil {
			return 0, 0, err
		}
		l, lv := e.typeLen(t)
		return l, 1 + lv, nil
	case value.KindClassInstance:
		ci := n.Ext().(*value.ClassInstance)
		if err := e.checkRef(i, ci.Class); err != nil {
			return 0, 0, err
		}
		if err := e.checkPairs(i, ci.Attrs); err != nil {
			return 0, 0, err
		}
		c := &e.g.Nodes[ci.Class]
		t, ok := c.Ext().(*value.Type)
		if c.Kind != value.KindType || !ok || (t.Origin != value.OriginSandbox && t.Origin != value.OriginHost) {
			return 0, 0, nodeErr(i, n.Kind, fmt.Errorf("class node %d is not a sandbox or host class type", ci.Class))
		}
		tl, tlv := e.typeLen(t)
		pl = sizeLD(tl) + sizeLD(sizeLD(16)) + sizeLD(e.sat(e.pairsLen(ci.Attrs)))
		return pl, 2 + max(tlv, e.pairLevels(ci.Attrs, nil)), nil
	}
	return 0, 0, nodeErr(i, n.Kind, fmt.Errorf("unknown node kind"))
}

// Appending. Everything was validated and sized by prepare.

// appendLen writes the key and length of a message field.
func appendLen(b []byte, num protowire.Number, n int64) []byte { return leaf.AppendM(b, num, int(n)) }

// appendIntItem writes what appendField writes for an int item, inline:
// field 1 (length-delimited), its length, the int arm and the zigzag
// varint.
func appendIntItem(b []byte, x int64) []byte {
	z := protowire.EncodeZigZag(x)
	b = append(b, 0x0a, byte(1+protowire.SizeVarint(z)), byte(armInt<<3))
	return protowire.AppendVarint(b, z)
}

// appendField appends node i as MontyObject field num of the enclosing
// message.
func (e *venc) appendField(b []byte, num protowire.Number, i value.NodeID) []byte {
	return e.appendObject(appendLen(b, num, e.body(i)), i)
}

// appendObject appends the body of node i's MontyObject. The recursion is
// bounded: callers have checked the node's depth.
func (e *venc) appendObject(b []byte, i value.NodeID) []byte {
	n := &e.g.Nodes[i]
	arm := protowire.Number(n.Kind)
	pl := e.pl[i]
	switch n.Kind {
	case value.KindEllipsis, value.KindNone, value.KindNotImplemented:
		return appendLen(b, arm, 0)
	case value.KindBool:
		return protowire.AppendVarint(leaf.AppendTag(b, arm, protowire.VarintType), n.Num)
	case value.KindInt:
		return protowire.AppendVarint(leaf.AppendTag(b, arm, protowire.VarintType), protowire.EncodeZigZag(n.Int()))
	case value.KindBigInt:
		x := n.BigInt()
		if x.IsInt64() {
			return protowire.AppendVarint(leaf.AppendTag(b, armInt, protowire.VarintType), protowire.EncodeZigZag(x.Int64()))
		}
		b = appendLen(b, arm, pl)
		if x.Sign() < 0 {
			b = append(leaf.AppendTag(b, 1, protowire.VarintType), 1)
		}
		m := (x.BitLen() + 7) / 8
		b = appendLen(b, 2, int64(m))
		b = append(b, make([]byte, m)...)
		x.FillBytes(b[len(b)-m:])
		return b
	case value.KindFloat:
		b = leaf.AppendTag(b, arm, protowire.Fixed64Type)
		return binary.LittleEndian.AppendUint64(b, n.Num)
	case value.KindStr, value.KindPath, value.KindBuiltinFunction, value.KindRepr:
		return append(appendLen(b, arm, pl), n.Text()...)
	case value.KindBytes:
		return append(appendLen(b, arm, pl), n.Bytes()...)
	case value.KindList, value.KindTuple, value.KindSet, value.KindFrozenSet:
		b = appendLen(b, arm, pl)
		for _, x := range n.Ints() {
			b = appendIntItem(b, x)
		}
		for _, x := range n.Floats() {
			// What appendField writes for a float item: field 1, its
			// length, the float arm (fixed64) and the bits.
			b = append(b, 0x0a, 0x09, keyFloat)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		for _, r := range n.Refs() {
			if e.g.Nodes[r].Kind == value.KindInt {
				// appendIntItem, by hand: it is too large to inline.
				z := protowire.EncodeZigZag(e.g.Nodes[r].Int())
				b = append(b, 0x0a, byte(1+protowire.SizeVarint(z)), byte(armInt<<3))
				b = protowire.AppendVarint(b, z)
				continue
			}
			b = e.appendField(b, 1, r)
		}
		return b
	case value.KindNamedTuple:
		b = appendLen(b, arm, pl)
		nt := n.Ext().(*value.NamedTuple)
		b = leaf.AppendS(b, 1, nt.TypeName)
		for _, f := range nt.FieldNames {
			b = append(appendLen(b, 2, int64(len(f))), f...)
		}
		for _, r := range n.Refs() {
			b = e.appendField(b, 3, r)
		}
		return b
	case value.KindDict:
		b = appendLen(b, arm, pl)
		for j := 0; j+1 < len(n.Refs()); j += 2 {
			b = e.appendPair(b, n.Refs()[j], n.Refs()[j+1])
		}
		return b
	case value.KindDate:
		return leaf.AppendDate(appendLen(b, arm, pl), n.Ext().(*value.Date))
	case value.KindTime:
		return leaf.AppendTime(appendLen(b, arm, pl), n.Ext().(*value.Time))
	case value.KindDateTime:
		return leaf.AppendDateTime(appendLen(b, arm, pl), n.Ext().(*value.DateTime))
	case value.KindTimeDelta:
		return leaf.AppendTimeDelta(appendLen(b, arm, pl), n.Ext().(*value.TimeDelta))
	case value.KindTimeZone:
		return leaf.AppendTimeZone(appendLen(b, arm, pl), n.Ext().(*value.TimeZone))
	case value.KindException:
		return leaf.AppendException(appendLen(b, arm, pl), n.Ext().(*value.Exception))
	case value.KindFunction:
		return leaf.AppendFunction(appendLen(b, arm, pl), n.Ext().(*value.Function))
	case value.KindFileHandle:
		return leaf.AppendFileHandle(appendLen(b, arm, pl), n.Ext().(*value.FileHandle))
	case value.KindCycle:
		b = appendLen(b, arm, pl)
		b = leaf.AppendU(b, 1, n.Num)
		return leaf.AppendS(b, 2, n.Text())
	case value.KindType:
		return e.appendType(appendLen(b, arm, pl), n.Ext().(*value.Type))
	case value.KindClassInstance:
		ci := n.Ext().(*value.ClassInstance)
		b = appendLen(b, arm, pl)
		b = e.appendType(appendLen(b, 1, e.pl[ci.Class]), e.g.Nodes[ci.Class].Ext().(*value.Type))
		b = leaf.AppendUUID(b, 2, &ci.InstanceID)
		return e.appendDict(b, 3, ci.Attrs)
	}
	return b
}

func (e *venc) appendPair(b []byte, k, v value.NodeID) []byte {
	b = appendLen(b, 1, sizeLD(e.body(k))+sizeLD(e.body(v)))
	b = e.appendField(b, 1, k)
	return e.appendField(b, 2, v)
}

func (e *venc) appendDict(b []byte, num protowire.Number, ps []value.Pair) []byte {
	b = appendLen(b, num, e.pairsLen(ps))
	for _, p := range ps {
		b = e.appendPair(b, p.Key, p.Value)
	}
	return b
}

func (e *venc) appendType(b []byte, t *value.Type) []byte {
	b = leaf.AppendS(b, 1, t.Name)
	if t.Origin != value.OriginBuiltin {
		b = leaf.AppendUUID(b, 2, &t.ID)
	}
	b = leaf.AppendU(b, 3, uint64(t.Origin))
	b = leaf.AppendBool(b, 4, t.IsDataclass)
	if t.Attrs != nil {
		b = e.appendDict(b, 5, t.Attrs)
	}
	return b
}
