package codecv4

import (
	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/codec/internal/core"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/value"
)

// dialect is the table of tag numbers in which the protocol versions
// differ (package core, where protocol 2's table lives too). This package's
// decoder and encoder serve protocols 4 and 5 from it: package
// codec/codecv5 registers the protocol-5 instance.
type dialect = core.Dialect

var (
	dialect4 = core.Dialect4
	dialect5 = core.Dialect5
)

// Coder is the message codec of one protocol version built on this
// package's shared layer: the zero Coder (V4{}) is protocol 4's, V5()
// protocol 5's. It is stateless and safe for concurrent use.
type Coder struct{ v *dialect }

// V4 is the protocol-4 codec; the zero value is ready to use.
type V4 = Coder

// V5 returns the protocol-5 codec. Package codec/codecv5 registers it; use that
// package rather than calling this directly.
func V5() Coder { return Coder{dialect5} }

// dialect is the coder's tag table.
func (c Coder) dialect() *dialect {
	if c.v == nil {
		return dialect4
	}
	return c.v
}

// Version returns the protocol version.
func (c Coder) Version() uint32 { return c.dialect().Version }

// AppendRequest appends the canonical encoding of r to dst. The frame cap is
// protocol.MaxFrameLen; nothing is appended when encoding fails.
func (c Coder) AppendRequest(dst []byte, r *message.ParentRequest) ([]byte, error) {
	return appendRequest(dst, r, codec.Limits{}, c.dialect())
}

// AppendRequestLimits is AppendRequest with the frame cap of lim
// (lim.FrameLen()). Only MaxFrameLen of lim is used.
func (c Coder) AppendRequestLimits(dst []byte, r *message.ParentRequest, lim codec.Limits) ([]byte, error) {
	return appendRequest(dst, r, lim, c.dialect())
}

// DecodeRequest decodes one ParentRequest frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func (c Coder) DecodeRequest(frame []byte, lim codec.Limits) (*message.ParentRequest, error) {
	r, _, err := decodeRequestIn(frame, lim, c.dialect())
	return r, err
}

// AppendEvent appends the canonical encoding of e to dst. The frame cap is
// protocol.MaxFrameLen; nothing is appended when encoding fails.
func (c Coder) AppendEvent(dst []byte, e *message.ChildEvent) ([]byte, error) {
	return appendEvent(dst, e, codec.Limits{}, c.dialect())
}

// AppendEventLimits is AppendEvent with the frame cap of lim
// (lim.FrameLen()). Only MaxFrameLen of lim is used.
func (c Coder) AppendEventLimits(dst []byte, e *message.ChildEvent, lim codec.Limits) ([]byte, error) {
	return appendEvent(dst, e, lim, c.dialect())
}

// DecodeEvent decodes one ChildEvent frame body within lim. Errors are
// *codec.DecodeError; an over-budget frame also matches codec.ErrBudget.
func (c Coder) DecodeEvent(frame []byte, lim codec.Limits) (*message.ChildEvent, error) {
	e, _, err := decodeEventIn(frame, lim, c.dialect())
	return e, err
}

// DecodeArena decodes a bare Arena message (the same at 4 and 5).
func (c Coder) DecodeArena(frame []byte, lim codec.Limits, roots ...value.NodeID) (*value.Graph, error) {
	return DecodeArena(frame, lim, roots...)
}

// AppendArena appends a bare Arena message (the same at 4 and 5).
func (c Coder) AppendArena(dst []byte, g *value.Graph, roots ...value.NodeID) ([]byte, error) {
	return AppendArena(dst, g, roots...)
}
