package codecv4

import (
	"math/big"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// segKind is the path segment of everything inside a node's arm.
const segKind = "MontyNode.kind"

// Node arm numbers that carry a message or need special handling.
const (
	armUUID = 10
	maxArm  = 30
)

// nodeState is what a node decode keeps besides the value.Node itself:
// payloads that are only turned into domain values once the whole node
// message has been read (so that repeated arms merge first), and the wire
// presence of fields the domain types cannot express.
type nodeState struct {
	arm  protowire.Number
	reg  refRegion // ids, or pairs as two ids each
	vcap int       // the contract capacity of the id or pair vector

	neg   bool   // BigInt.negative
	mag   []byte // BigInt.magnitude, aliasing the frame
	data  []byte // bytes arm payload, owned
	names []string

	uuidSeen  bool // Type.id / ClassInstanceNode.instance_id present
	uuidLen   int
	attrsSeen bool
	origin    int32
}

// arena merges an Arena message into g. Like the other loops of this hot
// path it reads with a wire.Iter, not wire.Walk's call per field.
func (d *decoder) arena(b []byte, g *value.Graph) error {
	it := d.Iter(b)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return err
		}
		switch num {
		case 1:
			v, m, err := wire.VarintField(wt, it.B)
			if err != nil {
				return err
			}
			it.Take(m)
			if cap(g.Nodes) == 0 {
				// A hint is trusted only as far as the rest of the frame can
				// hold nodes: each takes at least 4 bytes.
				res := min(uint64(uint32(v)), uint64(len(it.B))/4)
				if res > 0 {
					if g.Nodes, err = budget.Reserve(&d.Bud, g.Nodes, int(res), nodeBytes); err != nil {
						return err
					}
				}
			}
		case 2:
			v, m, err := wire.BytesField(wt, it.B)
			if err != nil {
				return err
			}
			it.Take(m)
			if len(g.Nodes) == cap(g.Nodes) {
				if g.Nodes, err = budget.Grow(&d.Bud, g.Nodes, nodeBytes); err != nil {
					return err
				}
			}
			i := len(g.Nodes)
			g.Nodes = g.Nodes[:i+1]
			if !d.fastNode(v, &g.Nodes[i]) {
				if err := d.node(v, &g.Nodes[i]); err != nil {
					return err
				}
			}
		default:
			if err := it.Skip(num, wt, d.Level-1); err != nil {
				return err
			}
		}
	}
	return d.End(&it)
}

// fastNode decodes the commonest nodes, a lone int, float, bool, str or
// unit arm, without the general machinery. It reports false, leaving n
// zero, for anything else (including anything malformed or over budget,
// which the general path then reports).
func (d *decoder) fastNode(b []byte, n *value.Node) bool {
	if len(b) < 2 {
		return false
	}
	switch b[0] {
	case 0x42: // str
		l, k := protowire.ConsumeVarint(b[1:])
		if k < 0 || l != uint64(len(b)-1-k) {
			return false
		}
		raw := b[1+k:]
		if !utf8.Valid(raw) {
			return false
		}
		s, err := d.Str(raw)
		if err != nil {
			return false
		}
		n.Kind = value.KindStr
		n.SetText(s)
		return true
	case 0x28: // int
		if len(b) == 2 && b[1] < 0x80 {
			n.Kind, n.Num = value.KindInt, uint64(protowire.DecodeZigZag(uint64(b[1])))
			return true
		}
		v, k := protowire.ConsumeVarint(b[1:])
		if k < 0 || 1+k != len(b) {
			return false
		}
		n.Kind, n.Num = value.KindInt, uint64(protowire.DecodeZigZag(v))
		return true
	case 0x39: // float
		if len(b) != 9 {
			return false
		}
		v, _ := protowire.ConsumeFixed64(b[1:])
		n.Kind, n.Num = value.KindFloat, v
		return true
	case 0x20: // bool
		if len(b) != 2 || b[1] >= 0x80 {
			return false
		}
		n.Kind = value.KindBool
		if b[1] != 0 {
			n.Num = 1
		}
		return true
	case 0x0a, 0x12, 0x1a: // ellipsis, none, not_implemented
		if len(b) != 2 || b[1] != 0 {
			return false
		}
		n.Kind = value.Kind(b[0] >> 3)
		return true
	}
	return false
}

