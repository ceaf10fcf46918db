// Package message holds gomonty's domain model of the protocol's messages:
// the requests a parent sends ([Request] inside a [ParentRequest]) and the
// events a child answers with ([Event] inside a [ChildEvent]).
//
// The types are independent of the wire encoding and of the protocol
// version: the protocol-4 and protocol-2 codecs both decode into them and
// encode from them. Values travel as one [value.Graph] per message, with
// the message naming its roots by id.
//
// Messages are plain data with no internal synchronization.
package message
