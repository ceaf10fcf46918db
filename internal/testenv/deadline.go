package testenv

import (
	"context"
	"sync"
)

// ReachedDeadline is a context whose deadline passes when Reached is
// called: a test ends a turn with a deadline at a chosen point (inside a
// host call) instead of at a time that a loaded machine may not have got
// there by, or got past already. It carries the background context's
// values. Safe for concurrent use.
type ReachedDeadline struct {
	context.Context // the background's values; Done and Err are ours
	done            chan struct{}
	once            sync.Once
}

// NewReachedDeadline returns a ReachedDeadline whose deadline has not
// passed yet.
func NewReachedDeadline() *ReachedDeadline {
	return &ReachedDeadline{Context: context.Background(), done: make(chan struct{})}
}

// Done is closed once Reached has been called.
func (c *ReachedDeadline) Done() <-chan struct{} { return c.done }

// Err is context.DeadlineExceeded once Reached has been called, nil before.
func (c *ReachedDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// Reached lets the deadline pass; calls after the first do nothing.
func (c *ReachedDeadline) Reached() { c.once.Do(func() { close(c.done) }) }
