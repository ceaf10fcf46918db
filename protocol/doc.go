// Package protocol holds the protocol-wide constants of the Monty worker
// wire protocol and the rules for accepting or rejecting a peer's declared
// protocol version.
//
// A Monty worker is a `monty subprocess` child that exchanges
// length-prefixed protobuf messages with its parent over stdin and stdout.
// This package has no I/O of its own: it names the numbers both sides must
// agree on (protocol versions, the frame cap, the decode budget, print
// buffering parameters, default limits, exit statuses) and renders and
// parses the text a worker sends when it refuses a protocol version.
//
// Version rules: the parent declares its schema version in
// Configure.protocol_version. A worker accepts v only when it lies inside
// its supported range, and the value 0 ("nothing declared") is always
// refused. [CheckVersion] produces the refusal, [UnsupportedVersionError]
// carries it, and [ParseUnsupportedVersion] reads a refusal text back so a
// parent can discover which versions a worker accepts and downgrade.
package protocol
