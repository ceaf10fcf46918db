package wire

import (
	"encoding/binary"
	"errors"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/internal/budget"
)

// ErrDelimited is prost's text for a nested message whose last field runs
// past the message's length.
var ErrDelimited = errors.New("delimited length exceeded")

// MaxDepth is prost's recursion limit: the deepest message nesting a
// Cursor enters, counting the frame's top message as level 0.
const MaxDepth = 100

// Cursor reads one frame the way prost does: a nested message's fields are
// decoded from the enclosing buffer, so a length that overshoots the
// nested limit is caught when the message is left (ErrDelimited), while
// one that overshoots the frame is a buffer underflow. It tracks the
// message depth against MaxDepth and carries the frame's decode budget,
// which every allocation the decode makes is charged to first.
type Cursor struct {
	Bud   budget.Budget // held by value: one allocation fewer per frame
	Buf   []byte
	Pos   int
	Depth int // nesting level of the message being decoded; the frame's top message is 0
}

// Varint reads a varint.
func (c *Cursor) Varint() (uint64, error) {
	if c.Pos < len(c.Buf) && c.Buf[c.Pos] < 0x80 {
		v := uint64(c.Buf[c.Pos])
		c.Pos++
		return v, nil
	}
	v, n := protowire.ConsumeVarint(c.Buf[c.Pos:])
	if n < 0 {
		return 0, leaf.ErrVarint
	}
	c.Pos += n
	return v, nil
}

// Key reads a field key with prost's checks.
func (c *Cursor) Key() (protowire.Number, protowire.Type, error) {
	num, wt, n, err := Key(c.Buf[c.Pos:])
	c.Pos += n
	return num, wt, err
}

// Length reads a length prefix and checks it against the rest of the frame.
func (c *Cursor) Length() (int, error) {
	n, err := c.Varint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(c.Buf)-c.Pos) {
		return 0, leaf.ErrUnderflow
	}
	return int(n), nil
}

// Enter starts a nested message field and returns where it ends. Like
// prost it checks the wire type, then the recursion limit, then the length.
func (c *Cursor) Enter(wt protowire.Type) (int, error) {
	if err := Expect(wt, protowire.BytesType); err != nil {
		return 0, err
	}
	if c.Depth >= MaxDepth {
		return 0, leaf.ErrRecursion
	}
	n, err := c.Length()
	if err != nil {
		return 0, err
	}
	c.Depth++
	return c.Pos + n, nil
}

// Leave ends the nested message Enter started.
func (c *Cursor) Leave(end int) error {
	c.Depth--
	if c.Pos != end {
		return ErrDelimited
	}
	return nil
}

// Message decodes one occurrence of a nested message, handing each field
// to f, which must consume the field (Skip the fields it does not know).
func (c *Cursor) Message(wt protowire.Type, f func(num protowire.Number, wt protowire.Type) error) error {
	end, err := c.Enter(wt)
	if err != nil {
		return err
	}
	for c.Pos < end {
		num, wt, err := c.Key()
		if err != nil {
			return err
		}
		if err := f(num, wt); err != nil {
			return err
		}
	}
	return c.Leave(end)
}

// Skip skips an unknown field the way prost's skip_field does, including
// its recursion check (a message at the depth limit may not even carry
// unknown fields) and nested groups.
func (c *Cursor) Skip(num protowire.Number, wt protowire.Type) error {
	if c.Depth >= MaxDepth {
		return leaf.ErrRecursion
	}
	var n uint64
	switch wt {
	case protowire.VarintType:
		_, err := c.Varint()
		return err
	case protowire.Fixed64Type:
		n = 8
	case protowire.Fixed32Type:
		n = 4
	case protowire.BytesType:
		v, err := c.Varint()
		if err != nil {
			return err
		}
		n = v
	case protowire.StartGroupType:
		for {
			inum, iwt, err := c.Key()
			if err != nil {
				return err
			}
			if iwt == protowire.EndGroupType {
				if inum != num {
					return leaf.ErrEndGroup
				}
				break
			}
			c.Depth++
			err = c.Skip(inum, iwt)
			c.Depth--
			if err != nil {
				return err
			}
		}
	default:
		return leaf.ErrEndGroup
	}
	if n > uint64(len(c.Buf)-c.Pos) {
		return leaf.ErrUnderflow
	}
	c.Pos += int(n)
	return nil
}

// SkipMessage decodes a message with no known fields (Unit, Dump, Ok, …).
func (c *Cursor) SkipMessage(wt protowire.Type) error {
	return c.Message(wt, c.Skip)
}

// Uvarint reads a varint field's value.
func (c *Cursor) Uvarint(wt protowire.Type) (uint64, error) {
	if err := Expect(wt, protowire.VarintType); err != nil {
		return 0, err
	}
	return c.Varint()
}

// Fixed64 reads a 64-bit field's value.
func (c *Cursor) Fixed64(wt protowire.Type) (uint64, error) {
	if err := Expect(wt, protowire.Fixed64Type); err != nil {
		return 0, err
	}
	if len(c.Buf)-c.Pos < 8 {
		return 0, leaf.ErrUnderflow
	}
	v := binary.LittleEndian.Uint64(c.Buf[c.Pos:])
	c.Pos += 8
	return v, nil
}

// Raw returns a length-delimited payload as a view of the frame.
func (c *Cursor) Raw(wt protowire.Type) ([]byte, error) {
	if err := Expect(wt, protowire.BytesType); err != nil {
		return nil, err
	}
	n, err := c.Length()
	if err != nil {
		return nil, err
	}
	b := c.Buf[c.Pos : c.Pos+n : c.Pos+n]
	c.Pos += n
	return b, nil
}
