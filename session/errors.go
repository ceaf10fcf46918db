package session

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomonty/monty/codec"
	"github.com/gomonty/monty/internal/redact"
	"github.com/gomonty/monty/message"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/transport/ws"
)

// Sentinels matched (errors.Is) by the session's typed errors. Error texts
// are for humans and may change; match with errors.Is and errors.As.
var (
	// ErrClosed is matched by the error of every call on a session whose
	// worker is gone; the cause of the loss, when there was one, is in the
	// same chain.
	ErrClosed = errors.New("monty session: closed")
	// ErrTimeout is matched by every *TimeoutError.
	ErrTimeout = errors.New("monty session: timed out")
	// ErrProtocol is matched by every *ProtocolError.
	ErrProtocol = errors.New("monty session: protocol error")
	// ErrStrayEvent is the cause of a *ProtocolError for an event the
	// worker sent with no request outstanding: waiting before a request,
	// or right behind a turn-ending answer.
	ErrStrayEvent = errors.New("monty session: event with no request outstanding")
)

// usageError is a mistake by the caller that the session refuses before
// anything is sent; the session is unchanged.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// SessionSurvives reports true: nothing was sent.
func (e *usageError) SessionSurvives() bool { return true }

// Usage errors. Each leaves the session untouched.
var (
	// ErrBusy: another turn is in flight. A Session runs one turn at a
	// time.
	ErrBusy error = &usageError{"monty session: another turn is in flight"}
	// ErrSuspended: the call needs an idle session, but a feed is
	// suspended waiting on the host (answer it or AbortFeed it first).
	ErrSuspended error = &usageError{"monty session: a feed is suspended"}
	// ErrNotSuspended: the call answers a suspension, but there is none of
	// the right kind.
	ErrNotSuspended error = &usageError{"monty session: no matching suspension to answer"}
	// ErrInterrupted: a feed of the session was aborted because its
	// context ended (see [Session.Reusable]); the session itself is usable.
	ErrInterrupted error = &usageError{"monty session: a feed was interrupted by its context"}
)

// closedError is returned by calls on a dead session.
type closedError struct {
	cause error
	// unsent: the request of the turn it ended was not sent (the session
	// was closed before), for telemetry (notSent).
	unsent bool
}

func (e *closedError) Error() string {
	if e.cause == nil || e.cause == ErrClosed {
		return "monty session: closed"
	}
	// The cause's own "monty session: " would repeat the package.
	return "monty session: closed: " + strings.TrimPrefix(e.cause.Error(), "monty session: ")
}

func (e *closedError) Unwrap() []error { return []error{ErrClosed, e.cause} }

func (e *closedError) SessionSurvives() bool { return false }

// PythonError reports a feed that ended with a Python exception raised in
// the sandbox (including the resource errors the worker enforces itself:
// TimeoutError for max_duration, MemoryError for max_memory,
// RecursionError). The session survives, with the globals set before the
// exception.
//
// errors.As(err, &exc) with exc a *message.RaisedException also finds the
// exception; errors.Is and errors.As also see the host's Go error behind
// it, if any (HostErr).
//
// It is not modified after it is returned; it is safe to read concurrently.
type PythonError struct {
	// Exception is the exception with its traceback.
	Exception *message.RaisedException
	// Position is where in the source the parent raised the exception,
	// for one it raised itself at a suspension with AbortFeed (protocol
	// 5: the sleep past the sleep budget); the empty range at 0 otherwise,
	// and when the child sent no position. Exceptions the sandbox raised
	// carry their positions in the traceback's frames.
	Position message.SourceRange
	// HostErr is the Go error behind the exception, when the exception
	// that ended the feed is one a host call of this Run or Continue
	// raised (a function, method, constructor, Getattr hook, Async
	// function or OS handler returned it) and the sandbox let it through
	// unchanged or raised it again. It is nil otherwise, as for an
	// exception the sandbox raised anew, after catching the host's, with
	// another type or message.
	//
	// The match is by type and message, against the last eight exceptions
	// host calls of the Run raised, and so is not exact: the protocol gives
	// an exception no identity (the worker echoes nothing of the answer
	// that raised it, and an exception is only its type, message,
	// traceback and data), and the traceback does not tell a re-raise
	// from a new exception (a bare raise, raise e and raise
	// ValueError(str(e)) all end on their raise statement). So an
	// exception the sandbox raises with the same type and message as a
	// host error of the same Run, anew after catching it or on its own,
	// is attributed to that host error too.
	HostErr error

	source string // the code of the feed that raised, when known
}

// Error returns the last line of a Python traceback, "Type: message".
func (e *PythonError) Error() string { return e.Exception.Error() }

