// Package frame implements the length-prefixed framing of the Monty worker
// wire protocol.
//
// Every message on a worker's stdin or stdout is one frame: a 4-byte
// unsigned little-endian body length followed by that many body bytes. The
// body is an encoded protobuf message, but this package treats it as
// opaque bytes and does not depend on protobuf.
//
// The body length is capped (by default at [MaxFrameLen], 256 MiB; the
// prefix is not counted). A [Reader] checks the cap on the prefix before it
// allocates anything for the body, and grows the body buffer only as bytes
// actually arrive, so a peer that announces a huge frame and then stalls or
// hangs up costs little memory. A [Writer] checks the cap before it emits
// anything, so an oversize message leaves the stream in sync.
//
// Reading errors are distinguishable with errors.Is and errors.As:
//
//   - io.EOF, returned unwrapped, is a clean end of stream exactly at a
//     frame boundary;
//   - [ErrTruncated] means the stream ended inside a prefix or a body;
//   - [*TooLargeError] (matching [ErrTooLarge]) means a frame exceeds the
//     cap;
//   - [*IOError] wraps any other failure of the underlying reader or
//     writer.
//
// Message-oriented transports, which carry one message per transport
// message without a prefix, apply the same cap with [CheckMessage].
package frame
