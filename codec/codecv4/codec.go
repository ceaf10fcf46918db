package codecv4

import (
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/registry"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/frame"
	"github.com/gomonty/monty/internal/budget"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// Codec is the protocol-4 codec, registered with package codec.
var Codec codec.Codec = V4{}

func init() { registry.Add(Codec.Version(), Codec) }

// DecodeRequest decodes one ParentRequest frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func DecodeRequest(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	return V4{}.DecodeRequest(frame, lim)
}

// DecodeEvent decodes one ChildEvent frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func DecodeEvent(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	return V4{}.DecodeEvent(frame, lim)
}

// DecodeArena decodes a bare Arena message within lim and checks its
// structure and that every root is in range.
func DecodeArena(frame []byte, lim codec.Limits, roots ...value.NodeID) (*value.Graph, error) {
	g, _, err := decodeArena(frame, lim, roots)
	return g, err
}

// spent is what one decode charged to its budget (for tests).
type spent int64

// Charged returns the bytes charged.
func (s spent) Charged() int64 { return int64(s) }

// init prepares d to decode buf. The decoder lives on the caller's stack;
// it and its budget are the only state a decode does not charge for.
func (d *decoder) init(buf []byte, lim codec.Limits) ([]byte, error) {
	if d.v == nil {
		d.v = dialect4
	}
	if max := lim.FrameLen(); len(buf) > max {
		return nil, &codec.DecodeError{Structural: true,
			Err: &frame.TooLargeError{Len: uint64(len(buf)), Max: uint64(max)}}
	}
	d.Bud = *budget.New(lim.DecodeBudget())
	d.resetArm()
	// Capacity is used to measure what is left of the frame, so it must not
	// reach past the frame's end.
	return buf[:len(buf):len(buf)], nil
}

func decodeRequest(buf []byte, lim codec.Limits) (*message.ParentRequest, spent, error) {
	return decodeRequestIn(buf, lim, dialect4)
}

func decodeRequestIn(buf []byte, lim codec.Limits, v *dialect) (*message.ParentRequest, spent, error) {
	d := decoder{v: v}
	buf, err := d.init(buf, lim)
	if err != nil {
		return nil, 0, err
	}
	r, err := d.parentRequest(buf)
	if err == nil {
		if err = d.checkRequest(r); err != nil {
			err = &codec.DecodeError{Err: err, Structural: true}
		}
	}
	if err != nil {
		return nil, spent(d.Bud.Charged()), wire.AsDecodeError(err)
	}
	return r, spent(d.Bud.Charged()), nil
}

func decodeEvent(buf []byte, lim codec.Limits) (*message.ChildEvent, spent, error) {
	return decodeEventIn(buf, lim, dialect4)
}

func decodeEventIn(buf []byte, lim codec.Limits, v *dialect) (*message.ChildEvent, spent, error) {
	d := decoder{v: v}
	buf, err := d.init(buf, lim)
	if err != nil {
		return nil, 0, err
	}
	e, err := d.childEvent(buf)
	if err == nil {
		if err = d.checkEvent(e); err != nil {
			err = &codec.DecodeError{Err: err, Structural: true}
		}
	}
	if err != nil {
		return nil, spent(d.Bud.Charged()), wire.AsDecodeError(err)
	}
	return e, spent(d.Bud.Charged()), nil
}

func decodeArena(buf []byte, lim codec.Limits, roots []value.NodeID) (*value.Graph, spent, error) {
	var d decoder
	buf, err := d.init(buf, lim)
	if err != nil {
		return nil, 0, err
	}
	g, err := wire.New[value.Graph](&d.Dec)
	if err == nil {
		err = d.arena(buf, g)
	}
	if err == nil {
		if err = g.CheckStructure(roots...); err != nil {
			err = &codec.DecodeError{Err: err, Structural: true}
		}
	}
	if err != nil {
		return nil, spent(d.Bud.Charged()), wire.AsDecodeError(err)
	}
	return g, spent(d.Bud.Charged()), nil
}
