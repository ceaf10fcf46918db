package codecv2

import (
	"encoding/binary"
	"math"
	"math/big"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/internal/valuecheck"
	"github.com/gomonty/monty/value"
)

// MontyObject arm numbers (equal to value.Kind numbers).
const (
	armEllipsis        = 1
	armNone            = 2
	armNotImplemented  = 3
	armBool            = 4
	armInt             = 5
	armBigInt          = 6
	armFloat           = 7
	armStr             = 8
	armBytes           = 9
	armList            = 11
	armTuple           = 12
	armNamedTuple      = 13
	armDict            = 14
	armSet             = 15
	armFrozenSet       = 16
	armDate            = 17
	armTime            = 18
	armDateTime        = 19
	armTimeDelta       = 20
	armTimeZone        = 21
	armException       = 22
	armType            = 23
	armClassInstance   = 24
	armFunction        = 25
	armBuiltinFunction = 26
	armPath            = 27
	armFileHandle      = 28
	armRepr            = 29
	armCycle           = 30
)

// Charged sizes of decoded payloads.
var (
	nodeCost = budget.SizeOf[value.Node]()
)

// pobj is a MontyObject being decoded. The worker's MontyObject is
// hand-written, and merges as it does (checked against the released
// worker): a MontyObject field that occurs more than once merges, so the
// state of a singular value field lives in its enclosing message's decoder
// until that message ends, and an occurrence with no arm leaves the value
// as it was; but every occurrence of an arm, the same arm again or
// another, decodes afresh and replaces the value (a second Date arm does
// not merge into the first), and its decode-time checks run as soon as
// that arm's message ends (checkArm). A replaced container's items stay
// in the graph unreferenced.
type pobj struct {
	arm   protowire.Number // 0 until an arm is seen
	num   uint64           // bool, int, float bits, cycle identity
	neg   bool             // BigInt.negative
	text  string           // str, path, builtin_function, repr, cycle placeholder
	raw   []byte           // bytes payload (copied) or BigInt magnitude (a view of the frame)
	refs  []value.NodeID   // container items; dict keys and values interleaved
	names []string         // NamedTuple.field_names
	ext   any              // payload struct of the other arms
	ts    *typeState       // Type arm
	ci    *ciState         // ClassInstance arm
}

// typeState is a Type message with the presence facts its checks need.
type typeState struct {
	t         value.Type
	origin    int32
	idSeen    bool
	idLen     int
	attrsSeen bool
}

type ciState struct {
	typ       *typeState
	iid       value.UUID
	iidSeen   bool
	iidLen    int
	attrsSeen bool
	attrs     []value.Pair
}

// object merges one occurrence of a MontyObject field into p.
func (d *dec) object(wt protowire.Type, b []byte, p *pobj) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	return n, d.objectBody(v, p)
}

// objectBody decodes MontyObject message b at the current level.
// MontyObject is hand-written in the worker: it adds no path segment of its
// own. Like the other loops of this hot path it reads with a wire.Iter.
func (d *dec) objectBody(b []byte, p *pobj) error {
	it := d.Iter(b)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return err
		}
		if num < armEllipsis || num > armCycle || num == 10 {
			err = it.Skip(num, wt, d.Level-1)
		} else {
			*p = pobj{arm: num}
			var m int
			if m, err = d.arm(num, wt, it.B, p); err == nil && num >= armDate {
				// The arms with checks; the rest skip the call.
				err = checkArm(p)
			}
			it.Take(m)
		}
		if err != nil {
			return err
		}
	}
	return d.End(&it)
}

// checkArm runs the decode-time checks of the arm just decoded into p,
// which the worker runs as the arm's message ends: the leaf values' ranges
// and names, a file handle's mode (normalized here), a Type's rules and a
// ClassInstance's. finish builds the node without checking again.
func checkArm(p *pobj) error {
	var err error
	switch p.arm {
	case armBuiltinFunction:
		err = valuecheck.CheckLeaf(value.Node{Kind: value.KindBuiltinFunction}.WithText(p.text))
	case armDate, armTime, armDateTime, armTimeDelta, armTimeZone, armException, armFunction:
		n := value.Node{Kind: value.Kind(p.arm)}
		n.SetExt(p.ext)
		err = valuecheck.CheckLeaf(n)
	case armFileHandle:
		fh := p.ext.(*value.FileHandle)
		fh.Mode, err = value.NormalizeFileMode(fh.Mode)
	case armType:
		err = checkType(p.ts)
	case armClassInstance:
		err = checkInstance(p.ci)
	}
	if err != nil {
		return fail(err)
	}
	return nil
}

