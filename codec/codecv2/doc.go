// Package codecv2 implements [codec.Codec] for protocol version 2, the
// tree protocol of the released Monty worker (npm @pydantic/monty-linux-x64-gnu
// 0.0.23). It maps every protocol-2 message onto the same [message] and
// [value] domain types as the protocol-4 codec.
//
// # Values
//
// Protocol 2 sends values as recursive MontyObject trees. Decoding turns a
// tree into a [value.Graph] in post-order (children are appended before
// their parent). Every occurrence of a sub-object becomes its own node,
// because the protocol has no sharing marker; the one exception is the
// class Type nested in each ClassInstance, which becomes a KindType node
// referenced by [value.ClassInstance.Class] and is shared by the instances
// of one class within a message. A Cycle{identity, placeholder} becomes a
// KindCycle node with Text = placeholder and Num = identity.
//
// Encoding expands a node referenced several times at each occurrence. The
// encoder sizes every node before writing anything, so a graph whose
// expansion would exceed the frame cap (for instance 40 levels of lists
// that each hold the level below twice) is refused with a
// [*codec.EncodeError] in linear time.
//
// # Wire compatibility
//
// The encoder writes the messages through the message layer every version
// shares, with protocol 2's tags, and the values as MontyObject trees. It
// writes exactly the bytes the worker writes: fields in
// ascending field-number order with oneof arms in their numeric place,
// implicit-presence zeros omitted, optional fields and oneof arms written
// even when zero, negative int32 values as ten-byte varints, and
// ResolveFutures.pending_call_ids packed. Re-encoding a decoded worker
// frame reproduces it byte for byte.
//
// The decoder follows prost, the worker's protobuf library: unknown fields
// are skipped, a repeated occurrence of a message field merges into the
// earlier one, a oneof keeps its last arm, nesting is limited to
// [MaxDepth] levels, and errors read like the worker's, with the enclosing
// fields listed innermost first, e.g.
//
//	failed to decode Protobuf message: Pair.value: NamedValue.value: Feed.inputs: ParentRequest.kind: invalid value for Date.day: 30 is outside the range 1..=29
//
// As in the worker, the value messages MontyObject, ObjectList, Dict,
// NamedTuple, Type and ClassInstance add no path segment of their own.
// Rules the worker applies when it converts a decoded request (a required
// oneof such as ExtFunctionResult.kind, exception names) produce a
// structural [*codec.DecodeError] without the prefix. Events decode as
// upstream's Rust parent decodes them (testdata/rustparent): it reads a
// FunctionCall as it reads values, naming none of the message's own
// fields ("ChildEvent.kind: invalid string value: …" for a function_name
// that is not UTF-8) and checking each object_id as it ends, and what it
// refuses once an event has decoded (an Error without an exception, an
// OsCall without a call) is a structural error here too. Each frame is decoded
// against a fresh decode budget; exceeding it gives an error matching
// [codec.ErrBudget].
//
// A value without a kind inside a container is a decode error, as in the
// worker. The worker reports a root value without a kind, or a NamedValue
// without a value, only when it uses the input; the domain types cannot
// hold either, so here they are structural errors of the decode.
//
// # What protocol 2 cannot express
//
// Encoding fails with a *codec.EncodeError for Feed.Cwd, for
// FunctionCall.AllowEagerAwait, for the urandom OS call, for a Print with
// more or fewer than one segment, and for the uuid value arm (kind 10).
package codecv2
