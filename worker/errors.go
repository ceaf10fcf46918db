package worker

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gomonty/monty/protocol"
)

// What the parent was doing when a worker vanished, as recorded in
// CrashError.Context.
const (
	ContextSending  = "sending a request"
	ContextWaiting  = "waiting for a reply"
	ContextAborting = "aborting a feed"
)

// Sentinels matched (errors.Is) by the typed errors of this package.
var (
	// ErrCrashed is matched by every *CrashError.
	ErrCrashed = errors.New("monty worker crashed")
	// ErrMemoryLimit is matched by every *MemoryLimitError.
	ErrMemoryLimit = errors.New("the worker exceeded its memory limit and was terminated")
	// ErrTimeout is matched by every *TimeoutError.
	ErrTimeout = errors.New("monty worker timed out")
	// ErrProtocol is matched by every *ProtocolError.
	ErrProtocol = errors.New("monty worker protocol error")
	// ErrClosed is returned for a process or session used after Close,
	// Kill or a fatal error.
	ErrClosed = errors.New("monty worker closed")
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
	// Message is the FatalError text (Announced only).
	Message string
	// Context is what the parent was doing (Vanished only): ContextSending,
	// ContextWaiting or ContextAborting.
	Context string
	// Exit is the reaped exit status.
	Exit Exit
	// Stderr is the tail of the worker's stderr.
	Stderr string
	// Err is the I/O error that revealed the death (Vanished only), or nil.
	Err error
}

// Error describes the crash, with the last stderr line when there is one.
func (e *CrashError) Error() string {
	var b strings.Builder
	b.WriteString("monty worker crashed")
	if e.Reason == Announced {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else {
		b.WriteString(" while ")
		b.WriteString(e.Context)
	}
	b.WriteString(" (")
	b.WriteString(e.Exit.String())
	b.WriteString(")")
	if line := lastLine(e.Stderr); line != "" {
		b.WriteString(": stderr: ")
		b.WriteString(line)
	}
	return b.String()
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

// TimeoutError reports a turn stopped by a deadline: the caller's context
// deadline, or the parent's watchdog backstop for the max_duration limit.
//
// When the worker was computing it is killed (Killed); when it was waiting
// on the host between turns, the feed is aborted with AbortFeed instead and
// the session survives.
//
// It is not modified after it is returned; it is safe to read concurrently.
type TimeoutError struct {
	// Watchdog is set when the parent's max_duration backstop fired (the
	// worker failed to stop itself with a TimeoutError in time).
	Watchdog bool
	// Budget is the max_duration budget the watchdog enforced.
	Budget time.Duration
	// Killed reports whether the worker was killed.
	Killed bool
	// Err is the context's error (context.DeadlineExceeded or its cause);
	// nil for the watchdog.
	Err error
}

// Error describes the timeout.
func (e *TimeoutError) Error() string {
	switch {
	case e.Watchdog:
		return fmt.Sprintf("monty worker ran past its max_duration of %v and was killed", e.Budget)
	case e.Killed:
		return "monty worker killed: " + errText(e.Err)
	}
	return "monty feed aborted: " + errText(e.Err)
}

// Unwrap returns the context error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// SessionSurvives reports whether the worker was left alive.
func (e *TimeoutError) SessionSurvives() bool { return !e.Killed }

// CanceledError reports a turn stopped because its context was canceled.
// When the worker was computing it is killed (Killed); when it was waiting
// on the host the feed is aborted and the session survives. A request that
// was never sent (the context was already done) also leaves the session
// intact.
//
// It is not modified after it is returned; it is safe to read concurrently.
type CanceledError struct {
	// Killed reports whether the worker was killed.
	Killed bool
	// Err is the context's error (context.Canceled or its cause).
	Err error
}

// Error describes the cancellation.
func (e *CanceledError) Error() string {
	if e.Killed {
		return "monty worker killed: " + errText(e.Err)
	}
	return "monty turn canceled: " + errText(e.Err)
}

// Unwrap returns the context error.
func (e *CanceledError) Unwrap() error { return e.Err }

// SessionSurvives reports whether the worker was left alive.
func (e *CanceledError) SessionSurvives() bool { return !e.Killed }

// ProtocolError reports a worker that broke the protocol: an undecodable
// event, an event that does not fit the request, a ShutdownDump, or a
// wrong answer to AbortFeed. The worker is discarded.
//
// It is not modified after it is returned; it is safe to read concurrently.
type ProtocolError struct {
	// Msg is the description, for example "invalid payload from worker" or
	// "unexpected event".
	Msg string
	// Err is the cause (a decode error), or nil.
	Err error
}

// Error returns Msg, followed by ": " and the cause when there is one.
func (e *ProtocolError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *ProtocolError) Unwrap() error { return e.Err }

// Is reports whether target is ErrProtocol.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// SessionSurvives reports false: the worker is discarded.
func (e *ProtocolError) SessionSurvives() bool { return false }

// SessionSurvives reports whether the session is still usable after err:
// true for nil and for errors whose chain has a SessionSurvives method
// reporting true, false for everything else.
func SessionSurvives(err error) bool {
	if err == nil {
		return true
	}
	var s interface{ SessionSurvives() bool }
	if errors.As(err, &s) {
		return s.SessionSurvives()
	}
	return false
}

func errText(err error) string {
	if err == nil {
		return "interrupted"
	}
	return err.Error()
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	const max = 512
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}
