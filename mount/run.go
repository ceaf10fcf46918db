package mount

import (
	"context"
	"time"
)

// result carries an operation's outcome from its goroutine.
type result[T any] struct {
	v   T
	err error
}

// run executes fn, one host filesystem operation, on its own goroutine and
// waits for it, for ctx, or for the table's OpTimeout, whichever comes
// first. On timeout it returns errTimeout and on cancellation a
// canceledError; fn keeps running until its system calls return, and must
// therefore own everything it opens (close it before returning) and not
// touch shared state. fn never starts when ctx is already done.
func run[T any](ctx context.Context, t *Table, op string, fn func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, &canceledError{err: err, notStarted: true}
	}
	ch := make(chan result[T], 1) // buffered: a late result is dropped, not blocked on
	go func() {
		if h := t.hook.Load(); h != nil {
			(*h)(op)
		}
		v, err := fn()
		ch <- result[T]{v, err}
	}()
	timer := time.NewTimer(t.opTimeout)
	defer timer.Stop()
	select {
	case r := <-ch:
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
