package message

import (
	"github.com/gomonty/monty/value"
)

// EventKind identifies an event. The numbers are the arm numbers of the
// ChildEvent oneof.
type EventKind uint8

// The event kinds.
const (
	KindPrint          EventKind = 1
	KindFunctionCall   EventKind = 2
	KindOsCall         EventKind = 3
	KindNameLookup     EventKind = 4
	KindResolveFutures EventKind = 5
	KindComplete       EventKind = 6
	KindError          EventKind = 7
	KindTypingError    EventKind = 8
	KindDumpResult     EventKind = 9
	KindOk             EventKind = 10
	KindFatalError     EventKind = 11
	KindShutdownDump   EventKind = 12
)

var eventNames = [...]string{"", "Print", "FunctionCall", "OsCall", "NameLookup",
	"ResolveFutures", "Complete", "Error", "TypingError", "DumpResult", "Ok",
	"FatalError", "ShutdownDump"}

// String returns the event's message name.
func (k EventKind) String() string {
	if int(k) < len(eventNames) && k > 0 {
		return eventNames[k]
	}
	return "UnknownEvent"
}

// EndsTurn reports whether an event of kind k ends the child's turn. Print
// is the only event that does not.
func (k EventKind) EndsTurn() bool { return k != KindPrint }

// IsSuspension reports whether the event suspends the feed, waiting for the
// parent to resume it.
func (k EventKind) IsSuspension() bool {
	switch k {
	case KindFunctionCall, KindOsCall, KindNameLookup, KindResolveFutures:
		return true
	}
	return false
}

// Event is the body of a [ChildEvent]: one of *Print, *FunctionCall,
// *OsCall, *NameLookup, *ResolveFutures, *Complete, *Error, *TypingError,
// *DumpResult, *Ok, *FatalError, *ShutdownDump.
type Event interface {
	EventKind() EventKind
}

// ChildEvent is one event frame from child to parent.
type ChildEvent struct {
	// Body is the event; nil when the frame carried no (known) kind.
	Body Event
	// TotalExecutionMicros is the session's cumulative sandbox run time
	// (at protocol 5 for reporting only; it bounds nothing).
	TotalExecutionMicros uint64
	// MaxDurationMicros is the session's duration limit, when it has one
	// (protocol 4 and 2 only).
	MaxDurationMicros *uint64
	// MaxSuspensions is the session's suspension limit, when a REPL exists.
	MaxSuspensions *uint64
	// RestoredScriptName is set only on the reply to a successful Load.
	RestoredScriptName *string
	// FeedExecutionMicros is the execution clock restarted at the running
	// feed; 0 outside a session (protocol 5 only). The parent's feed
	// backstop is based on it.
	FeedExecutionMicros uint64
	// MaxFeedDurationMicros, MaxTurnDurationMicros and MaxTotalSleepMicros
	// echo the session's limits, so that a parent learns them after Load
	// (protocol 5 only).
	MaxFeedDurationMicros *uint64
	MaxTurnDurationMicros *uint64
	MaxTotalSleepMicros   *uint64
	// SessionID is sent only by a remote that stores sessions, on its first
	// reply to Configure or Load; nil when absent (protocol 5 only).
	SessionID []byte
}

// PrintStream names an output stream.
type PrintStream uint8

// The print streams.
const (
	StreamUnspecified PrintStream = 0
	StreamStdout      PrintStream = 1
	StreamStderr      PrintStream = 2
)

// String names the stream.
func (s PrintStream) String() string {
	switch s {
	case StreamStdout:
		return "stdout"
	case StreamStderr:
		return "stderr"
	}
	return "unspecified"
}

// PrintSegment is a run of text written to one stream.
type PrintSegment struct {
	Stream PrintStream
	Text   string
}

// Print carries buffered sandbox output, in order. Protocol 2 carries one
// segment per event.
type Print struct {
	Segments []PrintSegment
}

// FunctionCall suspends the feed on a call to an external function, or on
// a method call on a host object when ObjectID is set.
type FunctionCall struct {
	FunctionName string
	Args         []value.NodeID
	Kwargs       []value.Pair
	CallID       uint32
	// ObjectID is the receiver's identity for a method call on a host
	// instance or class ("__call__" constructs); nil for a plain call.
	ObjectID *value.UUID
	// AllowEagerAwait is set when the result is awaited at once; the parent
	// may then answer with a one-entry ResumeFutures. Always false in
	// protocol 2.
	AllowEagerAwait bool
	Values          value.Graph
	// Position is where the call is in the source; nil when the child did
	// not say (always before protocol 5).
	Position *SourceRange
}

// OsOp names an OS call.
type OsOp uint8

// The OS operations. The numbers are the OsCall arm numbers of protocol 4
// and 5 (protocol 2 has no urandom; 26 and above exist only at 5).
const (
	OpExists      OsOp = 2
	OpIsFile      OsOp = 3
	OpIsDir       OsOp = 4
	OpIsSymlink   OsOp = 5
	OpReadText    OsOp = 6
	OpReadBytes   OsOp = 7
	OpStat        OsOp = 8
	OpIterdir     OsOp = 9
	OpResolve     OsOp = 10
	OpAbsolute    OsOp = 11
	OpUnlink      OsOp = 12
	OpRmdir       OsOp = 13
	OpWriteText   OsOp = 14
	OpAppendText  OsOp = 15
	OpWriteBytes  OsOp = 16
	OpAppendBytes OsOp = 17
	OpOpen        OsOp = 18
	OpMkdir       OsOp = 19
	OpRename      OsOp = 20
	OpGetenv      OsOp = 21
	OpGetEnviron  OsOp = 22
	OpDateToday   OsOp = 23
	OpDateTimeNow OsOp = 24
	OpUrandom     OsOp = 25
	// Protocol 5 only.
	OpTime             OsOp = 26
	OpSleep            OsOp = 27
	OpAsyncSleep       OsOp = 28
	OpSystemSleep      OsOp = 29
	OpAsyncSystemSleep OsOp = 30
)

