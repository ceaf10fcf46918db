// Package child is the child side of the Monty wire protocol: the worker
// state machine that answers a parent's requests, independent of how the
// frames travel and of which interpreter runs the code.
//
// [Serve] reads requests from a [transport.Conn] (a stdio stream, a
// WebSocket, an in-memory pipe), decodes them with the codec of the
// protocol version the parent's Configure picked (2, 4 or 5, as
// Options.Versions allows), enforces the
// session state machine of the contract (every (state, request) cell, with
// its exact reply), buffers print output, stamps turn-ending events, and
// hands the work itself to an [Engine]. One goroutine, the caller's, owns
// all session state; only the print flush timer runs beside it.
//
// Serve reports how the child must end as an error: nil for a clean end
// (Shutdown, or end of stream at a frame boundary) and an *[ExitError]
// carrying the exit status a native worker would use otherwise (4 for a
// refused protocol version, 76 for broken request framing, 3 for a broken
// output stream, or whatever an engine's interpreter died with).
//
// The engine is the extension point for other interpreters: package
// child/relay implements it by relaying each session to a real
// `monty subprocess` worker through package session.
package child
