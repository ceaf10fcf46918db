package codecv4

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/value"
)

// dialect is the table of tag numbers in which protocols 4 and 5 differ.
// Everything else (the arena and its nodes, exceptions, the request and
// event arms, Feed, the resumes, ExtFunctionResult) is shared, so one
// message layer serves both versions, reading its tags from here. A zero
// tag means the version has no such field: the decoder skips it as
// unknown and the encoder never writes it.
//
// The protocol-5 numbers are the best reading of upstream's newest
// readable schema (see proto/montyp5/v1/montyp5.proto); upstream has
// renumbered at release time before, so they live only here. The encoder
// writes each message's fields in the order of this table's current
// numbers; TestDialectOrder checks that the order is ascending.
type dialect struct {
	version uint32
	name    string // "codecv4" or "codecv5", for error texts

	// ResourceLimits
	limDuration protowire.Number // max_duration_micros (4: 1)
	limFeed     protowire.Number // max_feed_duration_micros (5: 6)
	limTurn     protowire.Number // max_turn_duration_micros (5: 7)
	limSleep    protowire.Number // max_total_sleep_micros (5: 8)

	// Configure
	cfgPolicy      protowire.Number // os_policy (5: 11)
	cfgPersistence protowire.Number // persistence (5: 12)
	cfgProfile     protowire.Number // profile (5: 13)

	// ChildEvent
	evDuration  protowire.Number // max_duration_micros (4: 21)
	evFeedExec  protowire.Number // feed_execution_micros (5: 24)
	evFeedLimit protowire.Number // max_feed_duration_micros (5: 25)
	evTurnLimit protowire.Number // max_turn_duration_micros (5: 26)
	evSleep     protowire.Number // max_total_sleep_micros (5: 27)
	evSessionID protowire.Number // session_id (5: 28)

	// Source positions of the suspensions
	fcPosition protowire.Number // FunctionCall.position (5: 8)
	nlPosition protowire.Number // NameLookup.position (5: 3)
	rfPosition protowire.Number // ResolveFutures.position (5: 2)
	osPosition protowire.Number // OsCall.position (5: 52)

	// OsCall
	osValues protowire.Number // values (4: 26, 5: 50)
	osEager  protowire.Number // allow_eager_await (5: 51)
	// osArms maps the protocol-5 ops (message.OpTime..OpAsyncSystemSleep)
	// to their arm tags; all zero at 4.
	osArms [5]protowire.Number
}

var (
	dialect4 = &dialect{
		version:     protocol.Version,
		name:        "codecv4",
		limDuration: 1,
		evDuration:  21,
		osValues:    26,
	}
	dialect5 = &dialect{
		version:        protocol.Version5,
		name:           "codecv5",
		limFeed:        6,
		limTurn:        7,
		limSleep:       8,
		cfgPolicy:      11,
		cfgPersistence: 12,
		cfgProfile:     13,
		evFeedExec:     24,
		evFeedLimit:    25,
		evTurnLimit:    26,
		evSleep:        27,
		evSessionID:    28,
		fcPosition:     8,
		nlPosition:     3,
		rfPosition:     2,
		osPosition:     52,
		osValues:       50,
		osEager:        51,
		osArms:         [5]protowire.Number{26, 27, 28, 29, 30},
	}
)

// osArm returns the arm tag of op, or 0 when this version has no such op.
func (v *dialect) osArm(op message.OsOp) protowire.Number {
	switch {
	case op >= message.OpExists && op <= message.OpUrandom:
		return protowire.Number(op)
	case op >= message.OpTime && op <= message.OpAsyncSystemSleep:
		return v.osArms[op-message.OpTime]
	}
	return 0
}

// osOp returns the op of arm tag num, or 0 when num is not an arm of this
// version.
func (v *dialect) osOp(num protowire.Number) message.OsOp {
	if num >= 2 && num <= 25 {
		return message.OsOp(num)
	}
	for i, t := range v.osArms {
		if t != 0 && t == num {
			return message.OpTime + message.OsOp(i)
		}
	}
	return 0
}

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
func (c Coder) Version() uint32 { return c.dialect().version }

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