// Unwrap returns the exception, then HostErr when there is one: errors.As
// for a *message.RaisedException finds the worker's exception, and
// errors.Is and errors.As also see the host's Go error.
func (e *PythonError) Unwrap() []error {
	if e.HostErr == nil {
		return []error{e.Exception}
	}
	return []error{e.Exception, e.HostErr}
}

// SessionSurvives reports true.
func (e *PythonError) SessionSurvives() bool { return true }

// Type returns the exception's type name, for example "ZeroDivisionError".
func (e *PythonError) Type() string { return e.Exception.Type }

// Traceback renders the exception as the worker's own CLI prints it (see
// [message.RaisedException.AppendTracebackWith]), without a final newline:
//
//	Traceback (most recent call last):
//	  File "<python-input-0>", line 1, in <module>
//	    1 / 0
//	    ~~~~~
//	ZeroDivisionError: division by zero
func (e *PythonError) Traceback() string {
	b := e.Exception.AppendTracebackWith(nil, message.TracebackOptions{Source: e.source})
	return string(b[:len(b)-1])
}

// TypeCheckError reports a snippet the type checker rejected; it did not
// run. The session survives.
//
// It is not modified after it is returned; it is safe to read concurrently.
type TypeCheckError struct {
	// Diagnostics is the checker's report in the configured format.
	Diagnostics string
}

// Error returns the diagnostics.
func (e *TypeCheckError) Error() string { return "type check failed:\n" + e.Diagnostics }

// SessionSurvives reports true.
func (e *TypeCheckError) SessionSurvives() bool { return true }

// SuspensionLimitError reports a feed that suspended more often than the
// session's max_suspensions limit allows. The parent enforces the limit:
// the suspension over the limit was not passed on, the feed was aborted
// with RuntimeError("suspension limit {limit} exceeded"), and the session
// survives. A remote server enforces the limit itself, in the same words
// (docs/PROTOCOL.md): the feed it aborted that way, after exactly Limit
// suspensions, is reported as a SuspensionLimitError too, with Position
// unknown.
//
// It is not modified after it is returned; it is safe to read concurrently.
type SuspensionLimitError struct {
	// Limit is the limit that was enforced.
	Limit uint64
	// Exception is the Error the worker answered the abort with.
	Exception *message.RaisedException
	// Position is where the suspension over the limit was in the source
	// (protocol 5); the empty range at 0 when the child sent none.
	Position message.SourceRange
}

// Error returns "suspension limit {limit} exceeded", followed by " at
// FILE:START-END" when the suspension's source position is known.
func (e *SuspensionLimitError) Error() string {
	return "suspension limit " + strconv.FormatUint(e.Limit, 10) + " exceeded" + positionSuffix(e.Position)
}

// Unwrap returns the worker's exception.
func (e *SuspensionLimitError) Unwrap() error { return e.Exception }

// SessionSurvives reports true.
func (e *SuspensionLimitError) SessionSurvives() bool { return true }

// RequestTooLargeError reports a request whose encoding exceeds the frame
// cap. It was not sent; the session, including a pending suspension, is
// unchanged.
//
// It is not modified after it is returned; it is safe to read concurrently.
type RequestTooLargeError struct {
	// Len is the encoded length, or 0 when the codec refused the request
	// before encoding all of it.
	Len int
	// Max is the frame cap.
	Max int
	// Err is the codec's refusal when Len is unknown.
	Err error
}

// Error returns "request frame of {len} bytes exceeds the maximum of {max}
// bytes".
func (e *RequestTooLargeError) Error() string {
	if e.Len == 0 {
		return fmt.Sprintf("request frame exceeds the maximum of %d bytes", e.Max)
	}
	return fmt.Sprintf("request frame of %d bytes exceeds the maximum of %d bytes", e.Len, e.Max)
}

// Unwrap returns the codec's refusal, if any.
func (e *RequestTooLargeError) Unwrap() error { return e.Err }

// SessionSurvives reports true.
func (e *RequestTooLargeError) SessionSurvives() bool { return true }

// InvalidRequestError reports a request that could not be encoded (for
// example a value the protocol version cannot express, or a Go value with
// no Python counterpart). It was not sent; the session is unchanged.
//
// It is not modified after it is returned; it is safe to read concurrently.
type InvalidRequestError struct {
	// Err is the conversion or encoding error.
	Err error
}

// Error describes the problem.
func (e *InvalidRequestError) Error() string {
	if e.Err == nil {
		return "invalid request"
	}
	return "invalid request: " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *InvalidRequestError) Unwrap() error { return e.Err }

// SessionSurvives reports true.
func (e *InvalidRequestError) SessionSurvives() bool { return true }

