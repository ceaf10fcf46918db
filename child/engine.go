package child

import (
	"context"
	"syscall"

	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
)

// Engine is the interpreter behind [Serve]: what any interpreter must
// provide to be served as a Monty worker. It is the extension point for
// other interpreters (a relay to a real worker, an in-process VM, a CPython
// bridge).
//
// Serve owns the protocol: it checks every request against the session
// state before the engine sees it, so an engine is only called in states
// where the call is legal:
//
//   - Configure in the no-session state (a fresh child or after Reset).
//   - Feed when configured or idle, never while suspended. The engine
//     builds its interpreter on the first Feed (or Dump) after Configure.
//   - Resume only while suspended, with a request already checked against
//     the suspension: a *message.ResumeCall whose call id matches a
//     suspended FunctionCall or OsCall and which carries a result
//     (not_handled only for an OsCall: the engine raises the call's own
//     no-handler default); a *message.ResumeNameLookup for a NameLookup; a
//     *message.ResumeFutures for ResolveFutures, or for a FunctionCall the
//     engine flagged AllowEagerAwait, with exactly one return_value or error
//     result for that call; or a *message.AbortFeed with an exception,
//     which the engine raises uncatchably at the suspension point.
//   - Dump when configured, idle or suspended; Load only before any feed
//     ran (no session or configured); Reset in any state. Serve itself
//     undoes a Load whose re-announced suspension cannot be sent: Reset,
//     then the session's Configure again when there was one.
//
// The turn methods return the turn-ending event: a suspension
// (*message.FunctionCall, *message.OsCall, *message.NameLookup,
// *message.ResolveFutures), *message.Complete, *message.Error or
// *message.TypingError for Feed and Resume (Resume of an AbortFeed answers
// *message.Error); *message.DumpResult for Dump; *message.Ok, *message.Complete
// or the re-announced suspension for Load. An engine that refuses a
// request without changing its state returns a *message.Error whose
// exception is RuntimeError("protocol violation: …"), or equivalently a
// *[Violation]; Serve then leaves the session state as it was. Any other
// error is fatal: Serve ends the child, with the exit status of an
// *[ExitError] when the error is (or wraps) one, and status 4 after a
// FatalError otherwise.
//
// The context of a turn method also ends, with an *[ExitError] (status 3)
// as its cause, when the turn's print output can no longer be sent (the
// parent is gone); the engine should then stop the turn and return, as a
// failed print ends the native worker's turn.
//
// The engine assigns call ids (FunctionCall.CallID, OsCall.CallID),
// increasing within a feed (the released worker starts again at 0 with
// each feed), and reports pending futures by those ids;
// Serve checks resumes against them. Print output of a turn goes to out,
// from the goroutine running the turn, before the turn returns. Limits are
// the engine's: it enforces max_duration, memory and recursion as its
// interpreter does, and reports the session's figures through Stamps;
// max_suspensions is only stored and echoed (Serve does that) because the
// parent enforces it.
//
// An Engine is used by one Serve call, from one goroutine at a time; it
// need not be safe for concurrent use.
type Engine interface {
	// Configure stores the session configuration. Its protocol version
	// has been checked; the engine may speak any version internally. An
	// engine that applies other limits than cfg asks for (a server
	// holding a client to its ceilings) may replace cfg.Limits with them
	// before it returns nil: Serve echoes the max_suspensions of
	// cfg.Limits as it finds it then.
	Configure(ctx context.Context, cfg *message.Configure) error
	// Feed runs a snippet with its inputs bound.
	Feed(ctx context.Context, feed *message.Feed, out Output) (message.Event, error)
	// Resume continues the suspended feed (see the type's documentation
	// for the requests it receives).
	Resume(ctx context.Context, req message.Request, out Output) (message.Event, error)
	// Dump snapshots the session (building an empty interpreter first
	// when only configured).
	Dump(ctx context.Context) (message.Event, error)
	// Load restores a dump; the stored configuration, if any, is replaced
	// by the dump's.
	Load(ctx context.Context, state []byte, out Output) (message.Event, error)
	// Reset drops the session.
	Reset(ctx context.Context) error
	// Stamps reports the figures stamped on turn-ending events.
	Stamps() Stamps
	// Close releases the engine; Serve calls it once before returning.
	Close() error
}