// extOf returns p's payload struct, allocating (and charging) it on the
// arm's first occurrence.
func extOf[T any](d *dec, p *pobj) (*T, error) {
	if x, ok := p.ext.(*T); ok {
		return x, nil
	}
	x, err := wire.New[T](&d.Dec)
	if err == nil {
		p.ext = x
	}
	return x, err
}

// leafArm merges one occurrence of a leaf value arm through its table.
func leafArm[T any](d *dec, wt protowire.Type, b []byte, p *pobj, fields func(*T) leaf.Fields) (int, error) {
	x, err := extOf[T](d, p)
	if err != nil {
		return 0, err
	}
	return d.FieldsMsg(wt, b, fields(x), nil)
}

func (d *dec) arm(num protowire.Number, wt protowire.Type, b []byte, p *pobj) (n int, err error) {
	switch num {
	case armEllipsis, armNone, armNotImplemented:
		return d.skipMessage(wt, b)
	case armBool:
		var v uint64
		v, n, err = wire.VarintField(wt, b)
		p.num = 0
		if v != 0 {
			p.num = 1
		}
		return n, err
	case armInt:
		var v uint64
		v, n, err = wire.VarintField(wt, b)
		p.num = uint64(protowire.DecodeZigZag(v))
		return n, err
	case armBigInt:
		return d.bigInt(wt, b, p)
	case armFloat:
		p.num, n, err = wire.Fixed64Field(wt, b)
		return n, err
	case armStr, armBuiltinFunction, armPath, armRepr:
		p.text, n, err = d.str(wt, b)
		return n, err
	case armBytes:
		var v []byte
		if v, n, err = wire.BytesField(wt, b); err == nil {
			p.raw, err = d.Bytes(v)
		}
		return n, err
	case armList, armTuple, armSet, armFrozenSet:
		return d.objectList(wt, b, p)
	case armNamedTuple:
		return d.namedTuple(wt, b, p)
	case armDict:
		return d.dictRefs(wt, b, p)
	case armDate:
		return leafArm(d, wt, b, p, leaf.DateFields)
	case armTime:
		return leafArm(d, wt, b, p, leaf.TimeFields)
	case armDateTime:
		return leafArm(d, wt, b, p, leaf.DateTimeFields)
	case armTimeDelta:
		return leafArm(d, wt, b, p, leaf.TimeDeltaFields)
	case armTimeZone:
		return leafArm(d, wt, b, p, leaf.TimeZoneFields)
	case armException:
		return leafArm(d, wt, b, p, leaf.ExceptionFields)
	case armType:
		if err := wire.NewAt(&d.Dec, &p.ts); err != nil {
			return 0, err
		}
		return d.typeMsg(wt, b, p.ts)
	case armClassInstance:
		if err := wire.NewAt(&d.Dec, &p.ci); err != nil {
			return 0, err
		}
		return d.classInstance(wt, b, p.ci)
	case armFunction:
		return leafArm(d, wt, b, p, leaf.FunctionFields)
	case armFileHandle:
		return leafArm(d, wt, b, p, leaf.FileHandleFields)
	case armCycle:
		return d.cycle(wt, b, p)
	}
	return 0, nil
}

// item decodes one element of a repeated MontyObject field and appends its
// node to the graph.
func (d *dec) item(wt protowire.Type, b []byte) (value.NodeID, int, error) {
	if wt == protowire.BytesType {
		if id, n, ok, err := d.scalarItem(b); ok {
			return id, n, err
		}
	}
	var p pobj
	n, err := d.object(wt, b, &p)
	if err != nil {
		return 0, 0, err
	}
	id, err := d.finish(&p, cap(b)-n)
	return id, n, err
}

