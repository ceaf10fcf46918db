// Package hostile is a catalog of misbehaving Monty workers, for testing the
// parent side of the worker protocol.
//
// A real worker is a `monty subprocess` child that reads ParentRequest frames
// on stdin and writes ChildEvent frames on stdout. A compromised worker
// controls every byte it writes and a buggy one can die at any instant; the
// parent has to answer each case with a typed error, in bounded time and
// memory, and then discard the worker without leaking anything.
//
// Each [Scenario] names one such misbehaviour. Until its trigger fires (the
// first Feed, say) the child behaves like a minimal worker: it negotiates the
// protocol version exactly as the released binary does, answers Configure
// with Ok, and runs a handful of snippets ("1 + 2", "42", "print('x')",
// "f()", ...) through a tiny fake interpreter. Then it misbehaves. The
// scenario's [Expectation] records, as plain data, the typed outcome a
// correct parent produces, so tests in other packages can table-drive over
// [Scenarios].
//
// [Run] plays a scenario over any reader and writer. The program in
// cmd/hostilechild wraps it as a worker binary, which this package's tests
// build once per test binary (package hostilebuild) and start as
//
//	cmd := exec.Command(bin, "subprocess")
//	cmd.Env = append(os.Environ(), "HOSTILE_SCENARIO=oversize_prefix")
//
// This package is test tooling. It deliberately writes frames the protocol
// forbids, so no code that talks to real workers may use it. The one
// production binary that links it is montygo, on purpose: `montygo conform
// parent` (package conform) plays these scenarios against a parent program
// under test, through the hidden `montygo conform __child` subcommand, so
// that the kit ships as one executable. Nothing else in montygo reaches it.
package hostile
