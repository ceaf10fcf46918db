// Package core is the message layer the codecs share: the tag table of each
// protocol version (Dialect) and the encoder of every request and event
// message over it. A codec supplies what its version writes differently,
// the values (Values: an arena and node ids at 4 and 5, nested MontyObject
// messages at 2). Before calling in, a codec runs the check walk
// (CheckRequest, CheckEvent) with its own Checker, which names what the
// walk finds and decides which finding wins. Everything here is safe for
// concurrent use; the Dialect tables are read-only.
package core

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/gomonty/monty/codec/internal/leaf"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Dialect is the table of tag numbers in which protocols 2, 4 and 5
// differ. Everything else (exceptions, the request and event arms, the
// resumes, ExtFunctionResult, the OS call arguments) is numbered alike, so
// one message layer serves every version, reading its tags from here. A
// zero tag means the version has no such field: a decoder skips it as
// unknown and the encoder never writes it.
//
// The protocol-5 numbers are the best reading of upstream's newest
// readable schema (see proto/montyp5/v1/montyp5.proto); upstream has
// renumbered at release time before, so they live only here. The encoder
// writes each message's fields in the order of this table's numbers;
// TestDialectOrder checks that the order is ascending.
type Dialect struct {
	Version uint32
	Name    string // "codecv2", "codecv4" or "codecv5", for error texts

	// ResourceLimits
	LimDuration protowire.Number // max_duration_micros (2, 4: 1)
	LimFeed     protowire.Number // max_feed_duration_micros (5: 6)
	LimTurn     protowire.Number // max_turn_duration_micros (5: 7)
	LimSleep    protowire.Number // max_total_sleep_micros (5: 8)

	// Configure
	CfgPolicy      protowire.Number // os_policy (5: 11)
	CfgPersistence protowire.Number // persistence (5: 12)
	CfgProfile     protowire.Number // profile (5: 13)

	// Requests
	FeedValues   protowire.Number // Feed.values (4: 3)
	FeedSkip     protowire.Number // Feed.skip_type_check (2: 3, 4: 4)
	FeedCwd      protowire.Number // Feed.cwd (4: 5)
	CallValues   protowire.Number // ResumeCall.values (4: 3)
	LookupValues protowire.Number // ResumeNameLookup.values (4: 1)
	// LookupArm is ResumeNameLookup's value arm; undefined and error
	// follow it (2: 1, 4: 2).
	LookupArm     protowire.Number
	FutureValues  protowire.Number // ResumeFutures.values (4: 2)
	CompleteValue protowire.Number // Complete.values (4: 2)

	// ChildEvent
	EvDuration     protowire.Number // max_duration_micros (2, 4: 21)
	EvScriptName   protowire.Number // restored_script_name (2: 22, 4, 5: 23)
	EvSuspensions  protowire.Number // max_suspensions (2: 23, 4, 5: 22)
	EvFeedExec     protowire.Number // feed_execution_micros (5: 24)
	EvFeedLimit    protowire.Number // max_feed_duration_micros (5: 25)
	EvTurnLimit    protowire.Number // max_turn_duration_micros (5: 26)
	EvSleep        protowire.Number // max_total_sleep_micros (5: 27)
	EvSessionID    protowire.Number // session_id (5: 28)
	PrintSegmented bool             // Print holds repeated segments (4, 5); at 2 it is one

	// FunctionCall
	FcEager    protowire.Number // allow_eager_await (4: 6)
	FcValues   protowire.Number // values (4: 7)
	FcPosition protowire.Number // position (5: 8)

	// Source positions of the other suspensions
	NlPosition protowire.Number // NameLookup.position (5: 3)
	RfPosition protowire.Number // ResolveFutures.position (5: 2)
	OsPosition protowire.Number // OsCall.position (5: 52)

	// OsCall
	OsValues protowire.Number // values (4: 26, 5: 50)
	OsEager  protowire.Number // allow_eager_await (5: 51)
	OsLast   message.OsOp     // the last op numbered as its arm (2: date_time_now, 4, 5: urandom)
	// OsArms maps the protocol-5 ops (message.OpTime..OpAsyncSystemSleep)
	// to their arm tags; all zero at 2 and 4.
	OsArms [5]protowire.Number
}

var (
	// Dialect2 is protocol 2's table (the released worker's).
	Dialect2 = &Dialect{
		Version:       protocol.Version2,
		Name:          "codecv2",
		LimDuration:   1,
		FeedSkip:      3,
		LookupArm:     1,
		EvDuration:    21,
		EvScriptName:  22,
		EvSuspensions: 23,
		OsLast:        message.OpDateTimeNow,
	}
	// Dialect4 is protocol 4's table.
	Dialect4 = &Dialect{
		Version:        protocol.Version,
		Name:           "codecv4",
		LimDuration:    1,
		FeedValues:     3,
		FeedSkip:       4,
		FeedCwd:        5,
		CallValues:     3,
		LookupValues:   1,
		LookupArm:      2,
		FutureValues:   2,
		CompleteValue:  2,
		EvDuration:     21,
		EvScriptName:   23,
		EvSuspensions:  22,
		PrintSegmented: true,
		FcEager:        6,
		FcValues:       7,
		OsValues:       26,
		OsLast:         message.OpUrandom,
	}
	// Dialect5 is protocol 5's table.
	Dialect5 = &Dialect{
		Version:        protocol.Version5,
		Name:           "codecv5",
		LimFeed:        6,
		LimTurn:        7,
		LimSleep:       8,
		CfgPolicy:      11,
		CfgPersistence: 12,
		CfgProfile:     13,
		FeedValues:     3,
		FeedSkip:       4,
		FeedCwd:        5,
		CallValues:     3,
		LookupValues:   1,
		LookupArm:      2,
		FutureValues:   2,
		CompleteValue:  2,
		EvScriptName:   23,
		EvSuspensions:  22,
		EvFeedExec:     24,
		EvFeedLimit:    25,
		EvTurnLimit:    26,
		EvSleep:        27,
		EvSessionID:    28,
		PrintSegmented: true,
		FcEager:        6,
		FcValues:       7,
		FcPosition:     8,
		NlPosition:     3,
		RfPosition:     2,
		OsPosition:     52,
		OsValues:       50,
		OsEager:        51,
		OsLast:         message.OpUrandom,
		OsArms:         [5]protowire.Number{26, 27, 28, 29, 30},
	}
)

// OsArm returns the arm tag of op, or 0 when this version has no such op.
func (v *Dialect) OsArm(op message.OsOp) protowire.Number {
	switch {
	case op >= message.OpExists && op <= v.OsLast:
		return protowire.Number(op)
	case op >= message.OpTime && op <= message.OpAsyncSystemSleep:
		return v.OsArms[op-message.OpTime]
	}
	return 0
}

// OsOp returns the op of arm tag num, or 0 when num is not an arm of this
// version.
func (v *Dialect) OsOp(num protowire.Number) message.OsOp {
	if num >= protowire.Number(message.OpExists) && num <= protowire.Number(v.OsLast) {
		return message.OsOp(num)
	}
	for i, t := range v.OsArms {
		if t != 0 && t == num {
			return message.OpTime + message.OsOp(i)
		}
	}
	return 0
}

// Limits are the dialect's ResourceLimits field numbers.
func (v *Dialect) Limits() leaf.LimitNums {
	return leaf.LimitNums{Duration: v.LimDuration, Feed: v.LimFeed, Turn: v.LimTurn, Sleep: v.LimSleep}
}