// noFastPaths turns scalarItem and scalarRun off, so that tests can check
// that they decode exactly what the general path decodes.
var noFastPaths = false

// Keys of the MontyObject arms that scalarItem decodes.
const (
	keyEllipsis       = armEllipsis<<3 | byte(protowire.BytesType)
	keyNone           = armNone<<3 | byte(protowire.BytesType)
	keyNotImplemented = armNotImplemented<<3 | byte(protowire.BytesType)
	keyBool           = armBool<<3 | byte(protowire.VarintType)
	keyInt            = armInt<<3 | byte(protowire.VarintType)
	keyFloat          = armFloat<<3 | byte(protowire.Fixed64Type)
	keyStr            = armStr<<3 | byte(protowire.BytesType)
)

// scalarItem decodes in one step, when it can, the element of a repeated
// MontyObject field whose length prefix starts b (which runs to the
// frame's end), returning the bytes it took. The elements of
// large containers are mostly MontyObjects made of a single canonical
// scalar field (an int, bool, float, short str or an empty None, Ellipsis
// or NotImplemented), which need none of the general path's merging state.
// For anything else, including anything malformed, it reports false, and
// the general path decodes the element and
// reports its errors. Where it applies, it performs the general path's
// checks and charges in the same order, so both give the same result.
func (d *dec) scalarItem(buf []byte) (value.NodeID, int, bool, error) {
	// The enclosing message is at level-1.
	if d.Level > MaxDepth || noFastPaths {
		return 0, 0, false, nil // the general path reports the recursion
	}
	if 2 >= len(buf) {
		return 0, 0, false, nil
	}
	l := int(buf[0])
	body := 1
	end := body + l
	if l < 2 || l >= 0x80 || end > len(buf) {
		return 0, 0, false, nil
	}
	var n value.Node
	switch buf[body] {
	case keyInt, keyBool:
		v, m := protowire.ConsumeVarint(buf[body+1 : end])
		if m != l-1 {
			return 0, 0, false, nil
		}
		if buf[body] == keyInt {
			n = value.Node{Kind: value.KindInt, Num: uint64(protowire.DecodeZigZag(v))}
		} else {
			n.Kind = value.KindBool
			if v != 0 {
				n.Num = 1
			}
		}
	case keyFloat:
		if l != 9 {
			return 0, 0, false, nil
		}
		n = value.Node{Kind: value.KindFloat, Num: binary.LittleEndian.Uint64(buf[body+1:])}
	case keyNone, keyEllipsis, keyNotImplemented:
		// An empty Unit message, one level further down.
		if l != 2 || buf[body+1] != 0 || d.Level >= MaxDepth {
			return 0, 0, false, nil
		}
		n.Kind = value.Kind(buf[body] >> 3)
	case keyStr:
		sb := buf[body+2 : end]
		if int(buf[body+1]) != len(sb) || !utf8.Valid(sb) {
			return 0, 0, false, nil
		}
		s, err := d.Str(sb)
		if err != nil {
			return 0, 0, true, err
		}
		n = value.Node{Kind: value.KindStr}.WithText(s)
	default:
		return 0, 0, false, nil
	}
	d.rest = len(buf) - end
	id, err := d.add(n)
	return id, end, true, err
}

func (d *dec) appendRef(refs []value.NodeID, id value.NodeID) ([]value.NodeID, error) {
	if len(refs) < cap(refs) {
		return append(refs, id), nil
	}
	refs, err := grow(d, refs, budget.RefCost)
	if err != nil {
		return refs, err
	}
	return append(refs, id), nil
}

// ObjectList is hand-written in the worker (no path segment).
func (d *dec) objectList(wt protowire.Type, b []byte, p *pobj) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	if err := d.presize(p, countFields(v, 1, 2), 1); err != nil {
		return 0, err
	}
	it := d.Iter(v)
	for it.More() {
		if m := d.scalarRun(it.Rest(), p); m > 0 {
			it.Take(m)
			continue
		}
		num, wt, err := it.Next()
		if err == nil && num != 1 {
			err = it.Skip(num, wt, d.Level-1)
		} else if err == nil {
			var id value.NodeID
			var m int
			if id, m, err = d.item(wt, it.B); err == nil {
				p.refs, err = d.appendRef(p.refs, id)
			}
			it.Take(m)
		}
		if err != nil {
			return 0, err
		}
	}
	return n, d.End(&it)
}

