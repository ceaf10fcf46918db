// Package peek classifies ParentRequest and ChildEvent frames without
// decoding them.
//
// A forwarding server (for example a relay between a parent and a worker)
// needs to know which kind of message a frame carries, and whether an
// event ends the current turn, but has no reason to decode the payload.
// Both envelopes put their oneof arms at field numbers 1 to 19 and their
// message-level fields at 20 and above, so the kind can be read from the
// field keys alone.
//
// The classifier walks every key of the frame. A key numbered 1..19 must be
// length-delimited and becomes the current arm; a later arm replaces an
// earlier one, as in protobuf's oneof merge. Every other field is skipped
// the way a protobuf decoder skips an unknown field. The result holds for
// any field order.
//
// A frame that is empty, malformed or truncated, that has no arm, or whose
// arm is not a kind this package knows, is opaque: Request and Event
// report ok == false, and a forwarder should pass such a frame on verbatim
// and never act on it.
//
// All functions are pure and safe for concurrent use; they never retain
// or modify the frame.
package peek
