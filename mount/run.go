package mount

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// result carries an operation's outcome from its goroutine.
type result[T any] struct {
	v        T
	err      error
	panicked *opPanic
}

// opPanic is a panic of an operation's goroutine (a user's fs.FS, most
// likely), carried to the goroutine that waits for the operation and
// panicked again there, where a caller can recover it (a session turns an
// OS handler's panic into a RuntimeError in the sandbox and logs it):
// left on the operation's own goroutine, it would end the process. Its
// text, which a session shows the sandbox, names the operation only; the
// value and stack are for logs (LogValue).
type opPanic struct {
	op    string
	value any
	stack []byte
}

// Error names the operation that panicked.
func (p *opPanic) Error() string { return "mount: the file system panicked during " + p.op }

// LogValue gives logs the panic's value and the stack it was raised on.
func (p *opPanic) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("op", p.op),
		slog.String("value", fmt.Sprint(p.value)),
		slog.String("stack", string(p.stack)),
	)
}

// run executes fn, one host filesystem operation, on its own goroutine and
// waits for it, for ctx, or for the table's OpTimeout, whichever comes
// first. On timeout it returns errTimeout and on cancellation a
// canceledError; fn keeps running until its system calls return, and must
// therefore own everything it opens (close it before returning) and not
// touch shared state. fn never starts when ctx is already done. A panic
// of fn is raised again on the caller's goroutine, as an *opPanic, if the
// caller still waits (and dropped otherwise): it never ends the process
// from fn's goroutine.
func run[T any](ctx context.Context, t *Table, op string, fn func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, &canceledError{err: err, notStarted: true}
	}
	ch := make(chan result[T], 1) // buffered: a late result is dropped, not blocked on
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ch <- result[T]{panicked: &opPanic{op: op, value: p, stack: debug.Stack()}}
			}
		}()
		if h := t.hook.Load(); h != nil {
			(*h)(op)
		}
		v, err := fn()
		ch <- result[T]{v: v, err: err}
	}()
	timer := time.NewTimer(t.opTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.panicked != nil {
			panic(r.panicked)
		}
		return r.v, r.err
	case <-ctx.Done():
		return zero, &canceledError{err: ctx.Err()}
	case <-timer.C:
		return zero, errTimeout
	}
}

// run0 is run for operations without a result value.
func run0(ctx context.Context, t *Table, op string, fn func() error) error {
	_, err := run(ctx, t, op, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}