// scalarRun decodes the run of ObjectList.items elements at the start of
// buf (the rest of the list's body, whose capacity runs to the frame's
// end) that scalarItem would decode, up to buf's end or to the first other
// field, while the node and reference slices have room (presize makes it).
// It is scalarItem's loop with the slices held in locals, and it returns
// the bytes it decoded. Whatever it stops at, the general loop decodes.
func (d *dec) scalarRun(buf []byte, p *pobj) int {
	// The list is at level-1.
	if d.Level > MaxDepth || noFastPaths {
		return 0
	}
	unitOK := d.Level < MaxDepth
	pos := 0
	nodes, refs := d.g.Nodes, p.refs
	for pos+4 <= len(buf) && len(nodes) < cap(nodes) && len(refs) < cap(refs) {
		if buf[pos] != 1<<3|byte(protowire.BytesType) {
			break
		}
		l := int(buf[pos+1])
		body := pos + 2
		next := body + l
		if l < 2 || l >= 0x80 || next > len(buf) {
			break
		}
		var kind value.Kind
		var num uint64
		var text string
		switch k := buf[body]; k {
		case keyInt, keyBool:
			v := uint64(buf[body+1])
			if l == 2 {
				if v >= 0x80 {
					break
				}
			} else {
				var m int
				if v, m = protowire.ConsumeVarint(buf[body+1 : next]); m != l-1 {
					break
				}
			}
			if k == keyInt {
				kind, num = value.KindInt, uint64(protowire.DecodeZigZag(v))
			} else {
				kind = value.KindBool
				if v != 0 {
					num = 1
				}
			}
		case keyFloat:
			if l == 9 {
				kind, num = value.KindFloat, binary.LittleEndian.Uint64(buf[body+1:next])
			}
		case keyNone, keyEllipsis, keyNotImplemented:
			if l == 2 && buf[body+1] == 0 && unitOK {
				kind = value.Kind(k >> 3)
			}
		case keyStr:
			sb := buf[body+2 : next]
			if int(buf[body+1]) != len(sb) || !utf8.Valid(sb) {
				break
			}
			var err error
			if text, err = d.Str(sb); err != nil {
				// Let the general path charge and report it.
				break
			}
			kind = value.KindStr
		}
		if kind == 0 {
			break
		}
		i := len(nodes)
		nodes = nodes[:i+1]
		slot := &nodes[i]
		if len(slot.Text()) != 0 || slot.Refs() != nil || slot.Ext() != nil {
			*slot = value.Node{} // not reached: see add
		}
		slot.Kind, slot.Num = kind, num
		if len(text) != 0 {
			slot.SetText(text)
		}
		refs = append(refs, value.NodeID(i))
		pos = next
	}
	if pos == 0 {
		return 0
	}
	d.g.Nodes, p.refs = nodes, refs
	return pos
}

// NamedTuple is hand-written in the worker (no path segment).
func (d *dec) namedTuple(wt protowire.Type, b []byte, p *pobj) (int, error) {
	x, err := extOf[value.NamedTuple](d, p)
	if err != nil {
		return 0, err
	}
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (n int, err error) {
		switch num {
		case 1:
			x.TypeName, n, err = d.str(wt, b)
		case 2:
			var name string
			if name, n, err = d.str(wt, b); err == nil {
				if p.names, err = grow(d, p.names, 16); err == nil {
					p.names = append(p.names, name)
				}
			}
		case 3:
			var id value.NodeID
			if id, n, err = d.item(wt, b); err == nil {
				p.refs, err = d.appendRef(p.refs, id)
			}
		default:
			return -1, nil
		}
		return n, err
	})
}