// node decodes one MontyNode message into n, which must be zero.
func (d *decoder) node(b []byte, n *value.Node) error {
	var st nodeState
	st.reg.start = len(d.refs)
	it := d.Iter(b)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return err
		}
		if num > maxArm {
			if err := it.Skip(num, wt, d.Level-1); err != nil {
				return err
			}
			continue
		}
		m, err := d.nodeField(&st, n, num, wt, it.B)
		if err != nil {
			return wire.At(err, segKind)
		}
		it.Take(m)
	}
	if err := d.End(&it); err != nil {
		return err
	}
	return d.finishNode(&st, n)
}

// switchArm discards the node's payload for a different arm.
func (d *decoder) switchArm(st *nodeState, n *value.Node, num protowire.Number) error {
	if st.arm != 0 {
		// Only a displaced payload needs clearing; the first arm finds
		// both the state and the node zero.
		d.refDrop(&st.reg)
		*st = nodeState{reg: st.reg}
		*n = value.Node{}
	}
	st.arm = num
	n.Kind = value.Kind(num)
	var err error
	switch num {
	case 13:
		err = newExt[value.NamedTuple](d, n)
	case 17:
		err = newExt[value.Date](d, n)
	case 18:
		err = newExt[value.Time](d, n)
	case 19:
		err = newExt[value.DateTime](d, n)
	case 20:
		err = newExt[value.TimeDelta](d, n)
	case 21:
		err = newExt[value.TimeZone](d, n)
	case 22:
		err = newExt[value.Exception](d, n)
	case 23:
		err = newExt[value.Type](d, n)
	case 24:
		err = newExt[value.ClassInstance](d, n)
	case 25:
		err = newExt[value.Function](d, n)
	case 28:
		err = newExt[value.FileHandle](d, n)
	}
	return err
}

// nodeField decodes one arm field of a node.
func (d *decoder) nodeField(st *nodeState, n *value.Node, num protowire.Number, wt protowire.Type, b []byte) (int, error) {
	// Check the wire type before touching the payload, as prost does.
	want := protowire.BytesType
	switch num {
	case 4, 5:
		want = protowire.VarintType
	case 7:
		want = protowire.Fixed64Type
	}
	if wt != want {
		return 0, &wire.TypeError{Got: wt, Want: want}
	}
	if num != st.arm {
		if err := d.switchArm(st, n, num); err != nil {
			return 0, err
		}
	}
	switch num {
	case 4:
		v, m, err := wire.Varint(b)
		if err != nil {
			return 0, err
		}
		n.Num = 0
		if v != 0 {
			n.Num = 1
		}
		return m, nil
	case 5:
		v, m, err := wire.Varint(b)
		if err != nil {
			return 0, err
		}
		n.Num = uint64(protowire.DecodeZigZag(v))
		return m, nil
	case 7:
		v, m, err := wire.Fixed64Field(wt, b)
		n.Num = v
		return m, err
	}
	v, m, err := wire.BytesField(wt, b)
	if err != nil {
		return 0, err
	}
	switch num {
	case 1, 2, 3:
		err = d.SkipMessage(v)
	case 6:
		err = d.bigInt(st, v)
	case 8, 26, 27, 29, 30:
		if err = wire.CheckUTF8(v); err == nil {
			var s string
			s, err = d.Str(v)
			n.SetText(s)
		}
	case 9:
		st.data, err = d.Bytes(v)
	case armUUID:
		var u value.UUID
		_, err = d.UUID(v, 0, &u)
	case 11, 12, 15, 16:
		err = d.idField(st, v, 1)
	case 13:
		err = d.namedTuple(st, n.Ext().(*value.NamedTuple), v)
	case 14:
		err = d.nodePairs(st, v)
	case 17:
		err = d.Fields(v, leaf.DateFields(n.Ext().(*value.Date)), false, nil)
	case 18:
		err = d.Fields(v, leaf.TimeFields(n.Ext().(*value.Time)), false, nil)
	case 19:
		err = d.Fields(v, leaf.DateTimeFields(n.Ext().(*value.DateTime)), false, nil)
	case 20:
		err = d.Fields(v, leaf.TimeDeltaFields(n.Ext().(*value.TimeDelta)), false, nil)
	case 21:
		err = d.Fields(v, leaf.TimeZoneFields(n.Ext().(*value.TimeZone)), false, nil)
	case 22:
		err = d.Fields(v, leaf.ExceptionFields(n.Ext().(*value.Exception)), false, nil)
	case 23:
		err = d.decodeType(st, v, n.Ext().(*value.Type))
	case 24:
		err = d.decodeInstance(st, v, n.Ext().(*value.ClassInstance))
	case 25:
		err = d.Fields(v, leaf.FunctionFields(n.Ext().(*value.Function)), false, nil)
	case 28:
		err = d.Fields(v, leaf.FileHandleFields(n.Ext().(*value.FileHandle)), false, nil)
	}
	return m, err
}