// VersionMismatchError reports a worker that shares no protocol version
// with this module (or refused a pinned version).
//
// It is not modified after it is returned; it is safe to read concurrently.
type VersionMismatchError struct {
	// Binary is the worker executable.
	Binary string
	// Ours is the range of versions this module has codecs for (or the
	// pinned version).
	Ours protocol.VersionRange
	// Worker is the range the worker reported.
	Worker protocol.VersionRange
	// Refusal is the worker's FatalError text.
	Refusal string
	// Unusable is set when the refusal advertised a range that can hold
	// no version (empty, or 0 alone); Worker is then that range, and no
	// other version was tried. Unwrap returns it.
	Unusable *protocol.UnusableRangeError
}

// Error names both ranges, or says the worker's range is unusable.
func (e *VersionMismatchError) Error() string {
	if e.Unusable != nil {
		return fmt.Sprintf("no common protocol version: worker %s advertises an unusable version range, %d to %d (%s)",
			e.Binary, e.Worker.Min, e.Worker.Max, e.Refusal)
	}
	return fmt.Sprintf("no common protocol version: gomonty speaks %s, worker %s speaks %s (%s)",
		rangeText(e.Ours), e.Binary, rangeText(e.Worker), e.Refusal)
}

// Unwrap returns the *protocol.UnusableRangeError, if any.
func (e *VersionMismatchError) Unwrap() error {
	if e.Unusable == nil {
		return nil
	}
	return e.Unusable
}

// SessionSurvives reports false: no session was started.
func (e *VersionMismatchError) SessionSurvives() bool { return false }

// UnknownVersionError reports a protocol version this module has no codec
// for: pinned with Launch.ProtocolVersion, or given to Attach or
// Config.Validate. Nothing was sent: Start launched no worker, and Attach
// has stopped the one it was given.
//
// It is not modified after it is returned; it is safe to read concurrently.
type UnknownVersionError struct {
	// Version is the version asked for.
	Version uint32
	// Have are the versions this module has codecs for, highest first
	// (codec.Versions).
	Have []uint32
}

// Error names the version and the linked-in ones.
func (e *UnknownVersionError) Error() string {
	return fmt.Sprintf("monty session: no codec for protocol version %d (have %v)", e.Version, e.Have)
}

// SessionSurvives reports false: no session was started.
func (e *UnknownVersionError) SessionSurvives() bool { return false }

func unknownVersion(v uint32) error { return &UnknownVersionError{Version: v, Have: codec.Versions()} }

func rangeText(r protocol.VersionRange) string {
	if r.Min == r.Max {
		return "version " + r.String()
	}
	return "versions " + r.String()
}

// Survives reports whether the session is still usable after err: true
// for nil and for errors whose chain has a SessionSurvives method
// reporting true, false for everything else.
func Survives(err error) bool {
	if err == nil {
		return true
	}
	var s interface{ SessionSurvives() bool }
	if errors.As(err, &s) {
		return s.SessionSurvives()
	}
	return false
}

// TimeoutError reports a turn stopped by a deadline: the caller's context
// deadline, or the parent's watchdog backstop for a duration limit
// (max_duration at protocols 4 and 2; max_feed_duration or
// max_turn_duration at 5, named by Limit) or for a turn that runs no code
// (LimitReply: a Dump, Load or Reset the worker never answered; see
// Config.WatchdogGrace), or Config.AbortTimeout, when
// the worker did not answer the AbortFeed Run sent after a reply that
// could not be sent or that the worker refused (Killed; Err says so).
//
// When the worker was computing it is killed (Killed); when it was waiting
// on the host between turns, the feed is aborted with AbortFeed instead and
// the session survives.
//
// It is not modified after it is returned; it is safe to read concurrently.
type TimeoutError struct {
	// Watchdog is set when the parent's backstop fired (the worker failed
	// to stop itself with a TimeoutError in time).
	Watchdog bool
	// Limit names the duration limit whose budget the watchdog enforced;
	// LimitNone unless Watchdog.
	Limit DurationLimit
	// Budget is the budget of that limit.
	Budget time.Duration
	// Killed reports whether the worker was killed.
	Killed bool
	// Err is the context's error (context.DeadlineExceeded or its cause);
	// nil for the watchdog; for Config.AbortTimeout, an error naming it.
	// The error matches context.DeadlineExceeded for a context's deadline
	// (either way), and not for the watchdog nor the AbortTimeout.
	Err error
	// Position is where the feed was suspended when the host's deadline
	// aborted it (protocol 5); the empty range at 0 when the worker was
	// killed or the child sent no position.
	Position message.SourceRange

	abortTimeout bool // Config.AbortTimeout's, not a context's
	unsent       bool // the context was done before the request was sent
}