// Dict is hand-written in the worker (no path segment); its Pairs are
// generated messages.
func (d *dec) dictRefs(wt protowire.Type, b []byte, p *pobj) (int, error) {
	v, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, err
	}
	if err := d.presize(p, countFields(v, 1, 8), 2); err != nil {
		return 0, err
	}
	it := d.Iter(v)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return 0, err
		}
		if num != 1 {
			if err := it.Skip(num, wt, d.Level-1); err != nil {
				return 0, err
			}
			continue
		}
		k, val, m, err := d.pair(wt, it.B)
		if err == nil {
			if p.refs, err = d.appendRef(p.refs, k); err == nil {
				p.refs, err = d.appendRef(p.refs, val)
			}
		}
		if err != nil {
			return 0, err
		}
		it.Take(m)
	}
	return n, d.End(&it)
}

// dictPairs decodes a Dict into attribute pairs (Type.attrs,
// ClassInstance.attrs).
func (d *dec) dictPairs(wt protowire.Type, b []byte, dst *[]value.Pair) (int, error) {
	return d.field1(wt, b, func(wt protowire.Type, b []byte) (int, error) {
		k, v, n, err := d.pair(wt, b)
		if err != nil {
			return 0, err
		}
		s, err := grow(d, *dst, budget.PairCost)
		if err != nil {
			return 0, err
		}
		*dst = append(s, value.Pair{Key: k, Value: v})
		return n, nil
	})
}

// pair decodes a Pair (a generated message: "Pair.key", "Pair.value").
// Both fields are required. Its loop is wire.Walk's, inlined on this hot
// path (see objectBody).
func (d *dec) pair(wt protowire.Type, b []byte) (k, v value.NodeID, n int, err error) {
	pv, n, err := d.Msg(wt, b)
	if err != nil {
		return 0, 0, 0, err
	}
	var kp, vp pobj
	var kSet, vSet bool
	it := d.Iter(pv)
	for it.More() {
		num, wt, err := it.Next()
		if err != nil {
			return 0, 0, 0, err
		}
		var m int
		switch num {
		case 1:
			m, err = d.object(wt, it.B, &kp)
			err, kSet = push(err, "Pair.key"), true
		case 2:
			m, err = d.object(wt, it.B, &vp)
			err, vSet = push(err, "Pair.value"), true
		default:
			err = it.Skip(num, wt, d.Level-1)
		}
		if err != nil {
			return 0, 0, 0, err
		}
		it.Take(m)
	}
	if err := d.End(&it); err != nil {
		return 0, 0, 0, err
	}
	if !kSet {
		return 0, 0, 0, fail(valuecheck.MissingField("Pair.key"))
	}
	if !vSet {
		return 0, 0, 0, fail(valuecheck.MissingField("Pair.value"))
	}
	rest := cap(pv) - len(pv)
	if k, err = d.pairSide(&kp, rest, "Pair.key"); err != nil {
		return 0, 0, 0, err
	}
	v, err = d.pairSide(&vp, rest, "Pair.value")
	return k, v, n, err
}

// pairSide finishes Pair.key or Pair.value, whose occurrences merged, once
// the Pair has ended (rest frame bytes after it). The worker checks a
// value's kind when its parent container converts it, outside the Pair,
// so that one error carries no Pair segment.
func (d *dec) pairSide(p *pobj, rest int, path string) (value.NodeID, error) {
	if p.arm == 0 {
		return 0, fail(valuecheck.MissingField("MontyObject.kind"))
	}
	id, err := d.finish(p, rest)
	return id, push(err, path)
}

// root merges one occurrence of a message's singular value field into p
// and, once the merged value has a kind, appends its node. The worker
// checks a root value's kind only when it uses the value, after the frame
// decoded, so a value still without a kind (p.arm 0; a later occurrence
// may give it one) is left for the conversion checks.
func (d *dec) root(wt protowire.Type, b []byte, p *pobj) (value.NodeID, int, error) {
	n, err := d.object(wt, b, p)
	if err != nil {
		return 0, 0, err
	}
	if p.arm == 0 {
		return 0, n, nil
	}
	id, err := d.finish(p, cap(b)-n)
	return id, n, err
}

// rootField merges one occurrence of a singular value field (seg) into p
// with root, setting *dst to its node and *set.
func (d *dec) rootField(wt protowire.Type, b []byte, p *pobj, dst *value.NodeID, set *bool, seg string) (int, error) {
	id, n, err := d.root(wt, b, p)
	if err != nil {
		return 0, push(err, seg)
	}
	*dst, *set = id, true
	return n, nil
}