var opNames = [...]string{2: "exists", 3: "is_file", 4: "is_dir", 5: "is_symlink",
	6: "read_text", 7: "read_bytes", 8: "stat", 9: "iterdir", 10: "resolve",
	11: "absolute", 12: "unlink", 13: "rmdir", 14: "write_text", 15: "append_text",
	16: "write_bytes", 17: "append_bytes", 18: "open", 19: "mkdir", 20: "rename",
	21: "getenv", 22: "get_environ", 23: "date_today", 24: "date_time_now", 25: "urandom",
	26: "time", 27: "sleep", 28: "async_sleep", 29: "system_sleep", 30: "async_system_sleep"}

// String returns the op's protocol name.
func (o OsOp) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "unknown_os_call"
}

// IsFilesystem reports whether the op touches the filesystem (arms 2–20).
func (o OsOp) IsFilesystem() bool { return o >= OpExists && o <= OpRename }

// IsSleep reports whether the op is one of protocol 5's four sleeps.
func (o OsOp) IsSleep() bool { return o >= OpSleep && o <= OpAsyncSystemSleep }

// IsSystemSleep reports whether the op is a system sleep, which the parent
// waits out itself (charging the sleep budget) without the OS handler.
func (o OsOp) IsSystemSleep() bool { return o == OpSystemSleep || o == OpAsyncSystemSleep }

// OsCall suspends the feed on an operating-system call that the parent
// answers. Which fields are set depends on Op.
type OsCall struct {
	CallID uint32
	Op     OsOp
	// Path is the path of single-path ops, and the path of write, append,
	// open and mkdir. For rename it is the source.
	Path string
	// Dst is the rename destination.
	Dst string
	// Text is the data of write_text/append_text.
	Text string
	// Data is the data of write_bytes/append_bytes.
	Data []byte
	// Mode is the normalized open mode.
	Mode string
	// Parents and ExistOK are mkdir's flags.
	Parents, ExistOK bool
	// Key is getenv's variable name; Default its default value root in
	// Values.
	Key     string
	Default value.NodeID
	// TZ is date_time_now's timezone; nil for a naive now().
	TZ *value.TimeZone
	// Size is urandom's byte count.
	Size   uint64
	Values value.Graph
	// Caller is the clock the time op asks for, e.g. "time.monotonic".
	Caller string
	// Seconds is the delay of the sleep ops (Sleep.seconds or
	// AsyncSleep.delay): finite, at least 0, and within int64 nanoseconds.
	Seconds float64
	// AllowEagerAwait is set only on async_sleep.
	AllowEagerAwait bool
	// Position is where the call is in the source; nil when the child did
	// not say (always before protocol 5).
	Position *SourceRange
}

// NameLookup suspends the feed on a read of an undefined name, or on a lazy
// attribute of a host object when ObjectID is set.
type NameLookup struct {
	Name     string
	ObjectID *value.UUID
	// Position is where the name is read; nil when the child did not say.
	Position *SourceRange
}

// ResolveFutures suspends the feed until some pending external futures are
// resolved. The order of the ids carries no meaning.
type ResolveFutures struct {
	PendingCallIDs []uint32
	// Position is where the feed awaits; nil when the child did not say.
	Position *SourceRange
}

// Complete ends a feed with the value of its last expression.
type Complete struct {
	Value  value.NodeID
	Values value.Graph
}

// Error ends a turn with a Python exception (including protocol violations,
// which the child reports as RuntimeError "protocol violation: …").
type Error struct {
	Exception *RaisedException
}

// TypingError ends a feed the type checker rejected.
type TypingError struct {
	Diagnostics string
}

// DumpResult carries a session snapshot.
type DumpResult struct {
	State []byte
}

// Ok acknowledges Configure, Load of an idle dump, Reset and Shutdown.
type Ok struct{}

// FatalError announces that the child is about to exit.
type FatalError struct {
	Message string
}

// ShutdownDump is sent only by a relay that is shutting down; a subprocess
// worker never sends it. At protocol 4 Dump holds the raw dump bytes; at
// protocol 5 it is the id to Load, and nil when there is nothing to load.
type ShutdownDump struct {
	Dump *[]byte
}

// EventKind implementations.
func (*Print) EventKind() EventKind          { return KindPrint }
func (*FunctionCall) EventKind() EventKind   { return KindFunctionCall }
func (*OsCall) EventKind() EventKind         { return KindOsCall }
func (*NameLookup) EventKind() EventKind     { return KindNameLookup }
func (*ResolveFutures) EventKind() EventKind { return KindResolveFutures }
func (*Complete) EventKind() EventKind       { return KindComplete }
func (*Error) EventKind() EventKind          { return KindError }
func (*TypingError) EventKind() EventKind    { return KindTypingError }
func (*DumpResult) EventKind() EventKind     { return KindDumpResult }
func (*Ok) EventKind() EventKind             { return KindOk }
func (*FatalError) EventKind() EventKind     { return KindFatalError }
func (*ShutdownDump) EventKind() EventKind   { return KindShutdownDump }
