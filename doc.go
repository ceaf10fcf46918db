// Package monty is the root of gomonty, the Go implementation of the Monty
// worker wire protocol: run untrusted Python in a pool of crash-isolated
// `monty subprocess` workers, with Go functions, Go objects and a Go
// filesystem exposed to the sandbox.
//
// The packages follow the data path, from bytes to Go values and back:
//
//   - [github.com/gomonty/monty/frame]: 4-byte little-endian length-prefixed
//     frames over any io.Reader/io.Writer, with the 256 MiB cap.
//   - [github.com/gomonty/monty/value] and [github.com/gomonty/monty/message]:
//     the domain model — value graphs (flat, post-order node arenas) and the
//     protocol's requests and events — independent of the wire encoding.
//   - [github.com/gomonty/monty/codec], codec/codecv5, codec/codecv4 and
//     codec/codecv2: one hand-written, budgeted codec per protocol version
//     (5 being 4's with its own tags), all producing the same domain types.
//   - [github.com/gomonty/monty/worker] and transport: the child process,
//     its pipes and its death.
//   - [github.com/gomonty/monty/session] and [github.com/gomonty/monty/pool]:
//     the parent side — one worker per session, and an elastic pool.
//   - [github.com/gomonty/monty/mount]: a hardened Go filesystem,
//     environment and clock answering the sandbox's OS calls.
//   - cmd/montygo: the CLI.
//
// See docs/ARCHITECTURE.md for who owns what and how a frame flows.
package monty