func (d *dec) bigInt(wt protowire.Type, b []byte, p *pobj) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.BoolAt(wt, b, &p.neg, "BigInt.negative")
		case 2:
			v, n, err := wire.BytesField(wt, b)
			if err == nil {
				err = d.Charge(int64(len(v)))
				p.raw = v
			}
			return wire.Wrap(n, err, "BigInt.magnitude")
		}
		return -1, nil
	})
}

func (d *dec) cycle(wt protowire.Type, b []byte, p *pobj) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (int, error) {
		switch num {
		case 1:
			return wire.IntAt(wt, b, &p.num, "Cycle.identity")
		case 2:
			return d.TextAt(wt, b, &p.text, "Cycle.placeholder")
		}
		return -1, nil
	})
}

// typeMsg decodes a Type (hand-written in the worker: no path segments,
// but its Uuid is generated).
func (d *dec) typeMsg(wt protowire.Type, b []byte, ts *typeState) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (n int, err error) {
		switch num {
		case 1:
			ts.t.Name, n, err = d.str(wt, b)
		case 2:
			ts.idSeen = true
			n, err = d.uuidMsg(wt, b, &ts.t.ID, &ts.idLen)
		case 3:
			n, err = wire.Int(wt, b, &ts.origin)
		case 4:
			n, err = wire.Bool(wt, b, &ts.t.IsDataclass)
		case 5:
			ts.attrsSeen = true
			n, err = d.dictPairs(wt, b, &ts.t.Attrs)
		default:
			return -1, nil
		}
		return n, err
	})
}

// classInstance decodes a ClassInstance (hand-written in the worker).
func (d *dec) classInstance(wt protowire.Type, b []byte, ci *ciState) (int, error) {
	return d.message(wt, b, func(num protowire.Number, wt protowire.Type, b []byte) (n int, err error) {
		switch num {
		case 1:
			if err := wire.NewAt(&d.Dec, &ci.typ); err != nil {
				return 0, err
			}
			n, err = d.typeMsg(wt, b, ci.typ)
		case 2:
			ci.iidSeen = true
			n, err = d.uuidMsg(wt, b, &ci.iid, &ci.iidLen)
		case 3:
			ci.attrsSeen = true
			n, err = d.dictPairs(wt, b, &ci.attrs)
		default:
			return -1, nil
		}
		return n, err
	})
}

// checkType applies the Type rules in the worker's order: origin, id and
// attrs presence and the builtin name (value.CheckType), then the uuid
// length.
func checkType(ts *typeState) error {
	if err := wire.CheckType(&ts.t, ts.origin, ts.idSeen, ts.idLen, ts.attrsSeen); err != nil {
		return err
	}
	if ts.attrsSeen && ts.t.Attrs == nil {
		// Present but empty: keep the presence so that it re-encodes.
		ts.t.Attrs = []value.Pair{}
	}
	return nil
}

// countFields counts the occurrences of field num with a payload of at
// least minLen bytes (the smallest valid element) in message body b,
// without decoding them. It stops at anything malformed, which the
// decoder proper then reports.
func countFields(b []byte, num protowire.Number, minLen uint64) int {
	n := 0
	end := len(b)
	key := byte(num)<<3 | byte(protowire.BytesType)
	for p := 0; p < end; {
		if num < 16 && p+1 < end && b[p] == key && b[p+1] < 0x80 {
			// The common element: a one-byte key and length.
			v := int(b[p+1])
			if v > end-p-2 {
				break
			}
			p += 2 + v
			if uint64(v) >= minLen {
				n++
			}
			continue
		}
		k, l := protowire.ConsumeVarint(b[p:end])
		if l < 0 {
			break
		}
		p += l
		f, wt := protowire.Number(k>>3), protowire.Type(k&7)
		if wt == protowire.BytesType {
			v, l := protowire.ConsumeVarint(b[p:end])
			if l < 0 || v > uint64(end-p-l) {
				break
			}
			p += l + int(v)
			if f == num && v >= minLen {
				n++
			}
			continue
		}
		m := protowire.ConsumeFieldValue(f, wt, b[p:end])
		if m < 0 {
			break
		}
		p += m
	}
	return n
}

