package pool

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/gomonty/monty/session"
	"github.com/gomonty/monty/worker"
)

// Session is a session on a pool worker. It embeds *session.Session, so
// Run, Feed, the Resume methods, Dump, Load and the rest are called
// directly; Close gives the worker back to the pool instead of stopping
// it.
//
// Like *session.Session, a Session runs one turn at a time on the calling
// goroutine and is not safe for concurrent use, except that Close, Destroy,
// Kill, WorkerID and Pid may be called from any goroutine at any time.
// After Close or Destroy every method of the embedded session fails with an
// error matching session.ErrClosed: the worker it ran on may already serve
// another checkout, and cannot be reached through this Session.
type Session struct {
	*session.Session
	pool        *Pool
	m           *member
	interrupted atomic.Bool
	released    atomic.Bool
}

// WorkerID returns the pool-assigned id of the session's worker. Ids are
// 1, 2, 3, ... in the order workers joined the pool; a worker keeps its id
// across checkouts.
func (s *Session) WorkerID() uint64 { return s.m.id }

// Pid returns the process id of the session's worker.
func (s *Session) Pid() int { return s.m.pid }

// Run is session.Session.Run. A Run that ends because its context ended or
// its deadline passed (a *worker.CanceledError or *worker.TimeoutError) marks
// the session interrupted: its worker is destroyed on Close rather than
// reused, even when the feed was aborted cleanly.
func (s *Session) Run(ctx context.Context, code string, opts ...session.RunOption) (*session.Result, error) {
	r, err := s.Session.Run(ctx, code, opts...)
	s.note(err)
	return r, err
}

// Continue is session.Session.Continue, with Run's interruption rule.
func (s *Session) Continue(ctx context.Context, opts ...session.RunOption) (*session.Result, error) {
	r, err := s.Session.Continue(ctx, opts...)
	s.note(err)
	return r, err
}

func (s *Session) note(err error) {
	if err == nil {
		return
	}
	var (
		te *worker.TimeoutError
		ce *worker.CanceledError
	)
	if errors.As(err, &te) || errors.As(err, &ce) {
		s.interrupted.Store(true)
	}
}

// Close ends the checkout. When the session is idle, its worker alive and
// no Run or Continue was interrupted, the worker is reset (one round trip)
// and returned to the pool, unless it has reached MaxCheckoutsPerWorker
// (then it is recycled) or the pool is closing. In every other case (a
// suspended feed, a crash, a protocol violation, a kill, an interrupted
// turn, a turn still in flight on another goroutine) the worker is
// destroyed and the pool starts a replacement as needed.
//
// Close is idempotent and safe to call from any goroutine; it returns nil.
func (s *Session) Close() error {
	s.pool.release(s, false)
	return nil
}

// Destroy ends the checkout and stops the worker, whatever its state; a
// turn in flight fails with an error matching session.ErrClosed. It is
// idempotent, safe to call from any goroutine, and a no-op after Close.
func (s *Session) Destroy() {
	s.pool.release(s, true)
}
