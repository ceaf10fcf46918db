// Package session is the parent side of the Monty worker protocol: one
// sandboxed Python session per `monty subprocess` worker, with persistent
// globals, Go host functions, streamed output, resource limits and
// cancellation.
//
// # Starting
//
// [Start] gets a worker from the [Launcher] of its [Launch] settings (by
// default a `monty subprocess` child; see package worker for how the
// binary is found) and configures it with the sandbox options of a
// [Config]. A session depends only on a [Peer]: a [transport.Conn] for
// the frames plus a small [Lifecycle] (kill, close, classify a loss), so
// an in-process Go child or a remote connection fits as well as a process.
// [Attach] configures a session on a worker that is already running and
// [Session.Detach] hands it back, for pools. The protocol version is negotiated: the highest
// version this module has a codec for is tried first, and a worker that
// refuses it with a FatalError naming its own range is replaced by one
// configured with the highest common version. The outcome is cached per
// binary for the life of the process, so only the first session pays for
// the extra spawn. [Launch.ProtocolVersion] pins a version instead.
// Everything above the codec is version-agnostic: the same Go types travel
// whatever the protocol.
//
// # Running code
//
// [Session.Run] feeds a snippet and drives it to completion. Calls to
// names registered in a [Registry] run Go functions: plain [Func]s, or any
// Go function adapted by reflection (arguments converted with
// value.ToGo, results with value.FromGo; a mismatch is a TypeError in the
// sandbox; a Go error is raised as the exception it wraps, CPython's
// OSError subclass for an errno, or a RuntimeError: see [Func]). Functions registered with [Async]
// are answered with futures and run concurrently, so asyncio.gather
// overlaps them. Reads of undefined names resolve to registered values and
// functions, everything else is a NameError. OS calls go to an [OSHandler]
// (by default none: filesystem calls raise PermissionError, os.getenv and
// the clocks RuntimeError). Output of every
// turn is streamed, in order, to Config.Print ([Writers] adapts a pair of
// io.Writers).
//
// Some values the sandbox sends cannot be sent back: one with no form of
// its own on the wire arrives as the text of its repr (a module, say,
// value.ReprValue as an `any`), and a container that holds itself arrives
// with a cycle placeholder where it recurs (value.CycleValue), so that a
// host function's argument is not always a value it can return. The
// worker would end the feed with a RuntimeError the code cannot catch;
// instead, a host answer that holds one, at the top or nested, raises a
// TypeError where the code called or read the name, which it may catch:
// "echo() returned a value that cannot be sent back into the sandbox
// (repr of <module 'sys'>)", "host value v cannot be sent back …" for a
// value or attribute. The same goes for Async functions' results and an
// [OSHandler]'s ("the OS handler for read_text returned …"). A Feed
// or Run input, or a Resume answer, that holds one is refused before
// anything is sent with an *InvalidRequestError (it matches
// *value.InputError); a refused answer leaves the feed suspended.
//
// The low-level turn API ([Session.Feed], the Resume methods,
// [Session.AbortFeed], [Session.Dump], [Session.Load], [Session.Reset],
// [Session.Do]) exposes the protocol's strict alternation directly: each
// call sends one request and returns the turn-ending event.
//
// # Limits
//
// [Limits] are enforced by the worker (duration, memory, recursion) except
// max_suspensions, which the parent enforces: a feed that suspends more
// often than allowed is aborted with RuntimeError("suspension limit N
// exceeded") and reported as a [*SuspensionLimitError]. When a duration
// limit is known, a watchdog kills a worker that overruns it by more than
// Config.WatchdogGrace ([*TimeoutError]). The zero Limits cap memory at
// [DefaultMaxMemory] ([NoMemoryLimit] lifts it) and the session's
// cumulative execution time at [DefaultMaxDuration] ([NoDurationLimit]
// lifts it); the context of each call bounds time as well.
//
// # JSON
//
// A json.RawMessage input reaches the sandbox as Python's json.loads reads
// the text, and a [Value] (so a [Result]) marshals as json.dumps writes it
// (see [value.FromJSON] and [value.AppendJSON]); host functions may take
// and return json.RawMessage the same way.
//
// # Errors and cancellation
//
// Every error says whether the session survives ([Survives]): Python
// exceptions ([*PythonError]), type-check failures ([*TypeCheckError]),
// the suspension limit, refused requests and usage mistakes leave it
// usable; a crash, a protocol violation, a memory-limit exit or a kill
// close it. A context that ends while the worker computes kills the worker
// (there is no way to interrupt it otherwise); one that ends while a feed
// waits on the host aborts the feed and keeps the session.
//
// A host's Go error is raised in the sandbox the same way whatever
// returned it (see [Func]); when the sandbox lets it through, Run's
// *PythonError carries it (PythonError.HostErr) for errors.Is and
// errors.As. docs/PROTOCOL.md ("Host errors in the sandbox") lists what
// stays different from CPython.
//
// # Concurrency
//
// A [Session] runs one turn at a time on the calling goroutine, with plain
// blocking reads and writes on the worker's pipes (no goroutine handoff per
// turn). It is not safe for concurrent use, except [Session.Close],
// [Session.Kill], [Session.State] and [Session.Cause], which any goroutine
// may call at any time, as it may [Session.Version], [Session.Negotiation],
// [Session.Binary] and [Session.Pid], which never change
// ([Session.Reusable] too, briefly taking the turn: a turn started
// meanwhile fails with [ErrBusy]). A [Registry] is safe for concurrent
// use, and its zero value is ready to use.
//
// # Misuse
//
// Mistakes in calling the API are errors, not panics, where Go code
// would check an error anyway: a turn in the wrong state fails with
// ErrNotSuspended or ErrSuspended, an overlapping one with ErrBusy, any
// after Close with an error matching ErrClosed, one with a done context
// with a *CanceledError or *TimeoutError (nothing sent, the session
// kept); a nil request to Do, or an answer that cannot be encoded, is an
// *InvalidRequestError. Close and Kill are idempotent. Nil RunOptions and
// FuncOptions are ignored. [Call.Arg] past the arguments panics, as a
// slice index does (a Func's panic is the sandbox's RuntimeError).
//
// # Telemetry
//
// A session records OpenTelemetry spans and metrics through
// Config.TracerProvider and Config.MeterProvider, else the global
// providers (no SDK installed: nothing is recorded, and no span is started
// per turn). Spans: [SpanSession] (Start or Attach to Close), [SpanRun]
// (one feed, held across its suspensions) and [SpanHost] (one host round
// trip); the W3C traceparent sent with each request is the current one's,
// else that of the span in the call's context. Metrics, with upstream's
// names: [MetricRunDuration], [MetricRunExecutionTime],
// [MetricRunSuspensions], [MetricTurnDuration], [MetricExtCallDuration]
// (by [AttrHostKind]), [MetricPrintBytes], [MetricWireFrameBytes] (by
// [AttrDirection]) and [MetricSnapshotBytes] (by [AttrSnapshotOp]).
// Attributes come from closed sets; code, arguments, results and prints
// are recorded only with Config.TelemetryContent. Package pool adds the
// monty.pool.* metrics.
package session