// finishNode turns the merged payload into its domain form and runs the
// node's leaf checks.
func (d *decoder) finishNode(st *nodeState, n *value.Node) error {
	switch st.arm {
	case 0, armUUID:
		return valuecheck.MissingField("MontyNode.kind")
	case 6:
		z, err := d.finishBigInt(st)
		if err != nil {
			return err
		}
		n.SetExt(z)
		return nil
	case 9:
		if err := d.Obj(unsafe.Sizeof([]byte(nil))); err != nil { // the interface box
			return err
		}
		n.SetExt(st.data)
		return nil
	case 11, 12, 14, 15, 16:
		n.SetRefs(d.refSlice(&st.reg))
		return nil
	case 13:
		n.SetRefs(d.refSlice(&st.reg))
		n.Ext().(*value.NamedTuple).FieldNames = st.names
		return nil
	case 23:
		t := n.Ext().(*value.Type)
		if err := wire.CheckType(t, st.origin, st.uuidSeen, st.uuidLen, st.attrsSeen); err != nil {
			return err
		}
		t.Attrs = pairView(d.refSlice(&st.reg))
		return nil
	case 24:
		c := n.Ext().(*value.ClassInstance)
		if err := wire.CheckInstance("ClassInstanceNode", st.uuidSeen, st.uuidLen, st.attrsSeen); err != nil {
			return err
		}
		c.Attrs = pairView(d.refSlice(&st.reg))
		return nil
	case 28:
		f := n.Ext().(*value.FileHandle)
		mode, err := value.NormalizeFileMode(f.Mode)
		if err != nil {
			return err
		}
		f.Mode = mode
		return nil
	}
	return valuecheck.CheckLeaf(*n)
}

// pairView reinterprets interleaved ids as pairs, without copying.
func pairView(ids []uint32) []value.Pair {
	if len(ids) < 2 {
		return nil
	}
	return unsafe.Slice((*value.Pair)(unsafe.Pointer(&ids[0])), len(ids)/2)
}

// fastIDs turns idField's fast path off, so that a test can check that it
// decodes exactly what the general path decodes.
var fastIDs = true

