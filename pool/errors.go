package pool

import (
	"errors"
	"fmt"
	"time"

	"github.com/gomonty/monty/internal/lastline"
	"github.com/gomonty/monty/protocol"
	"github.com/gomonty/monty/worker"
)

// Sentinels matched (errors.Is) by the pool's errors. Error texts are for
// humans and may change; match with errors.Is and errors.As.
var (
	// ErrClosed is returned by Checkout once Close has begun.
	ErrClosed = errors.New("monty pool: closed")
	// ErrExhausted is matched by every *ExhaustedError.
	ErrExhausted = errors.New("monty pool: no worker available")
	// ErrUnhealthy is matched by every *UnhealthyError.
	ErrUnhealthy = errors.New("monty pool: unhealthy")
)

// ExhaustedError reports a Checkout that gave up because time ran out
// before it had a session: its context ended or CheckoutTimeout passed
// while every worker was busy, while its worker was being configured (the
// worker goes back to the pool), or (with Config.Endpoints) during a
// remote start, whether the start was dialling or waiting for its
// Configure's answer. The error is the same wherever the checkout went.
// errors.Is matches ErrExhausted, the context's error
// (context.DeadlineExceeded or context.Canceled) and its cause when it has
// one; for a remote start it cut short, errors.Is and errors.As also see
// that start's error (Start).
//
// It is not modified after it is returned; it is safe to read concurrently.
type ExhaustedError struct {
	// Waited is how long the checkout waited.
	Waited time.Duration
	// Live and Max are the pool's live local workers and their cap
	// (MaxWorkers) when it gave up; both are 0 without local workers
	// (Config.NoLocal).
	Live, Max int
	// Err is why it stopped waiting: the context's error or cause, or
	// context.DeadlineExceeded for CheckoutTimeout.
	Err error
	// Start is the error of the remote start the checkout was in when it
	// gave up (a *ws.DialError while it dialled, a *session.TimeoutError
	// or *session.CanceledError while its Configure was unanswered), nil
	// when it gave up waiting for or configuring a local worker.
	Start error

	ctxErr error // the context's error when Err is its cause
	inHand bool  // it had taken a local worker (given back) when it gave up
}

// Error describes the wait.
func (e *ExhaustedError) Error() string {
	counts := fmt.Sprintf("%d/%d live", e.Live, e.Max)
	if e.Max == 0 {
		counts = "no local workers"
	}
	s := fmt.Sprintf("monty pool: no worker available after %v (%s): %v",
		e.Waited.Round(time.Microsecond), counts, e.Err)
	if e.inHand {
		// Time ran out after a worker was found: not a pool too small.
		s = fmt.Sprintf("monty pool: checkout gave up after %v with a worker in hand, given back (%s): %v",
			e.Waited.Round(time.Microsecond), counts, e.Err)
	}
	if e.Start != nil {
		s += " (during a remote start: " + e.Start.Error() + ")"
	}
	return s
}

// Is reports whether target is ErrExhausted, the context's error when
// the context carried a cause (Err is then the cause), or matched by
// Start.
func (e *ExhaustedError) Is(target error) bool {
	return target == ErrExhausted || (e.ctxErr != nil && target == e.ctxErr) ||
		(e.Start != nil && errors.Is(e.Start, target))
}

// As finds target in Start's chain (Err's is Unwrap's).
func (e *ExhaustedError) As(target any) bool {
	return e.Start != nil && errors.As(e.Start, target)
}

// Unwrap returns the reason the wait stopped.
func (e *ExhaustedError) Unwrap() error { return e.Err }

// SessionSurvives reports false: no session was handed out.
func (e *ExhaustedError) SessionSurvives() bool { return false }

// UnhealthyError reports a pool whose restart cap tripped: more than
// MaxRestarts failures (failed starts, workers dead while idle) within
// RestartWindow. Until Until the pool starts no workers and Checkout fails
// at once.
//
// It is not modified after it is returned; it is safe to read concurrently.
type UnhealthyError struct {
	// Failures is the number of failures in the window when it tripped.
	Failures int
	// Window is the RestartWindow.
	Window time.Duration
	// Until is when the pool tries again.
	Until time.Time
	// Last is the last failure: a start error, or the exit of an idle
	// worker (matching worker.ErrCrashed, or worker.ErrMemoryLimit for
	// exit status 65, and naming the worker's last stderr line).
	Last error
}

// Error describes the trip.
func (e *UnhealthyError) Error() string {
	s := fmt.Sprintf("monty pool: unhealthy: %d worker failures within %v; retrying at %s",
		e.Failures, e.Window, e.Until.Format(time.RFC3339Nano))
	if e.Last != nil {
		s += ": last: " + e.Last.Error()
	}
	return s
}

// Is reports whether target is ErrUnhealthy.
func (e *UnhealthyError) Is(target error) bool { return target == ErrUnhealthy }

// Unwrap returns the last failure.
func (e *UnhealthyError) Unwrap() error { return e.Last }

// SessionSurvives reports false: no session was handed out.
func (e *UnhealthyError) SessionSurvives() bool { return false }

// idleExitError describes a worker that exited while idle. It is a crash:
// it matches worker.ErrCrashed, or worker.ErrMemoryLimit when the worker
// exited with status 65, as the errors of a session's worker do.
type idleExitError struct {
	id     uint64
	pid    int
	exit   string
	oom    bool   // exit status 65: the allocator ceiling
	stderr string // the tail of the worker's stderr
}

// newIdleExitError describes m's exit; what, when non-empty, replaces the
// exit status in the text.
func newIdleExitError(m *member, what string) *idleExitError {
	exit, ok := m.proc.Exit()
	if what == "" {
		what = exit.String()
	}
	return &idleExitError{id: m.id, pid: m.pid, exit: what, oom: ok && exit.Code == int(protocol.ExitOOM),
		stderr: m.proc.Stderr()}
}

func (e *idleExitError) Error() string {
	s := fmt.Sprintf("monty pool: idle worker %d (pid %d) exited: %s", e.id, e.pid, e.exit)
	if line := lastline.Of(e.stderr); line != "" {
		s += ": stderr: " + line
	}
	return s
}

// Is reports whether target is worker.ErrMemoryLimit (exit status 65) or
// worker.ErrCrashed (any other exit).
func (e *idleExitError) Is(target error) bool {
	if e.oom {
		return target == worker.ErrMemoryLimit
	}
	return target == worker.ErrCrashed
}
