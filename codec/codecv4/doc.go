// Package codecv4 is the codec of Monty's protocol 4 (the arena protocol):
// a hand-written protobuf codec (on protowire) between frame bodies and the
// domain types of packages message and value.
//
// It also serves protocol 5, which keeps protocol 4's arena, nodes,
// exceptions and arms and differs in a few tags: the message-level code
// reads those tags from a version's tag table (the internal core.Dialect,
// the one place the protocol-5 numbers live), and package codec/codecv5
// registers the protocol-5 instance. The messages around the values are
// written by the message layer all versions share (package
// codec/internal/core); this package writes the arena and its nodes.
//
// It registers itself with package codec; import it for that side effect or
// use its functions directly:
//
//	e, err := codecv4.DecodeEvent(body, codec.Limits{})
//	body, err = codecv4.AppendRequest(body[:0], req)
//
// # Decoding
//
// Bytes are decoded straight into the domain types, with no intermediate
// generated structs, against a fresh decode budget per frame
// (codec.Limits.DecodeBudget, 1 GiB by default). Everything the decode
// allocates is charged before it is allocated and nothing is refunded; the
// charging rules are those of the protocol (see alloc.go for the details
// and the Go-specific parts). An over-budget frame fails with an error
// matching codec.ErrBudget.
//
// Errors are *codec.DecodeError. Wire and leaf-value errors read
// "failed to decode Protobuf message: {path}: {reason}", the path naming the
// enclosing fields innermost first, as upstream's decoder does (for example
// "MontyNode.kind: Complete.values: ChildEvent.kind: frame exceeds decode
// memory budget"). A node's arm is its only segment: the leaf messages
// inside a node (Date, TimeZone, …) add none of their own, while the same
// messages outside the arena (DateTimeNow.tz, protocol 5's fixed sandbox
// timezone) name their fields, as the generated code does ("TimeZone.name:
// DateTimeNow.tz: OsCall.call: ChildEvent.kind: …"). Checks made once the
// frame has decoded (arena structure and roots, required fields of
// converted messages, exception sanity) are Structural and read like
// "invalid value for Arena: …".
//
// Protobuf merge semantics hold throughout: the last scalar wins, repeated
// fields concatenate, a repeated message field or oneof arm merges, and a
// different oneof arm replaces the earlier payload, which is then never
// validated. Node leaf rules run once a whole node message has been read.
// Unknown fields are skipped. The decoder never panics and never recurses
// deeper than the schema's fixed message nesting (unknown groups are
// skipped iteratively, to a depth of 100).
//
// Decoded values never alias the frame. Empty repeated fields decode as
// nil; bytes values are never nil.
//
// # Encoding
//
// AppendRequest and AppendEvent write the canonical bytes upstream's peers
// write: fields in ascending field-number order with a oneof arm in its
// numeric place (so ChildEvent's fields 20–23 and ParentRequest's 20 follow
// the arm), implicit-presence zeros left out, oneof arms and optional
// fields always written when set, node ids packed. An Arena field is
// written when its graph has nodes. Graphs are validated first (leaf rules,
// post-order, class references, roots); the frame cap is checked on the
// computed size before anything is written, and nothing is appended when
// encoding fails.
package codecv4