// Error describes the timeout.
func (e *TimeoutError) Error() string {
	switch {
	case e.Watchdog:
		return fmt.Sprintf("monty session: worker ran past its %v of %v and was killed", e.Limit, e.Budget)
	case e.Killed:
		return "monty session: worker killed: " + errText(e.Err)
	case e.unsent:
		return "monty session: request not sent: " + errText(e.Err)
	}
	return "monty session: feed aborted" + positionSuffix(e.Position) + ": " + errText(e.Err)
}

// Unwrap returns the context error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTimeout, or context.DeadlineExceeded
// for a context's deadline (not the watchdog nor the AbortTimeout), even
// when the context carries a cause (Err is then the cause).
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || (target == context.DeadlineExceeded && !e.Watchdog && !e.abortTimeout)
}

// SessionSurvives reports whether the worker was left alive.
func (e *TimeoutError) SessionSurvives() bool { return !e.Killed }

// StartTimeoutError reports a worker that did not answer Configure within
// Config.StartTimeout; it was killed. For a remote session it may instead
// report a dial (TCP, TLS, the upgrade) that did not complete within it;
// its chain then holds the *ws.DialError. It matches ErrTimeout, and its
// chain holds the error of the interrupted exchange, which the bound, a
// context deadline, ended: so it matches context.DeadlineExceeded too
// even when the caller's context had none. Tell the two apart with
// errors.As: the caller's own deadline is never a StartTimeoutError.
//
// It is not modified after it is returned; it is safe to read concurrently.
type StartTimeoutError struct {
	// Timeout is the bound that expired.
	Timeout time.Duration
	// Err is the error of the interrupted Configure exchange.
	Err error
}

// Error describes the timeout.
func (e *StartTimeoutError) Error() string {
	var de *ws.DialError
	if errors.As(e.Err, &de) {
		return fmt.Sprintf("monty session: no connection to the remote worker at %s within %v", redact.URL(de.URL), e.Timeout)
	}
	return fmt.Sprintf("monty session: worker did not answer Configure within %v and was killed", e.Timeout)
}

// Unwrap returns the exchange's error.
func (e *StartTimeoutError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTimeout.
func (e *StartTimeoutError) Is(target error) bool { return target == ErrTimeout }

// SessionSurvives reports false: the worker was killed.
func (e *StartTimeoutError) SessionSurvives() bool { return false }

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
	// Err is the context's error (context.Canceled or its cause). Either
	// way the error matches context.Canceled.
	Err error
	// Position is where the feed was suspended when it was aborted
	// (protocol 5); the empty range at 0 when the worker was killed or
	// the child sent no position.
	Position message.SourceRange
}

// Error describes the cancellation.
func (e *CanceledError) Error() string {
	if e.Killed {
		return "monty session: worker killed: " + errText(e.Err)
	}
	return "monty session: turn canceled" + positionSuffix(e.Position) + ": " + errText(e.Err)
}

// Unwrap returns the context error.
func (e *CanceledError) Unwrap() error { return e.Err }

// Is reports whether target is context.Canceled, even when the context
// carries a cause (Err is then the cause).
func (e *CanceledError) Is(target error) bool { return target == context.Canceled }

// SessionSurvives reports whether the worker was left alive.
func (e *CanceledError) SessionSurvives() bool { return !e.Killed }

// ProtocolError reports a worker that broke the protocol: an undecodable
// event, an event that does not fit the request, a ShutdownDump, a wrong
// answer to AbortFeed, or an event sent with no request outstanding. The
// worker is discarded.
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

func errText(err error) string {
	if err == nil {
		return "interrupted"
	}
	return err.Error()
}

// isProtocolViolation reports whether an Error event is the worker's
// rejection of a request, which leaves its state unchanged, rather than
// the outcome of running code.
func isProtocolViolation(e *message.RaisedException) bool {
	return e != nil && e.Type == "RuntimeError" && len(e.Traceback) == 0 &&
		strings.HasPrefix(e.Msg(), "protocol violation: ")
}

// errorOf returns the error a turn-ending event stands for: a
// *PythonError for Error, a *TypeCheckError for TypingError, nil
// otherwise.
func errorOf(ev *message.ChildEvent) error {
	switch b := ev.Body.(type) {
	case *message.Error:
		return &PythonError{Exception: b.Exception}
	case *message.TypingError:
		return &TypeCheckError{Diagnostics: b.Diagnostics}
	}
	return nil
}

// EventError returns the error a turn-ending event stands for: a
// *PythonError for Error, a *TypeCheckError for TypingError, and nil for
// every other event.
func EventError(ev *message.ChildEvent) error {
	if ev == nil {
		return errors.New("monty session: no event")
	}
	return errorOf(ev)
}