// presize makes room for a container of n elements, each holding per
// references and at least per nodes, and for the container's own node,
// before decoding it. Large flat
// containers then fill their slices in place instead of growing them
// step by step. The room is charged like any growth; the count comes from
// the wire, where every element takes at least four bytes (eight for a
// Pair).
func (d *dec) presize(p *pobj, n, per int) error {
	if n == 0 {
		return nil
	}
	if need := len(p.refs) + n*per; need > cap(p.refs) {
		nc := max(need, 2*cap(p.refs))
		if err := d.Bud.ChargeMul(int64(nc), budget.RefCost); err != nil {
			return fail(codec.ErrBudget)
		}
		refs := make([]value.NodeID, len(p.refs), nc)
		copy(refs, p.refs)
		p.refs = refs
	}
	nodes := d.g.Nodes
	if need := len(nodes) + n*per + 1; need > cap(nodes) { // the elements and the container
		nc := max(need, 2*cap(nodes), budget.MinCap)
		if err := d.Bud.ChargeMul(int64(nc), nodeCost); err != nil {
			return fail(codec.ErrBudget)
		}
		ns := make([]value.Node, len(nodes), nc)
		copy(ns, nodes)
		d.g.Nodes = ns
	}
	return nil
}

// add appends n to the graph.
//
// It writes only the fields the slot needs: the decoder allocates every
// node slice itself and never removes nodes, so the slot beyond the
// length is still zero, and a scalar node then stores no pointer at all.
// Copying a whole node writes its payload pointer, which costs a write
// barrier whenever the garbage collector is marking, as it often is while
// a large frame is being decoded. (The slot is checked anyway, so a
// graph that arrives with a dirty tail is still written correctly.)
func (d *dec) add(n value.Node) (value.NodeID, error) {
	g := d.g
	i := len(g.Nodes)
	if i == cap(g.Nodes) {
		if i >= math.MaxUint32 {
			return 0, fail(errTooManyNodes)
		}
		if err := d.growNodes(); err != nil {
			return 0, err
		}
	}
	g.Nodes = g.Nodes[:i+1] // writes the length only
	slot := &g.Nodes[i]
	if n.HasPayload() || slot.HasPayload() {
		*slot = n
	} else {
		slot.Kind, slot.Num = n.Kind, n.Num
	}
	return value.NodeID(i), nil
}

// finish appends the node of a decoded MontyObject, whose arm checkArm has
// checked (children are already in the graph, so the graph stays in
// post-order); rest is the number of frame bytes after the object.
func (d *dec) finish(p *pobj, rest int) (value.NodeID, error) {
	d.rest = rest
	n := value.Node{Kind: value.Kind(p.arm)}
	switch p.arm {
	case 0:
		return 0, fail(valuecheck.MissingField("MontyObject.kind"))
	case armEllipsis, armNone, armNotImplemented:
	case armBool, armInt, armFloat:
		n.Num = p.num
	case armBigInt:
		return d.finishBigInt(p)
	case armStr, armPath, armRepr:
		n.SetText(p.text)
	case armBuiltinFunction:
		n.SetText(p.text)
	case armCycle:
		n.SetText(p.text)
		n.Num = p.num
	case armBytes:
		n.SetExt(p.raw)
		if p.raw == nil {
			n.SetExt([]byte{})
		}
	case armList, armTuple, armSet, armFrozenSet, armDict:
		n.SetRefs(p.refs)
	case armNamedTuple:
		nt := p.ext.(*value.NamedTuple)
		nt.FieldNames = p.names
		n.SetRefs(p.refs)
		n.SetExt(nt)
	case armDate, armTime, armDateTime, armTimeDelta, armTimeZone, armException, armFunction, armFileHandle:
		n.SetExt(p.ext)
	case armType:
		n.SetExt(&p.ts.t)
	case armClassInstance:
		return d.finishInstance(p.ci)
	}
	return d.add(n)
}

