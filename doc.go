// Package monty is the root of gomonty, the Go implementation of the Monty
// worker wire protocol: run untrusted Python in a pool of crash-isolated
// `monty subprocess` workers, with Go functions, Go objects and a Go
// filesystem exposed to the sandbox.
//
// Most programs need two packages: [github.com/gomonty/monty/pool] for the
// workers and [github.com/gomonty/monty/session] for what runs on them
// (host functions, inputs, limits, results); the README's quickstart is
// pool's Example_quickstart.
//
// The packages follow the data path, from bytes to Go values and back:
//
//   - [github.com/gomonty/monty/frame]: 4-byte little-endian length-prefixed
//     frames over any io.Reader/io.Writer, with the 256 MiB cap; protocol:
//     the constants every layer shares (versions, the frame cap, exit
//     codes).
//   - [github.com/gomonty/monty/value] and [github.com/gomonty/monty/message]:
//     the domain model — value graphs (flat, post-order node arenas) and the
//     protocol's requests and events — independent of the wire encoding.
//   - [github.com/gomonty/monty/codec], codec/codecv5, codec/codecv4 and
//     codec/codecv2: one hand-written, budgeted codec per protocol version
//     (5 being 4's with its own tags), all producing the same domain types;
//     codec/peek classifies a frame without decoding it.
//   - [github.com/gomonty/monty/worker] and transport: the child process,
//     its pipes and its death; transport/ws carries the frames over a
//     WebSocket, to a remote server.
//   - [github.com/gomonty/monty/session] and [github.com/gomonty/monty/pool]:
//     the parent side — one worker per session, and an elastic pool of
//     local workers and remote servers.
//   - [github.com/gomonty/monty/mount]: a hardened Go filesystem (host
//     directories, or any io/fs.FS), environment and clock answering the
//     sandbox's OS calls.
//   - [github.com/gomonty/monty/child]: the child side, gomonty as a
//     worker that any Monty parent drives; child/relay runs each of its
//     sessions on a real worker, child/tap records the frames.
//   - [github.com/gomonty/monty/server]: the Monty server (`montygo
//     serve`), sessions over WebSockets for remote parents.
//   - [github.com/gomonty/monty/conform]: the conformance kit, rules for
//     any worker and hostile-child scenarios for any parent.
//   - cmd/montygo: the CLI.
//
// See docs/ARCHITECTURE.md for who owns what and how a frame flows.
package monty
