package codecv5

import (
	"github.com/gomonty/monty/codec"
	codecv4 "github.com/gomonty/monty/codec/codecv4"
	"github.com/gomonty/monty/codec/internal/registry"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// c is the protocol-5 coder: codec/codecv4's message layer with protocol 5's
// tag table.
var c = codecv4.V5()

// Codec is the protocol-5 codec, registered with package codec. It is
// stateless and safe for concurrent use.
var Codec codec.Codec = c

func init() { registry.Add(Codec.Version(), Codec) }

// AppendRequest appends the canonical protocol-5 encoding of r to dst. The
// frame cap is protocol.MaxFrameLen; nothing is appended when encoding
// fails. A field protocol 5 cannot express fails with an error matching
// codec.ErrUnsupported.
func AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error) {
	return c.AppendRequest(dst, r)
}

// AppendRequestLimits is AppendRequest with the frame cap of lim.
func AppendRequestLimits(dst []byte, r *message.ParentRequest, lim codec.Limits) ([]byte, error) {
	return c.AppendRequestLimits(dst, r, lim)
}

// AppendEvent appends the canonical protocol-5 encoding of e to dst.
func AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error) {
	return c.AppendEvent(dst, e)
}

// AppendEventLimits is AppendEvent with the frame cap of lim.
func AppendEventLimits(dst []byte, e *message.ChildEvent, lim codec.Limits) ([]byte, error) {
	return c.AppendEventLimits(dst, e, lim)
}

// DecodeRequest decodes one ParentRequest frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func DecodeRequest(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	return c.DecodeRequest(frame, lim)
}

// DecodeEvent decodes one ChildEvent frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func DecodeEvent(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	return c.DecodeEvent(frame, lim)
}

// DecodeArena decodes a bare Arena message (identical to protocol 4's).
func DecodeArena(frame []byte, lim codec.Limits, roots ...value.NodeID) (*value.Graph, error) {
	return c.DecodeArena(frame, lim, roots...)
}