// growNodes makes room for at least one more node. The first allocation
// of a message's graph is sized to what the rest of the frame (d.rest) can
// still hold (every further node takes at least minNodeWire bytes of it), so
// that a small message with one or two values, such as a host call,
// allocates no more nodes than it needs; later growth doubles as usual.
// The replacement allocation is charged in full before it is made.
func (d *dec) growNodes() error {
	nodes := d.g.Nodes
	if cap(nodes) == 0 {
		nc := min(budget.MinCap, 1+d.rest/minNodeWire)
		if err := d.Bud.ChargeMul(int64(nc), nodeCost); err != nil {
			return fail(codec.ErrBudget)
		}
		d.g.Nodes = make([]value.Node, 0, nc)
		return nil
	}
	nodes, err := grow(d, nodes, nodeCost)
	if err != nil {
		return err
	}
	d.g.Nodes = nodes
	return nil
}

// minNodeWire is a lower bound on the frame bytes behind each decoded node
// but the first: a MontyObject field takes a key, a length and an arm
// key, and a class node comes from a nested Type that takes more.
const minNodeWire = 3

func (d *dec) finishBigInt(p *pobj) (value.NodeID, error) {
	mag := p.raw
	for len(mag) > 0 && mag[0] == 0 {
		mag = mag[1:]
	}
	if len(mag) <= 8 {
		var buf [8]byte
		copy(buf[8-len(mag):], mag)
		u := binary.BigEndian.Uint64(buf[:])
		switch {
		case !p.neg && u <= math.MaxInt64:
			return d.add(value.Int(int64(u)))
		case p.neg && u <= 1<<63:
			return d.add(value.Int(int64(-u)))
		}
	}
	limbs := int64((len(mag) + 7) / 8 * 8)
	if limbs < 32 {
		limbs = 32
	}
	if err := d.Charge(limbs); err != nil {
		return 0, err
	}
	b := new(big.Int).SetBytes(mag)
	if p.neg {
		b.Neg(b)
	}
	return d.add(value.Node{Kind: value.KindBigInt}.WithExt(b))
}

// checkInstance applies the ClassInstance rules in the worker's order.
func checkInstance(ci *ciState) error {
	if ci.typ == nil {
		return valuecheck.MissingField("ClassInstance.type")
	}
	if err := checkType(ci.typ); err != nil {
		return err
	}
	if ci.typ.t.Origin == value.OriginBuiltin {
		return valuecheck.InvalidValue("ClassInstance.type", "must be a class type, not a builtin")
	}
	return wire.CheckInstance("ClassInstance", ci.iidSeen, ci.iidLen, ci.attrsSeen)
}

func (d *dec) finishInstance(ci *ciState) (value.NodeID, error) {
	class, err := d.classNode(&ci.typ.t)
	if err != nil {
		return 0, err
	}
	x, err := wire.New[value.ClassInstance](&d.Dec)
	if err != nil {
		return 0, err
	}
	*x = value.ClassInstance{Class: class, InstanceID: ci.iid, Attrs: ci.attrs}
	return d.add(value.Node{Kind: value.KindClassInstance}.WithExt(x))
}

// classNode returns the KindType node for an instance's class. Instances
// of one class within a message share one node when their nested Types
// agree (and carry no attrs); the nested Type is otherwise kept as sent.
func (d *dec) classNode(t *value.Type) (value.NodeID, error) {
	if t.Attrs == nil {
		if id, ok := d.classes[t.ID]; ok {
			o := d.g.Nodes[id].Ext().(*value.Type)
			if o.Name == t.Name && o.Origin == t.Origin && o.IsDataclass == t.IsDataclass && o.Attrs == nil {
				return id, nil
			}
		}
	}
	c, err := wire.New[value.Type](&d.Dec)
	if err != nil {
		return 0, err
	}
	*c = *t
	id, err := d.add(value.Node{Kind: value.KindType}.WithExt(c))
	if err != nil || t.Attrs != nil {
		return id, err
	}
	if err := d.Charge(64); err != nil { // the map entry
		return 0, err
	}
	if d.classes == nil {
		d.classes = make(map[value.UUID]value.NodeID)
	}
	d.classes[t.ID] = id
	return id, nil
}