// idField merges one occurrence of a repeated node-id field (packed or
// not) into the node's id vector.
func (d *decoder) idField(st *nodeState, b []byte, field protowire.Number) error {
	// The common shape: one packed run that fills the message.
	if fastIDs && len(b) >= 2 && b[0] == byte(field)<<3|byte(protowire.BytesType) && b[1] < 0x80 && int(b[1]) == len(b)-2 {
		_, err := d.ids(st, protowire.BytesType, b[1:])
		return err
	}
	it := wire.NewIter(b) // at the message's depth, d.Level
	for it.More() {
		num, wt, err := it.Next()
		if err == nil && num != field {
			err = it.Skip(num, wt, d.Level)
		} else if err == nil {
			var m int
			m, err = d.ids(st, wt, it.B)
			it.Take(m)
		}
		if err != nil {
			return err
		}
	}
	return it.Ended()
}

// ids reads the value of a node-id field, packed or unpacked.
func (d *decoder) ids(st *nodeState, wt protowire.Type, b []byte) (int, error) {
	switch wt {
	case protowire.VarintType:
		v, m, err := wire.Varint(b)
		if err != nil {
			return 0, err
		}
		if st.reg.n == st.vcap {
			st.vcap = budget.NextCap(st.vcap)
			if err := d.refCharge(int64(st.vcap) * budget.RefCost); err != nil {
				return 0, err
			}
		}
		if err := d.refRoom(&st.reg, 1, st.vcap); err != nil {
			return 0, err
		}
		d.refPush(&st.reg, uint32(v))
		return m, nil
	case protowire.BytesType:
		run, m, err := wire.BytesField(wt, b)
		if err != nil {
			return 0, err
		}
		if len(run) == 0 {
			return m, nil
		}
		// Every id takes at least a byte: reserve for the whole run first.
		if need := st.reg.n + len(run); need > st.vcap {
			st.vcap = need
			if err := d.refCharge(int64(need) * budget.RefCost); err != nil {
				return 0, err
			}
		}
		count := 0
		for _, c := range run {
			if c < 0x80 {
				count++
			}
		}
		if err := d.refRoom(&st.reg, count, st.vcap); err != nil {
			return 0, err
		}
		for len(run) > 0 && count > 0 {
			v, k, err := wire.Varint(run)
			if err != nil {
				return 0, err
			}
			run = run[k:]
			d.refPush(&st.reg, uint32(v))
			count--
		}
		if len(run) > 0 {
			// A last id that straddles the run's end is read from the
			// rest of the frame, as prost reads it, and the run then
			// overshoots.
			if _, _, err := wire.Varint(run[:cap(run)]); err != nil {
				return 0, err
			}
			return 0, wire.ErrDelimited
		}
		return m, nil
	}
	return 0, &wire.TypeError{Got: wt, Want: protowire.VarintType}
}

// nodePairs merges a NodePairs message into the node's pair vector.
func (d *decoder) nodePairs(st *nodeState, b []byte) error {
	lvl := d.Level // the NodePairs message's depth
	it := wire.NewIter(b)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return err
		}
		if num != 1 {
			if err := it.Skip(num, wt, lvl); err != nil {
				return err
			}
			continue
		}
		if wt != protowire.BytesType {
			return &wire.TypeError{Got: wt, Want: protowire.BytesType}
		}
		if st.reg.n/2 == st.vcap {
			st.vcap = budget.NextCap(st.vcap)
			if err := d.refCharge(int64(st.vcap) * budget.PairCost); err != nil {
				return err
			}
		}
		v, m, err := wire.BytesField(wt, it.B)
		if err != nil {
			return err
		}
		it.Take(m)
		kv, vv, err := nodePair(v, lvl+1)
		if err != nil {
			return err
		}
		if err := d.refRoom(&st.reg, 2, 2*st.vcap); err != nil {
			return err
		}
		d.refPush(&st.reg, kv)
		d.refPush(&st.reg, vv)
	}
	return it.Ended()
}

// nodePair decodes a NodePair message at depth lvl.
func nodePair(b []byte, lvl int) (k, v uint32, err error) {
	it := wire.NewIter(b)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return 0, 0, err
		}
		if num != 1 && num != 2 {
			err = it.Skip(num, wt, lvl)
		} else {
			x, m, e := wire.VarintField(wt, it.B)
			it.Take(m)
			err = e
			if num == 1 {
				k = uint32(x)
			} else {
				v = uint32(x)
			}
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return k, v, it.Ended()
}