// DependencyInstaller is implemented by engines whose interpreter can
// install packages (a CPython bridge). Serve hands InstallDependencies to
// such an engine in any state; other engines get the Monty worker's
// refusal, RuntimeError("dependency installation is only supported by the
// CPython worker"). The reply is Ok or an Error; the state is unchanged.
//
// Like the Engine's methods, Serve calls it from one goroutine at a time.
type DependencyInstaller interface {
	InstallDependencies(ctx context.Context, req *message.InstallDependencies) (message.Event, error)
}

// InitialVersioner is implemented by engines that stand in for a worker
// speaking one protocol version (a relay to a real worker). A parent may
// send Load before any Configure (contract §12), and then nothing tells
// a child that serves several versions which one the parent speaks; such
// a child answers in the version of the worker it stands in for, which is
// what a parent that spawned that worker would expect, or in the version
// the dump itself shows its parent spoke (the relay's protocol-5 dumps
// are only ever made for a protocol-5 parent). Serve calls InitialVersion
// once, on a Load that arrives before any Configure, with the Load's
// state, after decoding it and before the engine's Load; a version Serve
// does not serve, or an error, leaves Serve's default (the highest version
// it serves). Later Configures pick the version as usual. (Every other
// reply before Configure is an unstamped Ok or Error, encoded alike in
// every version.)
//
// Like the Engine's methods, Serve calls it from one goroutine at a time.
type InitialVersioner interface {
	InitialVersion(ctx context.Context, state []byte) (uint32, error)
}

// ParentVersioner is implemented by engines whose behaviour depends on the
// protocol version the parent speaks (a relay that emulates a newer
// version's features over an older worker). Configure carries that
// version; a parent that starts with Load sends none, so Serve calls
// ParentVersion once the version is settled for such a parent (after any
// InitialVersion, before the engine's Load).
//
// Like the Engine's methods, Serve calls it from one goroutine at a time.
type ParentVersioner interface {
	ParentVersion(v uint32)
}

// Stamps are the session figures an engine reports for the ChildEvent
// metadata fields.
//
// Stamps is plain data, safe to share.
type Stamps struct {
	// TotalExecutionMicros is the cumulative sandbox execution time.
	TotalExecutionMicros uint64
	// MaxDurationMicros is the session's duration limit, nil for none.
	MaxDurationMicros *uint64
	// MaxSuspensions is the limit a loaded dump carried; Serve echoes it
	// after a Load (the Configure's value otherwise). nil means the
	// default (1000).
	MaxSuspensions *uint64
	// ScriptName is the script name of the loaded dump, echoed on the
	// reply to a successful Load.
	ScriptName string
	// FeedExecutionMicros is the execution clock restarted at the running
	// feed (stamped at protocol 5).
	FeedExecutionMicros uint64
	// Limits5, when non-nil, overrides the feed, turn and sleep limits
	// (in that order) Serve echoes at protocol 5, for example the limits a
	// loaded dump carried; nil echoes the Configure's.
	Limits5 *[3]*uint64
}

// Output receives a turn's print output. Serve's implementation buffers it
// according to the session's print_flush_interval (see package doc); it is
// safe for concurrent use, so an engine may print from several goroutines,
// but only until its turn method returns.
type Output interface {
	// Print appends text written to stream. Text that is not UTF-8 is
	// sent with U+FFFD for each bad sequence (a sequence split across two
	// calls may be cut by a flush between them).
	Print(stream message.PrintStream, text string)
}

// Violation is an engine's refusal of a request that leaves its state as
// it was. Serve replies RuntimeError("protocol violation: " + Text).
//
// A Violation is plain data, safe to share.
type Violation struct {
	// Text follows "protocol violation: " in the reply.
	Text string
}

func (v *Violation) Error() string { return "protocol violation: " + v.Text }

// ExitError is how a child must end when it does not end cleanly: the exit
// status (and, for an engine whose interpreter was killed, the signal)
// that a parent classifies as it would for the native worker.
//
// An ExitError is plain data, safe to share.
type ExitError struct {
	// Code is the exit status.
	Code protocol.ExitCode
	// Signal, when non-zero, is the signal the child should die by instead
	// (an engine's interpreter was killed by it).
	Signal syscall.Signal
	// Message is the FatalError text sent before ending, if any.
	Message string
	// Err is the cause.
	Err error
}

func (e *ExitError) Error() string {
	s := "child exits with status " + e.Code.String()
	if e.Signal != 0 {
		s = "child dies by signal " + e.Signal.String()
	}
	if e.Message != "" {
		s += ": " + e.Message
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }
