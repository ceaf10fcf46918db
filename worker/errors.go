package worker

import (
	"errors"
	"strconv"
	"strings"
	"syscall"

	"github.com/gomonty/monty/internal/lastline"
	"github.com/gomonty/monty/internal/safetext"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport"
)

// What the parent was doing when a worker vanished, as recorded in
// CrashError.Context.
const (
	ContextSending  = transport.OpSending
	ContextWaiting  = transport.OpWaiting
	ContextAborting = transport.OpAborting
)

// Sentinels matched (errors.Is) by the typed errors of this package.
var (
	// ErrCrashed is matched by every *CrashError.
	ErrCrashed = errors.New("monty worker crashed")
	// ErrMemoryLimit is matched by every *MemoryLimitError.
	ErrMemoryLimit = errors.New("the worker exceeded its memory limit and was terminated")
)

// Exit is how a worker process ended.
//
// An Exit is a plain value, safe for concurrent use.
type Exit struct {
	// Code is the exit status, or -1 when the process was killed by a
	// signal or its status is unknown.
	Code int
	// Signal is the signal that killed the process, or 0.
	Signal syscall.Signal
}

// String renders "exit status N", "signal: killed" or "unknown exit".
func (e Exit) String() string {
	switch {
	case e.Signal != 0:
		return "signal: " + e.Signal.String()
	case e.Code >= 0:
		return "exit status " + strconv.Itoa(e.Code)
	}
	return "unknown exit"
}

// Meaning returns the protocol meaning of the exit status, for example
// "fatal" for 4 or "out of memory" for 65.
func (e Exit) Meaning() string {
	if e.Code < 0 {
		return e.String()
	}
	return protocol.ExitCode(e.Code).String()
}

// CrashReason says how a crashed worker went away.
//
// A CrashReason is a plain value, safe for concurrent use.
type CrashReason uint8

// The crash reasons.
const (
	// Announced: the worker sent a FatalError frame before exiting.
	Announced CrashReason = 1
	// Vanished: the worker exited, closed its stdout or broke a pipe
	// without a FatalError.
	Vanished CrashReason = 2
)

// String names the reason.
func (r CrashReason) String() string {
	switch r {
	case Announced:
		return "announced"
	case Vanished:
		return "vanished"
	}
	return "unknown"
}

// CrashError reports a worker that died. The session it served is gone.
//
// A CrashError is not modified after it is returned; it is safe to read
// concurrently.
type CrashError struct {
	// Reason says whether the worker announced its death.
	Reason CrashReason
	// Message is the FatalError text (Announced only), as the worker sent
	// it: bounded by the frame cap, but otherwise anything a hostile
	// worker chose (line breaks, terminal escapes, invalid UTF-8), so quote
	// it with care. It is kept whole because it is data: a version
	// refusal is parsed from it, and a relay child (package child/relay)
	// passes it on to its own parent byte for byte, as the worker it
	// stands in for would. Error quotes at most its first KiB on one line:
	// line breaks and tabs become spaces, invalid UTF-8 and other control
	// characters U+FFFD.
	Message string
	// Context is what the parent was doing (Vanished only): ContextSending,
	// ContextWaiting or ContextAborting.
	Context transport.Op
	// Exit is the reaped exit status.
	Exit Exit
	// Stderr is the tail of the worker's stderr, as the worker wrote it
	// (bounded by Config.StderrLimit, not cleaned: quote it with care).
	// Error quotes its last line, bounded and cleaned.
	Stderr string
	// Err is the I/O error that revealed the death (Vanished only), or nil.
	Err error
}

// Error describes the crash, with the last stderr line when there is one
// and it does not merely repeat the announced message.
func (e *CrashError) Error() string {
	var b strings.Builder
	b.WriteString("monty worker crashed")
	if e.Reason == Announced {
		b.WriteString(": ")
		b.WriteString(safetext.Bound(e.Message, safetext.MaxFatal))
	} else {
		b.WriteString(" while ")
		b.WriteString(string(e.Context))
	}
	b.WriteString(" (")
	b.WriteString(e.Exit.String())
	b.WriteString(")")
	if line := lastline.Of(e.Stderr); line != "" && !e.echoed() {
		b.WriteString(": stderr: ")
		b.WriteString(line)
	}
	return b.String()
}

// echoed reports whether the last stderr line repeats the announced
// FatalError text, as a worker writes its fatal error to stderr too (the
// native worker's "monty subprocess fatal error: ..."; a program serving
// child.Serve that prints the error it ends with): quoting it would say
// the whole message twice. The line is compared whole, not as Error
// would cut it.
func (e *CrashError) echoed() bool {
	if e.Reason != Announced || strings.TrimSpace(e.Message) == "" {
		return false
	}
	s := strings.TrimRight(e.Stderr, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.Contains(s, strings.TrimSpace(e.Message))
}

// Unwrap returns the I/O error, if any.
func (e *CrashError) Unwrap() error { return e.Err }

// Is reports whether target is ErrCrashed.
func (e *CrashError) Is(target error) bool { return target == ErrCrashed }

// SessionSurvives reports false: the worker is dead.
func (e *CrashError) SessionSurvives() bool { return false }

// MemoryLimitError reports a worker that exited with status 65 because
// an allocation crossed its allocator ceiling (or failed outright). The
// sandbox could not report a MemoryError itself; the session is gone.
//
// It is not modified after it is returned; it is safe to read concurrently.
type MemoryLimitError struct {
	// Exit is the reaped exit status (code 65).
	Exit Exit
	// Stderr is the tail of the worker's stderr, which usually names the
	// allocation ("monty worker: allocation of N bytes failed").
	Stderr string
}

// Error returns "the worker exceeded its memory limit and was terminated".
func (e *MemoryLimitError) Error() string { return ErrMemoryLimit.Error() }

// Is reports whether target is ErrMemoryLimit.
func (e *MemoryLimitError) Is(target error) bool { return target == ErrMemoryLimit }

// SessionSurvives reports false: the worker is dead.
func (e *MemoryLimitError) SessionSurvives() bool { return false }
