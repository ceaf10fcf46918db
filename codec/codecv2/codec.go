package codecv2

import (
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/registry"
	"github.com/gomonty/monty/codec/internal/wire"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// MaxDepth is the deepest protobuf message nesting a frame may have: a
// message nested d levels below the frame's top message (level 0) is
// accepted when d <= MaxDepth. It is prost's default recursion limit, which
// the worker's decoder applies, so a request this package encodes is never
// refused as "recursion limit reached", and the decoder refuses exactly
// what the worker refuses.
//
// Probed on the released worker (monty 0.0.23) through Feed.inputs, where
// a value's MontyObject sits at level 3, each list adds two levels (the
// MontyObject and its ObjectList) and each dict three (MontyObject, Dict,
// Pair):
//
//   - an int or None inside 48 nested lists is accepted, inside 49 refused;
//   - 49 nested lists whose innermost list is empty are accepted, 50 refused;
//   - an int inside 32 nested dicts is accepted, inside 33 refused.
//
// The worker's own output stays within the same bound (it fails with "Max
// output depth exceeded" past 48 lists, 32 dicts or 24 nested instances),
// so the decoder applies it to events as well.
const MaxDepth = 100

// V2 is the protocol-2 codec. It is stateless; the zero value is ready to
// use and safe for concurrent use.
type V2 struct{}

// Codec is the protocol-2 codec, registered with package codec.
var Codec codec.Codec = V2{}

func init() { registry.Add(Codec.Version(), Codec) }

// Version returns 2.
func (V2) Version() uint32 { return protocol.Version2 }

// AppendRequest appends the canonical encoding of r to dst.
func (V2) AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error) {
	return AppendRequest(dst, r)
}

// DecodeRequest decodes one ParentRequest frame body.
func (V2) DecodeRequest(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	return DecodeRequest(frame, lim)
}

// AppendEvent appends the canonical encoding of e to dst.
func (V2) AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error) {
	return AppendEvent(dst, e)
}

// DecodeEvent decodes one ChildEvent frame body.
func (V2) DecodeEvent(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	return DecodeEvent(frame, lim)
}

// AppendRequest appends the canonical protocol-2 encoding of r to dst. It
// fails with a *codec.EncodeError, leaving dst unchanged, when r holds an
// invalid value graph, nests deeper than MaxDepth, would exceed the frame
// cap, or uses something protocol 2 cannot express (Feed.Cwd).
func AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error) {
	return appendRequest(dst, r, codec.Limits{})
}

// AppendRequestLimits is AppendRequest with the frame cap of lim.
func AppendRequestLimits(dst []byte, r *message.ParentRequest, lim codec.Limits) ([]byte, error) {
	return appendRequest(dst, r, lim)
}

// AppendEvent appends the canonical protocol-2 encoding of e to dst.
// Besides the checks of AppendRequest it refuses what protocol 2 cannot
// express: a Print with other than one segment, an unknown print stream,
// FunctionCall.AllowEagerAwait and the urandom OS call.
func AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error) {
	return appendEvent(dst, e, codec.Limits{})
}

// AppendEventLimits is AppendEvent with the frame cap of lim.
func AppendEventLimits(dst []byte, e *message.ChildEvent, lim codec.Limits) ([]byte, error) {
	return appendEvent(dst, e, lim)
}

// DecodeRequest decodes one ParentRequest frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func DecodeRequest(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	return decodeRequest(frame, lim)
}

// DecodeEvent decodes one ChildEvent frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func DecodeEvent(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	return decodeEvent(frame, lim)
}

// DecodeValue decodes a bare MontyObject (its body, without a field key or
// length) into a fresh graph and returns the graph and the root's id. The
// object is level 0 for MaxDepth.
func DecodeValue(b []byte, lim codec.Limits) (*value.Graph, value.NodeID, error) {
	g, root, err := decodeValue(b, lim)
	return g, root, wire.AsDecodeError(err)
}

func decodeValue(b []byte, lim codec.Limits) (*value.Graph, value.NodeID, error) {
	if len(b) > lim.FrameLen() {
		return nil, 0, frameTooLong(len(b), lim.FrameLen())
	}
	d, b := newDec(b, lim)
	g := &value.Graph{}
	d.g = g
	var p pobj
	if err := d.objectBody(b, &p); err != nil {
		return nil, 0, err
	}
	root, err := d.finish(&p, 0)
	if err != nil {
		return nil, 0, err
	}
	return g, root, nil
}

// AppendValue appends node root of g as a bare MontyObject (see
// DecodeValue), expanding shared sub-objects.
func AppendValue(dst []byte, g *value.Graph, root value.NodeID, lim codec.Limits) ([]byte, error) {
	return appendValue(dst, g, root, lim)
}