// bigInt merges a BigInt message; the magnitude stays in the frame until
// the node is finished.
func (d *decoder) bigInt(st *nodeState, b []byte) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.Bool(wt, b, &st.neg)
		case 2:
			v, m, err := wire.BytesField(wt, b)
			if err != nil {
				return 0, err
			}
			if err := d.Charge(int64(len(v))); err != nil {
				return 0, err
			}
			st.mag = v
			return m, nil
		}
		return -1, nil
	})
}

func (d *decoder) finishBigInt(st *nodeState) (*big.Int, error) {
	mag := st.mag
	for len(mag) > 0 && mag[0] == 0 {
		mag = mag[1:]
	}
	if err := d.Obj(unsafe.Sizeof(big.Int{})); err != nil {
		return nil, err
	}
	z := new(big.Int)
	if len(mag) == 0 {
		return z, nil
	}
	// Limb storage: the protocol's max(ceil(len/8)*8, 32), or what
	// math/big really allocates (it keeps 4 spare words), if more.
	words := (len(mag) + 7) / 8
	limbs := max(int64(words)*8, 32)
	if words > 1 {
		limbs = max(limbs, wire.AllocSize((words+4)*8))
	}
	if err := d.Charge(limbs); err != nil {
		return nil, err
	}
	z.SetBytes(mag)
	if st.neg {
		z.Neg(z)
	}
	return z, nil
}

// namedTuple merges a NamedTupleNode message.
func (d *decoder) namedTuple(st *nodeState, t *value.NamedTuple, b []byte) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.Text(wt, b, &t.TypeName)
		case 2:
			if wt != protowire.BytesType {
				return 0, &wire.TypeError{Got: wt, Want: protowire.BytesType}
			}
			var err error
			if st.names, err = grow(d, st.names); err != nil {
				return 0, err
			}
			var s string
			n, err := d.Text(wt, b, &s)
			if err != nil {
				return 0, err
			}
			st.names = append(st.names, s)
			return n, nil
		case 3:
			return d.ids(st, wt, b)
		}
		return -1, nil
	})
}

func (d *decoder) decodeType(st *nodeState, b []byte, x *value.Type) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return d.Text(wt, b, &x.Name)
		case 2:
			return d.uuid(st, wt, b, &x.ID)
		case 3:
			return wire.Int(wt, b, &st.origin)
		case 4:
			return wire.Bool(wt, b, &x.IsDataclass)
		case 5:
			return d.attrs(st, wt, b)
		}
		return -1, nil
	})
}

func (d *decoder) decodeInstance(st *nodeState, b []byte, x *value.ClassInstance) error {
	return d.Walk(b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.Int(wt, b, &x.Class)
		case 2:
			return d.uuid(st, wt, b, &x.InstanceID)
		case 3:
			return d.attrs(st, wt, b)
		}
		return -1, nil
	})
}

// uuid merges the Uuid field of a Type or ClassInstanceNode (Type.id,
// ClassInstanceNode.instance_id), recording its presence and length.
func (d *decoder) uuid(st *nodeState, wt protowire.Type, b []byte, id *value.UUID) (int, error) {
	v, m, err := wire.BytesField(wt, b)
	if err != nil {
		return 0, err
	}
	if !st.uuidSeen {
		st.uuidSeen, st.uuidLen = true, 0
	}
	st.uuidLen, err = d.UUID(v, st.uuidLen, id)
	return m, err
}

// attrs merges the NodePairs attrs field of a Type or ClassInstanceNode.
func (d *decoder) attrs(st *nodeState, wt protowire.Type, b []byte) (int, error) {
	v, m, err := wire.BytesField(wt, b)
	if err != nil {
		return 0, err
	}
	st.attrsSeen = true
	return m, d.nodePairs(st, v)
}
